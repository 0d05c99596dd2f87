"""The copies dpkg is given are audited again by the installing process; that audit admits."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.debs import deb_bytes, plugin
from xdnaforge.config.project import load_project
from xdnaforge.config.recipe import Recipe
from xdnaforge.errors import StageFailed
from xdnaforge.install.reaudit import admit


@pytest.fixture
def recipe(project_dir: Path) -> Recipe:
    return load_project(project_dir, {}).recipes["ubuntu26-compat"]


def copy(folder: Path, *, nokmod: bool) -> Path:
    path = folder / "xrt_plugin-amdxdna_2.20.1_amd64.deb"
    path.write_bytes(deb_bytes(plugin(nokmod=nokmod)))
    return path


def test_a_clean_copy_is_admitted(
    recipe: Recipe, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    admit(recipe, "T", [copy(tmp_path, nokmod=True)], tmp_path / "scratch")
    assert "audit of the copies to install: 1 package(s), no kernel payload" in (
        capsys.readouterr().out
    )


def test_a_blocked_copy_is_refused_in_one_line_with_its_blocks_shown(
    recipe: Recipe, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(StageFailed) as refused:
        admit(recipe, "T", [copy(tmp_path, nokmod=False)], tmp_path / "scratch")
    assert refused.value.message == (
        "not installing: the copies dpkg would install fail the audit (xrt_plugin-amdxdna), "
        "whatever audit.json says"
    )
    assert "BLOCK xrt_plugin-amdxdna 2.20.1" in capsys.readouterr().out


def test_an_unreadable_copy_is_refused(recipe: Recipe, tmp_path: Path) -> None:
    broken = tmp_path / "xrt-base_2.20.0_amd64.deb"
    broken.write_bytes(b"!<arch>\nnot a package")
    with pytest.raises(StageFailed, match=r"fail the audit \(xrt-base_2.20.0_amd64.deb\)"):
        admit(recipe, "T", [broken], tmp_path / "scratch")
