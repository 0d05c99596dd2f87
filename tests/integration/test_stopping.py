"""Stopping safely: Ctrl-C, SIGTERM and SIGKILL of the orchestrator during a long build step
leave no process of the step behind, keep the last good records and packages, and a rerun
completes. The slow step (../SLOW_BUILD in the synthetic XRT build.sh) starts a job that
leaves its process group and session, as make's jobs may; its command line carries
"slow-unit <tree>" (the tree as the step sees it, /xdnaforge/work/...), which the tests look
for in /proc, telling this test's step from another's by the fake tools' paths in its
environment."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.fakes.fixture import FakeTools
from tests.integration.conftest import build
from tests.integration.upstream import BOOST_PATCH

XRT = "build/synthetic/src/xrt"


def _pid_namespace() -> str | None:
    """Why an installed bubblewrap cannot make a PID namespace here (None: it can, or it is
    missing, which the tools marker reports, and CI turns into a failure)."""
    argv = ["bwrap", "--dev-bind", "/", "/", "--unshare-pid", "--die-with-parent"]
    try:
        done = subprocess.run(
            [*argv, "--proc", "/proc", "--", "true"], capture_output=True, text=True, check=False
        )
    except OSError:  # not installed (or not executable): the tools marker reports it
        return None
    return None if done.returncode == 0 else f"bwrap refused: {done.stderr.strip()}"


WHY_NOT = _pid_namespace()


def needs_pid_namespace(test: Callable[..., None]) -> Callable[..., None]:
    """Without the namespace xdnaforge falls back (and says so): these tests are about it."""
    refused = pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))
    marked: Callable[..., None] = pytest.mark.tools("bwrap")(refused(test))
    return marked


def step_processes(project: Path) -> list[str]:
    """The living processes of the slow step: its marker is in their command line."""
    # the canonical path through bubblewrap; the host path where no bind mount is possible
    markers = (
        b"slow-unit /xdnaforge/work/src/xrt/build",
        f"slow-unit {project / XRT}/build ".encode(),
    )
    ours = f"FAKE_CALLS={project.parent}/".encode()  # this test's fake tools (tmp_path)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
            mine = any(m in command + b" " for m in markers)
            mine = mine and ours in (entry / "environ").read_bytes()
        except OSError:
            continue
        if mine and state not in {"Z", "X"}:
            found.append(f"{entry.name} {command.decode(errors='replace')}")
    return found


def gone(project: Path, within: float = 5.0) -> list[str]:
    """The step's processes still alive after `within` seconds (dying takes a moment)."""
    deadline = time.monotonic() + within
    while (left := step_processes(project)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def start_slow_build(project: Path, fakes: FakeTools, *markers: str) -> subprocess.Popen[str]:
    """`doit build` in its own process group (as a shell's foreground job), stopped in the
    middle of the slow XRT step, whose job has left the group."""
    for marker in ("SLOW_BUILD", *markers):
        (project / XRT / marker).write_text("")
    env = {
        "PATH": fakes.env["PATH"],
        "HOME": str(project / "home"),
        "LC_ALL": "C.UTF-8",
        "XDNAFORGE_PROJECT_DIR": str(project),
        "XDNAFORGE_SYSROOT": str(project / "sysroot"),
        "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS",
        "FAKE_SCENARIO": fakes.env["FAKE_SCENARIO"],
        "FAKE_CALLS": fakes.env["FAKE_CALLS"],
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "doit", "-f", str(REPO / "dodo.py"), "build", "-t", "synthetic"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not step_processes(project):
        if process.poll() is not None:
            pytest.fail(f"the build ended before its slow step: {process.communicate()}")
        time.sleep(0.1)
    if not step_processes(project):
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("the build never reached its slow step")
    return process


def finish_slowly_built(project: Path, fakes: FakeTools, *args: str) -> str:
    for marker in ("SLOW_BUILD", "IGNORE_TERM"):
        (project / XRT / marker).unlink(missing_ok=True)
    outcome = build(project, fakes, *(args or ("build", "--target", "synthetic")))
    assert outcome.rc == 0, outcome.output
    return outcome.output


def kept(project: Path) -> dict[str, bytes]:
    artifacts = project / "artifacts/synthetic"
    files = {p.name: p.read_bytes() for p in artifacts.glob("debs/*")}
    files.update({n: (artifacts / n).read_bytes() for n in ("packages.json", "audit.json")})
    return files


@pytest.fixture
def built(setup: Path, fake_tools: FakeTools) -> Path:
    """A project built once; then its patch changes, so the next build recompiles XRT."""
    assert build(setup, fake_tools).rc == 0
    patch = setup / "patches/synthetic/0001-boost.patch"
    patch.write_text(BOOST_PATCH.replace("Subject: cmake:", "Subject: cmake (v2):"))
    return setup


@needs_pid_namespace
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_stops_the_whole_step_and_a_rerun_resumes(
    built: Path, fake_tools: FakeTools, signum: signal.Signals, status: int
) -> None:
    before = kept(built)
    steps_before = json.loads((built / "artifacts/synthetic/build.json").read_text())["steps"]
    process = start_slow_build(built, fake_tools)
    # what a terminal does at Ctrl-C: the signal goes to the foreground process group
    os.killpg(process.pid, signum)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == status, stdout + stderr
    assert "Traceback" not in stdout + stderr
    said = [line for line in stderr.splitlines() if line.startswith("interrupted by")]
    assert said == [
        f"interrupted by {signum.name}: stopped build-xrt synthetic (./build.sh -npu -opt ...: "
        "terminated (SIGTERM)); the last good records and packages are kept; "
        "run the same command again to resume"
    ]
    assert gone(built) == []
    assert kept(built) == before
    record = json.loads((built / "artifacts/synthetic/build.json").read_text())
    assert record["steps"] == steps_before
    assert record["interrupted"]["stage"] == "build-xrt"
    assert record["interrupted"]["signal"] == signum.name
    assert record["interrupted"]["log"] == str(built / "build/synthetic/logs/build-xrt.log")
    assert (
        "xdnaforge: interrupted; terminated (SIGTERM)"
        in Path(record["interrupted"]["log"]).read_text()
    )
    output = finish_slowly_built(built, fake_tools)
    assert "build-xrt synthetic: inputs changed" in output
    assert "interrupted" not in json.loads((built / "artifacts/synthetic/build.json").read_text())


@needs_pid_namespace
def test_a_second_ctrl_c_kills_at_once(setup: Path, fake_tools: FakeTools) -> None:
    assert build(setup, fake_tools, "patch", "--target", "synthetic").rc == 0
    process = start_slow_build(setup, fake_tools, "IGNORE_TERM")
    os.killpg(process.pid, signal.SIGINT)
    time.sleep(1)  # inside the 5 s grace: build.sh ignores the SIGTERM it was sent
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stdout + stderr
    assert "killed (SIGKILL) at the second interruption" in stderr
    assert "Traceback" not in stdout + stderr
    assert gone(setup) == []
    finish_slowly_built(setup, fake_tools)


@needs_pid_namespace
def test_sigkill_of_xdnaforge_leaves_no_process_of_the_step(
    built: Path, fake_tools: FakeTools
) -> None:
    before = kept(built)
    process = start_slow_build(built, fake_tools)
    # the OOM killer's way: xdnaforge alone, no chance to clean up
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)
    assert gone(built) == []
    assert kept(built) == before
    finish_slowly_built(built, fake_tools)


def test_without_a_pid_namespace_a_rerun_refuses_then_stops_stale_processes(
    built: Path, fake_tools: FakeTools
) -> None:
    (built / "site.yaml").write_text("containment: process-group\n")
    process = start_slow_build(built, fake_tools)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)
    # the job that left the process group outlives the killed xdnaforge ...
    time.sleep(0.5)
    assert step_processes(built) != []
    # ... and the next run says so instead of building beside it
    refused = build(built, fake_tools)
    assert refused.rc == 1, refused.output
    assert "of stage build-xrt@synthetic of a previous run (pid " in refused.output
    assert "still run in the build directory" in refused.output
    assert "rerun with --stop-stale" in refused.output
    assert step_processes(built) != []
    output = finish_slowly_built(
        built, fake_tools, "build", "--target", "synthetic", "--stop-stale"
    )
    assert "stale process(es) of stage build-xrt@synthetic: killed (SIGKILL)" in output
    assert gone(built) == []
