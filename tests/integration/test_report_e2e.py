"""Build the synthetic target, validate it on the healthy fake host: the report has it all."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.fixture import FakeTools
from tests.integration.conftest import DEPENDS, run_doit
from tests.integration.npu import npu_host, replay
from tests.integration.upstream import make_upstream, write_recipe

FULL_VALIDATION = """validate:
  gates: [host, memlock, device, runtime, examine, validate, pyxrt]
  xrt_version: "2.20.0"
  thresholds: {gemm_tops_min: 45.0, latency_us_max: 55.0, throughput_ops_min: 70000.0}
  baseline: {gemm_tops: 51.0, latency_us: 46.0, throughput_ops: 80547.0, evidence: recovery}
"""


def test_report_after_build_and_validate_shows_every_section(
    project_dir: Path, fake_tools: FakeTools, tmp_path: Path
) -> None:
    upstream = make_upstream(tmp_path / "upstream")
    recipe = write_recipe(project_dir, upstream)
    recipe.write_text(recipe.read_text().replace("validate:\n  gates: [host]\n", FULL_VALIDATION))
    npu_host(project_dir / "sysroot")
    replay(fake_tools, "healthy-npu4")
    fake_tools.installed(
        {**DEPENDS, "xrt-base": "2.20.0", "xrt-npu": "2.20.0", "xrt_plugin-amdxdna": "2.20.1"}
    )
    env = {**fake_tools.env, "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS"}
    built = run_doit(project_dir, "build", "--target", "synthetic", env=env)
    assert built.rc == 0, built.output
    validated = run_doit(project_dir, "validate", "--target", "synthetic", env=env)
    assert validated.rc == 0, validated.output
    report = (project_dir / "artifacts/synthetic/BUILD_REPORT.md").read_text()
    for section in (
        "## Summary",
        "## Changes since the previous report",
        "## Host",
        "## Sources",
        "## Patches",
        "## Build",
        "## Packages",
        "## Audit: pass",
        "## Install",
        "## Validation: pass",
        "## Kernel",
        "## Benchmarks",
    ):
        assert section in report
    assert "`xrt/src/aiebu`" in report
    assert "Backport [b979d16f2ee91e2343a989d7a63d14baa4be8e4f]" in report
    assert "ctest: 2 passed, 0 failed, 1 skipped, 3 total" in report
    assert "| gemm_tops | 51.0 TOPS | 45.0 | 51.0 |" in report
    assert "| latency_us | 46.0 us | 55.0 | 46.0 |" in report
    assert "| throughput_ops | 80547.0 op/s | 70000.0 | 80547.0 |" in report
    assert "- validation verdict: not run -> pass" in report
