"""The report from fixed records against a golden file; what changed since the last one."""

from __future__ import annotations

import json
import os
from typing import Any

from tests.conftest import DATA
from xdnaforge.report.build_report import build_model, render_markdown

RECORDS: dict[str, Any] = json.loads((DATA / "report/records.json").read_text())
GOLDEN = DATA / "report/BUILD_REPORT.md"


def test_report_matches_the_golden_file() -> None:
    model = build_model("ubuntu26-compat", RECORDS, None, "2026-11-29T10:30:00+00:00", "0.1.0")
    text = render_markdown(model)
    if os.environ.get("XDNAFORGE_UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()


def test_every_section_is_present_with_the_real_figures() -> None:
    text = GOLDEN.read_text()
    for heading in (
        "## Summary",
        "## Changes since the previous report",
        "## Host",
        "## Sources",
        "## Patches",
        "## Build",
        "## Packages",
        "## Audit: pass",
        "## Install: installed",
        "## Validation: pass",
        "## Kernel",
        "## Benchmarks",
    ):
        assert heading in text
    assert "| gemm_tops | 51.0 TOPS | 45.0 | 51.0 |" in text
    assert "`xrt/src/runtime_src/core/common/aiebu`" in text  # nested submodule listed
    assert "Backport [b979d16f2ee91e2343a989d7a63d14baa4be8e4f]" in text
    assert "ctest: 68 passed, 0 failed, 2 skipped, 70 total" in text


def test_changes_since_the_previous_report() -> None:
    before = build_model("ubuntu26-compat", RECORDS, None, "t0", "0.1.0")
    changed = json.loads(json.dumps(RECORDS))
    changed["packages"]["packages"][0]["sha256"] = "f" * 64
    changed["packages"]["packages"][0]["version"] = "2.20.1"
    changed["lock"]["patches"][1]["sha256"] = "e" * 64
    changed["bench"]["latest_metrics"][0]["value"] = 49.5
    after = build_model("ubuntu26-compat", changed, before, "t1", "0.1.0")
    assert after["changes"] == [
        "patch 0002-utils-h-include-cstdint.patch changed",
        f"package xrt-base rebuilt: 2.20.0 -> 2.20.1 (1a1a1a1a1a1a -> {'f' * 12})",
        "gemm_tops: 51.0 -> 49.5",
    ]
    same = build_model("ubuntu26-compat", RECORDS, before, "t2", "0.1.0")
    assert same["changes"] == ["nothing changed since the previous report"]


def test_the_report_is_deterministic() -> None:
    first = render_markdown(build_model("ubuntu26-compat", RECORDS, None, "t", "0.1.0"))
    again = render_markdown(build_model("ubuntu26-compat", RECORDS, None, "t", "0.1.0"))
    assert first == again


def test_a_twin_build_and_its_rebuild_check_are_said() -> None:
    records = {
        **RECORDS,
        "build": {
            **RECORDS["build"],
            "environment": {
                "name": "ubuntu-26.04",
                "kind": "rootfs",
                "twin": True,
                "description": "ubuntu-26.04 (twin: rootfs of forky from http://deb.debian.org/debian)",
                "env_json_sha256": "ab" * 32,
                "network": "none",
            },
        },
        "rebuild": {"reproducible": False, "differing_files": 2},
    }
    text = render_markdown(build_model("t", records, None, "2026-11-29T10:30:00+00:00", "0.1.0"))
    assert "| environment | ubuntu-26.04 (twin: rootfs of forky" in text
    assert "network none, env.json abababababab |" in text
    assert "Built in a twin" in text
    assert "| reproducible | no (2 files) |" in text


def test_the_reproducibility_line_says_what_was_compared_and_each_cause() -> None:
    records = json.loads(json.dumps(RECORDS))
    records["rebuild"] = {
        "reproducible": False,
        "differing_files": 1,
        "first_build": "/srv/build/t",
        "second_build": "/srv/build/rebuild/t",
        "tree_inside": {"first": "/xdnaforge/work", "second": "/xdnaforge/work"},
        "compared": "the 3 published .deb files of both builds",
        "method": "sha256 of each .deb",
        "packages": [
            {
                "package": "xrt-npu",
                "causes": [
                    {
                        "path": "opt/xilinx/xrt/version.json",
                        "cause": "build date",
                        "detail": "embeds the build time",
                    }
                ],
            }
        ],
    }
    text = render_markdown(build_model("t", records, None, "t0", "0.1.0"))
    assert (
        "| reproducible | no (1 files): the 3 published .deb files of both builds, built in "
        "/srv/build/t and /srv/build/rebuild/t (trees seen at /xdnaforge/work and "
        "/xdnaforge/work; the second with an empty ccache) |"
    ) in text
    assert "Reproducibility: sha256 of each .deb." in text
    assert (
        "| xrt-npu | `opt/xilinx/xrt/version.json` | build date | embeds the build time |" in text
    )
