"""Build the synthetic target, validate it on the healthy fake host: the report has it all."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.fixture import FakeTools
from tests.integration.browser import Element, rendered
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


def test_the_report_page_draws_the_benchmark_history_against_baseline_and_thresholds(
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
    assert run_doit(project_dir, "build", "--target", "synthetic", env=env).rc == 0
    assert run_doit(project_dir, "validate", "--target", "synthetic", env=env).rc == 0
    # two earlier runs before this one (51.0 TOPS, 46.0 us): a faster and a slower one
    history = project_dir / "artifacts/synthetic/bench/history.jsonl"
    earlier = [
        {"time": "2026-11-01T10:00:00+00:00", "metrics": {"gemm_tops": 53.0, "latency_us": 44.0}},
        {"time": "2026-11-02T10:00:00+00:00", "metrics": {"gemm_tops": 48.0, "latency_us": 50.0}},
    ]
    history.write_text("".join(json.dumps(e) + "\n" for e in earlier) + history.read_text())
    assert run_doit(project_dir, "report", "--target", "synthetic").rc == 0
    records = project_dir / "artifacts/synthetic"
    assert "![benchmark history" in (records / "BUILD_REPORT.md").read_text()
    assert (records / "bench-history.svg").read_text().startswith("<svg")
    page = rendered(records / "BUILD_REPORT.html", tmp_path / "profile")

    def drawn(kind: str, figure: str) -> list[Element]:
        return [e for e in page if e.has_class(kind) and e.attrs.get("data-figure") == figure]

    tops = drawn("run", "gemm_tops")
    assert len(tops) == 3
    # drawn left to right in time order, and a higher figure higher on the screen
    assert [e.box[0] for e in tops] == sorted(e.box[0] for e in tops)
    faster, slower, latest = (e.centre_y for e in tops)
    assert faster < latest < slower
    (baseline,) = drawn("baseline", "gemm_tops")
    (minimum,) = drawn("threshold", "gemm_tops")
    assert abs(baseline.centre_y - latest) <= 2  # this run equals the baseline (51.0)
    assert minimum.centre_y > slower  # 45.0 TOPS: below every run
    latency = drawn("run", "latency_us")
    (maximum,) = drawn("threshold", "latency_us")
    assert maximum.centre_y < min(e.centre_y for e in latency)  # 55 us: above every run
    # the three panels are stacked, each on the page
    panels = [e for e in page if e.tag == "g" and e.has_class("figure")]
    assert len(panels) == 3
    assert [p.box[1] for p in panels] == sorted(p.box[1] for p in panels)
    assert all(p.box[2] > 300 for p in panels)
