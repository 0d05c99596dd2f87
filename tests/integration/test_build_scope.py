"""What a recipe edit reruns: which files to collect belongs to the package stage, so
correcting it re-collects without recompiling (the fake build scripts count their runs)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.fixture import FakeTools
from tests.integration.conftest import build
from tests.integration.upstream import Upstream, write_recipe


def compiles(project: Path, tree: str) -> int:
    counter = project / "build/synthetic/src" / tree / "Release/compile-count"
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def edit_recipe(project: Path, old: str, new: str) -> None:
    recipe = project / "recipes/synthetic.yaml"
    text = recipe.read_text()
    assert old in text
    recipe.write_text(text.replace(old, new))


def packages(project: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(
        (project / "artifacts/synthetic/packages.json").read_text()
    )
    return data


def test_changing_only_the_globs_recollects_without_compiling(
    setup: Path, fake_tools: FakeTools
) -> None:
    assert build(setup, fake_tools).rc == 0
    counts = (compiles(setup, "xrt/build"), compiles(setup, "build"))
    edit_recipe(
        setup,
        '["Release/xrt_*-base.deb", "Release/xrt_*-npu.deb"]',
        '["Release/xrt_*-base.deb"]',
    )
    narrowed = build(setup, fake_tools)
    assert narrowed.rc == 1
    assert "build-xrt synthetic: up to date" in narrowed.stdout
    assert "package synthetic: inputs changed: collect.xrt.packages" in narrowed.stdout
    assert "not the set the recipe expects: missing xrt-npu" in narrowed.output
    # which glob, what it collected, and what was built and not collected
    assert (
        "xrt-npu: build.steps[xrt].packages (Release/xrt_*-base.deb) collected "
        "Release/xrt_202520.2.20.0_26.04-amd64-base.deb, none of them xrt-npu; built but not "
        "collected: Release/xrt_202520.2.20.0_26.04-amd64-npu.deb"
    ) in narrowed.output
    edit_recipe(
        setup,
        '["Release/xrt_*-base.deb"]',
        '["Release/xrt_202520.*-base.deb", "Release/xrt_202520.*-npu.deb"]',
    )
    fixed = build(setup, fake_tools)
    assert fixed.rc == 0, fixed.output
    assert "package synthetic: inputs changed: collect.xrt.packages" in fixed.stdout
    assert (compiles(setup, "xrt/build"), compiles(setup, "build")) == counts
    assert "nothing was compiled" in fixed.stdout


def test_two_files_with_one_package_name_are_resolved_by_the_recipe(
    setup: Path, fake_tools: FakeTools
) -> None:
    assert build(setup, fake_tools, "patch", "--target", "synthetic").rc == 0
    (setup / "build/synthetic/src/xrt/RUNTIME_TWINS").write_text("")
    edit_recipe(
        setup,
        '["Release/xrt_*-base.deb", "Release/xrt_*-npu.deb"]',
        '["Release/xrt_*.deb"]',
    )
    refused = build(setup, fake_tools)
    assert refused.rc == 1
    assert (
        "more than one file for xrt-runtime (xrt_202520.2.20.0_26.04-amd64-Runtime.deb, "
        "xrt_202520.2.20.0_26.04-amd64-runtime.deb)"
    ) in refused.output
    assert "add `choose: {xrt-runtime: <glob>}`" in refused.output
    assert '"Release/xrt_202520.2.20.0_26.04-amd64-Runtime.deb"' in refused.output
    assert compiles(setup, "xrt/build") == 1
    # aiebu's assembler and libraries, not aie-rt's CMake configuration
    edit_recipe(
        setup,
        "produces: [xrt-base, xrt-npu]",
        "produces: [xrt-base, xrt-npu, xrt-runtime]\n"
        '      choose: {xrt-runtime: "Release/xrt_*-Runtime.deb"}',
    )
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    assert compiles(setup, "xrt/build") == 1
    assert "build-xrt synthetic: up to date" in outcome.stdout
    record = packages(setup)
    runtime = [p for p in record["packages"] if p["package"] == "xrt-runtime"]  # type: ignore[attr-defined]
    assert [p["file"] for p in runtime] == ["debs/xrt_202520.2.20.0_26.04-amd64-Runtime.deb"]
    assert [Path(p["file"]).name for p in record["left_out"]] == [  # type: ignore[attr-defined]
        "xrt_202520.2.20.0_26.04-amd64-runtime.deb"
    ]
    assert not (
        setup / "artifacts/synthetic/debs/xrt_202520.2.20.0_26.04-amd64-runtime.deb"
    ).exists()
    report = (setup / "artifacts/synthetic/BUILD_REPORT.md").read_text()
    assert "Left out (another file carries the same Package):" in report
    assert "-amd64-runtime.deb` (xrt-runtime, step xrt): not chosen (build.steps[xrt]" in report


def test_a_rerun_reports_the_stages_in_pipeline_order(setup: Path, fake_tools: FakeTools) -> None:
    assert build(setup, fake_tools).rc == 0
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    said = [
        line.split()[0]
        for line in outcome.stdout.splitlines()
        if line.endswith((": up to date", ": runs every time"))
    ]
    assert said == [
        "fetch",
        "patch",
        "deps",
        "build-xrt",
        "build-shim",
        "package",
        "audit",
        "report",
    ]


def test_a_script_with_several_case_arms_on_one_line_is_read_as_bash_reads_it(
    setup: Path, upstream: Upstream, fake_tools: FakeTools
) -> None:
    script = (upstream.root / "xdna-driver/build/build.sh").read_text()
    arms = (
        "    -release) release=1 ;;\n    -debug) release=0 ;;\n    -nokmod) nokmod=1 ;;\n"
        "    -nocmake) nocmake=1 ;;\n"
    )
    assert arms in script
    upstream.commit(
        "xdna-driver",
        {
            "build/build.sh": script.replace(
                arms,
                "    -release) release=1;; -debug) release=0;; -nokmod) nokmod=1;; "
                "-nocmake) nocmake=1;;\n",
            )
        },
        "several arms on one line",
    )
    write_recipe(setup, upstream)
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    assert "does not accept" not in outcome.output
    assert compiles(setup, "build") == 1


def test_a_choice_that_matches_no_file_is_named(setup: Path, fake_tools: FakeTools) -> None:
    assert build(setup, fake_tools, "patch", "--target", "synthetic").rc == 0
    (setup / "build/synthetic/src/xrt/RUNTIME_TWINS").write_text("")
    edit_recipe(
        setup,
        "produces: [xrt-base, xrt-npu]",
        "produces: [xrt-base, xrt-npu, xrt-runtime]\n"
        '      choose: {xrt-runtime: "Release/xrt_*-RUNTIME.deb"}',
    )
    edit_recipe(
        setup, '"Release/xrt_*-npu.deb"]', '"Release/xrt_*-npu.deb", "Release/*untime.deb"]'
    )
    outcome = build(setup, fake_tools)
    assert outcome.rc == 1
    assert (
        "build.steps[xrt].choose.xrt-runtime: Release/xrt_*-RUNTIME.deb matches 0 of the files "
        "carrying it (xrt_202520.2.20.0_26.04-amd64-Runtime.deb, "
        "xrt_202520.2.20.0_26.04-amd64-runtime.deb), not one"
    ) in outcome.output
