"""`doit rebuild-check`: the synthetic target is reproducible; a build script that embeds the
build path or the time is not, and the file that differs is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.fixture import FakeTools
from tests.integration.conftest import build
from tests.integration.upstream import XRT_BUILD_SH, Upstream, write_recipe

PACKAGED = 'cp ../src/CMake/boostUtil.cmake "$root/opt/xilinx/xrt/lib/build-config-$component.txt"'


def embed(upstream: Upstream, project: Path, line: str) -> None:
    """A new xrt commit whose packaging also writes `line`'s output into the package."""
    script = XRT_BUILD_SH.replace(PACKAGED, f"{PACKAGED}\n  {line}")
    assert script != XRT_BUILD_SH
    upstream.commit("xrt", {"build/build.sh": script}, "embed something")
    upstream.link("xdna-driver", "xrt", "xrt")
    write_recipe(project, upstream)


def check(project: Path, fakes: FakeTools) -> tuple[str, dict[str, object]]:
    first = build(project, fakes)
    assert first.rc == 0, first.output
    outcome = build(project, fakes, "rebuild-check", "--target", "synthetic")
    assert outcome.rc == 0, outcome.output
    record = json.loads((project / "artifacts/synthetic/rebuild.json").read_text())
    return outcome.stdout, record


def test_synthetic_target_is_reproducible(setup: Path, fake_tools: FakeTools) -> None:
    out, record = check(setup, fake_tools)
    assert "reproducible: yes" in out
    assert record["reproducible"] is True
    assert record["second_build"] == str(setup / "build/rebuild/synthetic")
    assert (setup / "build/rebuild/synthetic/src/xrt/build/Release").is_dir()
    report = (setup / "artifacts/synthetic/BUILD_REPORT.md").read_text()
    assert "| reproducible | yes |" in report


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ('pwd > "$root/opt/xilinx/xrt/lib/where-$component.txt"', "where"),
        ('date +%s%N > "$root/opt/xilinx/xrt/lib/when-$component.txt"', "when"),
    ],
)
def test_embedded_path_or_time_is_named(
    setup: Path, upstream: Upstream, fake_tools: FakeTools, line: str, what: str
) -> None:
    embed(upstream, setup, line)
    out, record = check(setup, fake_tools)
    assert "reproducible: no (2 files)" in out, out
    assert f"xrt-base: opt/xilinx/xrt/lib/{what}-base.txt" in out
    assert record["differing_files"] == 2
    differing = {p["package"]: p["differing"] for p in record["packages"]}  # type: ignore[attr-defined]
    assert differing["xrt-npu"] == [f"opt/xilinx/xrt/lib/{what}-npu.txt"]
    assert differing["xrt_plugin-amdxdna"] == []
    report = (setup / "artifacts/synthetic/BUILD_REPORT.md").read_text()
    assert "| reproducible | no (2 files) |" in report


def test_rebuild_check_needs_a_build_first(setup: Path, fake_tools: FakeTools) -> None:
    outcome = build(setup, fake_tools, "rebuild-check", "--target", "synthetic")
    assert outcome.rc == 1
    assert "no up-to-date build to compare with" in outcome.output
    assert "Traceback" not in outcome.output
