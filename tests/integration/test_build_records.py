"""The records and the report tell the truth: every attempt with its log, the recipe the
packages came from, the last failure, modes that follow the umask."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.fixture import FakeTools
from tests.integration.conftest import build, run_doit
from tests.integration.test_build_scope import edit_recipe
from tests.integration.upstream import Upstream
from xdnaforge.planning.toolchain import PYTHON_PROBE
from xdnaforge.stages.build import attempts_seconds

ARTIFACTS = "artifacts/synthetic"


def record(project: Path, name: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((project / ARTIFACTS / f"{name}.json").read_text())
    return data


def report(project: Path) -> str:
    return (project / ARTIFACTS / "BUILD_REPORT.md").read_text()


@pytest.fixture
def umask() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_every_attempt_is_recorded_with_its_own_log(setup: Path, fake_tools: FakeTools) -> None:
    edit_recipe(
        setup,
        "  depends:",
        '  known_test_failures:\n    - test: "[xclbinutil]:xclbintest"\n'
        "      justification: test data missing from a partial mirror\n  depends:",
    )
    assert build(setup, fake_tools, "patch", "--target", "synthetic").rc == 0
    (setup / "build/synthetic/src/xrt/FAIL_TEST").write_text("")
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    xrt = record(setup, "build")["steps"]["xrt"]  # type: ignore[index]
    attempts = xrt["attempts"]
    assert [a["exit_status"] for a in attempts] == [8, 0]
    assert attempts[0]["argv"][-1] == "-disable-werror"
    assert attempts[1]["argv"][-2:] == ["-nocmake", "-noctest"]
    first, second = (Path(a["log"]) for a in attempts)
    assert first != second
    # the compile's log survives the packaging rerun
    assert "xclbintest ...***Failed" in first.read_text()
    assert "packaging done" in second.read_text()
    assert "Test project" not in second.read_text()
    assert all(a["started"] <= a["finished"] for a in attempts)
    text = report(setup)
    assert f"exit status 8, {attempts[0]['started']}" in text
    assert f"log `{first}`" in text
    assert f"log `{second}`" in text


def test_the_report_shows_the_digest_of_the_recipe_the_packages_came_from(
    setup: Path, fake_tools: FakeTools
) -> None:
    assert build(setup, fake_tools).rc == 0
    old = record(setup, "lock")["recipe"]["sha256"]  # type: ignore[index]
    edit_recipe(setup, '"Release/xrt_*-base.deb"', '"Release/xrt_202520.*-base.deb"')
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    new = hashlib.sha256((setup / "recipes/synthetic.yaml").read_bytes()).hexdigest()
    assert new != old
    assert record(setup, "packages")["recipe"]["sha256"] == new  # type: ignore[index]
    text = report(setup)
    assert f"sha256 {new[:12]}" in text
    assert f"compiled with its\nearlier version sha256 {old[:12]}" in text


@pytest.mark.usefixtures("umask")
def test_records_and_the_report_follow_the_umask(setup: Path, fake_tools: FakeTools) -> None:
    assert build(setup, fake_tools).rc == 0
    written = [*(setup / ARTIFACTS).glob("*.json"), *(setup / ARTIFACTS).glob("BUILD_REPORT.*")]
    written.append(setup / "artifacts/BUILD_REPORT.md")
    assert len(written) >= 7
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    os.umask(0o027)
    (setup / ARTIFACTS / "BUILD_REPORT.md").unlink()
    assert build(setup, fake_tools, "report", "--target", "synthetic").rc == 0
    assert stat.S_IMODE((setup / ARTIFACTS / "BUILD_REPORT.md").stat().st_mode) == 0o640


def test_a_failed_attempt_is_said_by_plan_build_and_report(
    setup: Path, fake_tools: FakeTools
) -> None:
    assert build(setup, fake_tools, "patch", "--target", "synthetic").rc == 0
    marker = setup / "build/synthetic/src/xrt/FAIL_PACKAGE"
    marker.write_text("")
    assert build(setup, fake_tools).rc == 1
    failure = record(setup, "failure")
    assert failure["stage"] == "build-xrt"
    failed_log = Path(failure["attempts"][0]["log"])  # type: ignore[index]
    assert "CPack Error" in failed_log.read_text()
    when = str(failure["time"])[:16].replace("T", " ")
    plan = build(setup, fake_tools, "plan", "--target", "synthetic")
    assert f". build-xrt: failed last time at build-xrt ({when} UTC)" in plan.stdout
    assert f". package: never run; the target failed last time at build-xrt ({when}" in (
        plan.stdout
    )
    # install and validate run on request, whatever the build did
    said = [line for line in plan.stdout.splitlines() if "never run (no record)" in line]
    assert [line.split(".")[1].split(":")[0].strip() for line in said] == [
        "install (on request)",
        "validate (on request)",
    ]
    # the failed build refreshed the report
    text = report(setup)
    assert "**Failed last time** at build-xrt" in text
    # the summary says the build ran and failed, not that it did not run
    assert "| build | build-xrt failed after " in text
    assert " s in 1 attempt(s) |" in text
    assert f"log `{failed_log}`" in text
    marker.unlink()
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    assert f"build-xrt synthetic: failed last time at build-xrt ({when} UTC)" in outcome.stdout
    assert not (setup / ARTIFACTS / "failure.json").exists()
    attempts = record(setup, "build")["steps"]["xrt"]["attempts"]  # type: ignore[index]
    # the resumed attempt builds on the failed one's configure: both are this stage's run
    assert [a["exit_status"] for a in attempts] == [2, 0]
    # the time the attempts ran, not the span from the first to the last invocation
    step = record(setup, "build")["steps"]["xrt"]  # type: ignore[index]
    assert step["duration_s"] <= step["span_s"]
    assert step["duration_s"] == attempts_seconds(attempts)
    assert Path(attempts[0]["log"]) == failed_log
    assert "Failed last time" not in report(setup)


def test_plan_and_report_tell_pinned_from_recorded_repositories(
    setup: Path, upstream: Upstream, fake_tools: FakeTools
) -> None:
    before = build(setup, fake_tools, "plan", "--target", "synthetic")
    assert before.rc == 0, before.output
    assert "nested submodules: as their parents record them" in before.stdout
    assert build(setup, fake_tools).rc == 0
    after = build(setup, fake_tools, "plan", "--target", "synthetic")
    aiebu = upstream.heads["aiebu"]
    assert f"    xrt/src/aiebu @ {aiebu} (recorded by its parent; from lock.json)" in after.stdout
    text = report(setup)
    assert "| sources | 3 repositories: 2 pinned by the recipe, 1 recorded by their parents |" in (
        text
    )


SHIM = """#!/bin/bash
# a pyenv shim in miniature: with a version file under $HOME, "its" interpreter answers
# questions about itself (scripts, such as the fake tools, still run); else the system's
if [ -f "$HOME/.pyenv/version" ] && [ "$1" = --version ]; then echo "Python 3.11.7"; exit 0; fi
if [ -f "$HOME/.pyenv/version" ] && [ "$1" = -c ]; then
  echo "Python 3.11.7 ($HOME/.pyenv/versions/3.11.7/bin/python3.11)"; exit 0
