"""Where pyxrt.cpp is in a tree: an XRT tree itself, or an xdna-driver checkout's xrt/."""

from __future__ import annotations

from pathlib import Path

from xdnaforge.sources.xrt_source import PYXRT_CPP, from_tree, in_tree


def test_an_xrt_tree_or_an_xdna_driver_tree_with_its_submodule(tmp_path: Path) -> None:
    driver = tmp_path / "xdna-driver"
    (driver / "xrt" / PYXRT_CPP).parent.mkdir(parents=True)
    (driver / "xrt" / PYXRT_CPP).write_text("// pyxrt\n")
    assert in_tree(driver) == driver / "xrt"
    assert in_tree(driver / "xrt") == driver / "xrt"
    found = from_tree(driver, "the recipe's fetched tree")
    assert found is not None
    assert found.cpp == driver / "xrt" / PYXRT_CPP
    assert found.stub is None  # XRT before 2.20 has no pyxrt.pyi
    assert found.described == f"the recipe's fetched tree {driver / 'xrt'}"


def test_a_tree_without_pyxrt_is_none(tmp_path: Path) -> None:
    assert from_tree(tmp_path, "--source") is None