fi
exec /usr/bin/python3 "$@"
"""


def test_the_toolchain_records_the_interpreter_the_build_runs(
    setup: Path, fake_tools: FakeTools
) -> None:
    if not Path("/usr/bin/python3").exists():
        pytest.skip("needs /usr/bin/python3 (the 'system' interpreter behind the shim)")
    shims = setup / "home/.pyenv/shims"
    shims.mkdir(parents=True)
    (shims / "python3").write_text(SHIM)
    (shims / "python3").chmod(0o755)
    (setup / "home/.pyenv/version").write_text("3.11.7\n")
    env = {
        **fake_tools.env,
        "PATH": f"{shims}:{fake_tools.env['PATH']}",
        "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS",
    }
    outcome = run_doit(setup, "build", "--target", "synthetic", env=env)
    assert outcome.rc == 0, outcome.output
    system = subprocess.run(
        ["/usr/bin/python3", "-c", PYTHON_PROBE], capture_output=True, text=True, check=True
    ).stdout.strip()
    toolchain = record(setup, "build")["toolchain"]
    # the build's private HOME has no pyenv version file: the shim runs the system python
    assert toolchain["python3"] == system  # type: ignore[index]
    assert "3.11.7" not in toolchain["python3"]  # type: ignore[index]
    assert "(/" in toolchain["gcc"]  # type: ignore[index]


def test_a_failure_of_inputs_since_reverted_is_history(setup: Path, fake_tools: FakeTools) -> None:
    """An edit breaks the package stage; reverting it makes the earlier good record current
    again, so the package stage does not rerun: the failure no longer describes anything."""
    assert build(setup, fake_tools).rc == 0
    good = '["Release/xrt_*-base.deb", "Release/xrt_*-npu.deb"]'
    edit_recipe(setup, good, '["Release/nothing-*.deb"]')
    assert build(setup, fake_tools).rc == 1
    assert record(setup, "failure")["stage"] == "package"
    assert "**Failed last time** at package" in report(setup)
    edit_recipe(setup, '["Release/nothing-*.deb"]', good)
    plan = build(setup, fake_tools, "plan", "--target", "synthetic")
    assert "failed last time" not in plan.stdout
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    assert "package synthetic: up to date" in outcome.stdout
    assert "the target failed last time at package" in outcome.stdout
    assert not (setup / ARTIFACTS / "failure.json").exists()
    assert "Failed last time" not in report(setup)
