"""The deps, build-<step> and package stages: preflight, controlled builds, packages.json.

Edge module. Every build step runs with a private HOME and git configuration (upstream
build.sh runs `git config --global --add safe.directory '*'` on every configure), a fixed
locale, SOURCE_DATE_EPOCH from the pinned commit, the site's ccache, a job count from the
site or from cores and memory, in its own process group with a timeout; its full output
goes to build/<target>/logs/build-<step>.log. The build tree is bound at one canonical path
(sandbox.WORK_INSIDE) wherever it lies on the host, and the compilers map that path away
(-ffile-prefix-map), so two builds of the same inputs are the same bytes.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
from pathlib import Path
from typing import Any

from xdnaforge.config.project import Project
from xdnaforge.config.recipe import BuildStep
from xdnaforge.config.site import Site
from xdnaforge.environments import local as environment
from xdnaforge.errors import Interrupted, StageFailed
from xdnaforge.host import choose_jobs, read_memory_available_kib
from xdnaforge.planning.buildscript import parse_options
from xdnaforge.planning.plan import Plan
from xdnaforge.process import containment
from xdnaforge.process.progress import Progress
from xdnaforge.process.run import (
    PASS_ENV,
    CommandFailed,
    bwrap_holds_steps,
    pid_namespace_prefix,
    run_streaming,
)
from xdnaforge.process.sandbox import WORK_INSIDE
from xdnaforge.stages.package import recipe_record
from xdnaforge.state import failure as failure_record
from xdnaforge.state import lockfile
from xdnaforge.state.paths import Workspace, build_lock
from xdnaforge.state.records import read_record, write_atomic, write_record
from xdnaforge.tools.cmake_log import found_pythons
from xdnaforge.tools.ctest import CtestSummary, parse_ctest, related_missing
from xdnaforge.tools.git import git

CONFIGURED_MARK = "-- Build files have been written to"


def build_environment(
    space: Workspace, site: Site, epoch: str, work: Path | None = None
) -> dict[str, str]:
    for folder in (space.work / "home", space.work / "tmp", site.ccache_dir):
        folder.mkdir(parents=True, exist_ok=True)
    return step_environment(space, site, epoch, work)


def prefix_map(work: Path) -> str:
    """The compiler flag that keeps the build tree's path out of objects, debug data and
    `__FILE__` (Debian's dpkg-buildflags does the same for its build directory)."""
    return f"-ffile-prefix-map={work / 'src'}=."


def step_environment(
    space: Workspace, site: Site, epoch: str, work: Path | None = None
) -> dict[str, str]:
    """The environment of a build step, creating nothing (the toolchain probe uses it).
    `work` is where the step sees the build tree (WORK_INSIDE; the host path by default)."""
    host = space.work.resolve()
    seen = work or space.work

    def inside(path: Path) -> Path:
        resolved = path.resolve()
        return seen / resolved.relative_to(host) if resolved.is_relative_to(host) else path

    home = seen / "home"
    tmp = seen / "tmp"
    passed = {k: os.environ[k] for k in os.environ.get(PASS_ENV, "").split() if k in os.environ}
    flags = prefix_map(seen)
    return {
        **passed,
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "SOURCE_DATE_EPOCH": epoch,
        "CCACHE_DIR": str(inside(site.ccache_dir)),
        # CMake takes its first CMAKE_<LANG>_FLAGS from these
        "CFLAGS": " ".join(f for f in (passed.get("CFLAGS"), flags) if f),
        "CXXFLAGS": " ".join(f for f in (passed.get("CXXFLAGS"), flags) if f),
        "TERM": "dumb",
    }


def _tree(site: Site, plan: Plan) -> tuple[Path | None, str]:
    """Where the step sees its build tree, and how: WORK_INSIDE through a bind mount, or the
    host path (None) when no bind is possible, with the reason."""
    spec = plan.environment
    if spec is not None and spec.kind != "host":
        return WORK_INSIDE, f"bind mount inside {spec.name}"
    if site.containment != "pid-namespace":
        return None, f"not bound: site.yaml containment is {site.containment}"
    if not bwrap_holds_steps():
        # the keeper holds the tree instead (process/run.py); it binds nothing
        return None, "not bound: bubblewrap cannot run here"
    return WORK_INSIDE, "bind mount (bubblewrap, host root)"


def _jobs(site: Site) -> int:
    if site.jobs:
        return site.jobs
    return choose_jobs(os.cpu_count() or 1, read_memory_available_kib(Path("/")))


def _state(space: Workspace) -> dict[str, Any]:
    path = space.work / "attempts.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text())
        return data
    except (OSError, ValueError):
        return {}


def _save_state(space: Workspace, state: dict[str, Any]) -> None:
    write_atomic(space.work / "attempts.json", json.dumps(state, indent=2) + "\n")


def pending_attempts(space: Workspace, stage: str) -> list[dict[str, Any]]:
    """The attempts of a stage that has not succeeded yet (for the failure record)."""
    attempts: list[dict[str, Any]] = _state(space).get(stage, {}).get("attempts", [])
    return attempts


def _log_number(path: Path) -> int:
    number = path.name.rsplit(".", 2)[-2]
    return int(number) if number.isdigit() else 0


def _attempt_logs(space: Workspace, step: str) -> list[Path]:
    return sorted(space.logs.glob(f"build-{step}.*.log"), key=_log_number)


def _next_log(space: Workspace, step: str) -> Path:
    """A log of its own for every attempt (a packaging rerun must not overwrite the compile's
    log); build-<step>.log points at the newest, for whoever tails it."""
    number = max((_log_number(p) for p in _attempt_logs(space, step)), default=0) + 1
    log = space.logs / f"build-{step}.{number}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    latest = space.logs / f"build-{step}.log"
    latest.unlink(missing_ok=True)
    latest.symlink_to(log.name)
    return log


def attempts_seconds(attempts: list[dict[str, Any]]) -> float:
    """The time the attempts ran, summed (not the span from the first to the last)."""
    return round(failure_record.attempts_seconds(attempts), 1)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _attempt(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    step: BuildStep,
    space: Workspace,
    progress: Progress,
    attempts: list[dict[str, Any]],
    contain: bool,
    wrapper: list[str],
) -> str:
    """Run one attempt of the step, appending its record to `attempts`; the log's text."""
    log = _next_log(space, step.name)
    entry: dict[str, Any] = {"argv": argv, "started": _now(), "log": str(log)}
    attempts.append(entry)
    try:
        run_streaming(
            argv,
            cwd=cwd,
            env=env,
            timeout=step.timeout_minutes * 60,
            log_file=log,
            on_line=progress.update,
            contain=contain,
            wrapper=wrapper,
        )
    except CommandFailed as error:
        entry["exit_status"] = error.returncode  # None: stopped at the timeout
        raise
    except Interrupted:
        entry["exit_status"] = "interrupted"
        raise
    else:
        entry["exit_status"] = 0
    finally:
        entry["finished"] = _now()
    return log.read_text(errors="replace")


def _debs(cwd: Path) -> list[str]:
    """The .deb files in the step's tree: what the package stage may collect from."""
    return sorted(
        str((Path(root) / name).relative_to(cwd))
        for root, _, names in os.walk(cwd)
        for name in names
        if name.endswith(".deb")
    )


def _ctest_record(summary: CtestSummary | None, step: BuildStep) -> dict[str, Any] | None:
    if summary is None:
        return None
    record: dict[str, Any] = {
        "passed": summary.passed,
        "failed": summary.failed,
        "skipped": summary.skipped,
        "total": summary.total,
        "failed_tests": list(summary.failed_tests),
        "skipped_tests": list(summary.skipped_tests),
    }
    if step.ctest is not None:
        record["expected"] = {"total": step.ctest.total, "skipped": step.ctest.skipped}
        record["as_expected"] = (summary.total, summary.skipped) == (
            step.ctest.total,
            step.ctest.skipped,
        )
    return record


def build_step(project: Project, plan: Plan, space: Workspace, step: BuildStep) -> None:
    stage = plan.stage(f"build-{step.name}")
    site = project.site
    cwd = space.source_tree / step.cwd
    epoch = git(
        ["log", "-1", "--format=%ct", "HEAD"], cwd=space.source_tree, log_file=None
    ).stdout.strip()
    work, how = _tree(site, plan)
    env = build_environment(space, site, epoch, work)
    spec = plan.environment
    wrapper: list[str] = []
    if spec is not None and spec.kind != "host":
        # the step runs inside the recipe's environment: no network, work paths bound in
        env = environment.step_variables(spec, env)
        wrapper = environment.step_wrapper(site, spec, space, cwd)
    elif work is not None:
        # on the host too, the build tree sits at the canonical path
        wrapper = environment.host_wrapper(site, space, cwd, pid_namespace_prefix()[0])  # bwrap
    # every process of the step inherits these: a later run finds any that outlive this one
    owner = lockfile.held_by_us(build_lock(site.build_dir))
    markers = {
        containment.RUN_VARIABLE: owner.run if owner else f"pid-{os.getpid()}",
        containment.STEP_VARIABLE: f"{stage.name}@{plan.target}",
    }
    contain = site.containment == "pid-namespace"
    accepted = parse_options((cwd / step.argv[0]).read_text(errors="replace"))
    argv = [a.replace("{jobs}", str(_jobs(site))) for a in step.argv]
    state = _state(space)
    previous = state.get(stage.name, {})
    same = previous.get("fingerprint") == stage.fingerprint
    # earlier failed attempts with the same inputs belong to this stage run (a resume
    # builds on what they configured), so the record lists them too
    attempts: list[dict[str, Any]] = list(previous.get("attempts", [])) if same else []
    extra: list[str] = []
    if same and previous.get("configured") and "-nocmake" in accepted and "-nocmake" not in argv:
        # same inputs, configured last time: rerunning cmake would recompile nearly all
        extra.append("-nocmake")
        print(f"  resuming the previous attempt without reconfiguring ({' '.join(extra)})")
    progress = Progress(f"build-{step.name}")
    known = {k.name: k.justification for k in plan.recipe.known_test_failures}
    known_seen: list[str] = []
    run = functools.partial(
        _attempt,
        cwd=cwd,
        env={**env, **markers},
        step=step,
        space=space,
        progress=progress,
        attempts=attempts,
        contain=contain,
        wrapper=wrapper,
    )

    def keep_attempts() -> str:
        """After a failed or interrupted attempt: remember its attempts, and whether cmake
        configured (the rerun then resumes without reconfiguring); the attempt's log text."""
        text = Path(attempts[-1]["log"]).read_text(errors="replace")
        state[stage.name] = {
            "fingerprint": stage.fingerprint,
            "configured": bool(same and previous.get("configured")) or CONFIGURED_MARK in text,
            "attempts": attempts,
        }
        _save_state(space, state)
        return text

    try:
        try:
            text = run([*argv, *extra])
        except Interrupted:
            keep_attempts()
            progress.done("interrupted")
            raise
        except CommandFailed:
            text = keep_attempts()
            summary = parse_ctest(text)
            if summary is None or not summary.failed:
                raise
            unknown = [t for t in summary.failed_tests if t not in known]
            if unknown or not summary.failed_tests or "-noctest" not in accepted:
                lock = read_record(space.record("lock")) or {}
                absent = related_missing(
                    summary.failed_tests, lock.get("missing_files") or {}, text
                )
                cause = (
                    f"; the fetch reported {len(absent)} file(s) missing from the mirror that "
                    f"the failed test may need ({', '.join(absent[:3])}"
                    f"{', ...' if len(absent) > 3 else ''}; lock.json missing_files)"
                    if absent
                    else ""
                )
                raise StageFailed(
                    f"build-{step.name}: ctest failed ({summary.failed} of {summary.total}): "
                    f"{', '.join(summary.failed_tests) or 'see the log'}; upstream's build "
                    f"script stops before packaging, so no packages were made{cause}",
                    hint=f"log: {attempts[-1]['log']}\n"
                    + ("fetch from a complete mirror, or, " if absent else "")
                    + "if a failure is known and harmless, "
                    "list it in build.known_test_failures with a justification",
                ) from None
            # every failure is a known one: package without rerunning ctest or cmake
            known_seen = list(summary.failed_tests)
            print(f"  known test failures: {', '.join(known_seen)}; packaging without ctest")
            extra = [o for o in ("-nocmake", "-noctest") if o in accepted]
            ctest_text = text
            text = run([*argv, *extra])
            text = ctest_text + text  # the ctest summary is in the first attempt's log
    except (CommandFailed, StageFailed):
        state[stage.name] = {**state.get(stage.name, {}), "attempts": attempts}
        _save_state(space, state)
        progress.done("failed")
        raise
    progress.done("done")
    state.pop(stage.name, None)
    _save_state(space, state)
    kept = {Path(a["log"]).name for a in attempts}
    for old in _attempt_logs(space, step.name):
        if old.name not in kept:
            old.unlink()  # logs of attempts no record mentions any more
    record = read_record(space.record("build")) or {}
    steps = dict(record.get("steps", {}))
    started = datetime.datetime.fromisoformat(attempts[0]["started"])
    finished = datetime.datetime.fromisoformat(attempts[-1]["finished"])
    steps[step.name] = {
        "command": attempts[-1]["argv"],
        "cwd": str(cwd),
        # where the step saw its build tree: the same path for every build of the target
        "tree": {"host": str(space.work), "inside": str(work or space.work), "how": how},
        "environment": {k: v for k, v in env.items() if k != "PATH"},
        "started": attempts[0]["started"],
        "finished": attempts[-1]["finished"],
        # the attempts' own time; the span also holds the time between invocations
        "duration_s": attempts_seconds(attempts),
        "span_s": round((finished - started).total_seconds(), 1),
        "exit_status": 0,
        "log": attempts[-1]["log"],
        "attempts": attempts,
        "ctest": _ctest_record(parse_ctest(text), step),
        # the interpreters CMake found (pyxrt is built for the one with Development)
        "python": found_pythons(text),
        "known_test_failures": [{"test": t, "justification": known[t]} for t in known_seen],
        "files": _debs(cwd),
    }
    host = plan.host
    body = {
        "target": plan.target,
        # the host the packages were built on (the kernel is informational, not an input)
        "host": {
            "distro": f"{host.distro_id} {host.distro_version}",
            "kernel": host.kernel,
            "npu": ", ".join(
                f"{n.pci} rev {n.revision} ({n.driver or 'unbound'})" for n in host.npus
            )
            or "none",
            "jobs": str(_jobs(site)),
        },
        "recipe": recipe_record(plan.recipe),
        "toolchain": dict(plan.toolchain),
        "environment": _environment_record(site, plan),
        "steps": steps,
        "fingerprints": {**record.get("fingerprints", {}), stage.name: stage.fingerprint},
        "inputs": {**record.get("inputs", {}), stage.name: stage.inputs},
    }
    write_record(space.record("build"), "build", body)


def _environment_record(site: Site, plan: Plan) -> dict[str, Any]:
    """Which environment the steps ran in, named by env.json's digest, and their network."""
    spec = plan.environment
    if spec is None or spec.kind == "host":
        return {"name": "host", "kind": "host", "twin": False, "network": "host"}
    return {
        "name": spec.name,
        "kind": spec.kind,
        "twin": spec.twin,
        "description": spec.describe(),
        "env_json_sha256": environment.record_digest(site, spec),
        # a new network namespace with loopback only (bwrap --unshare-net, --network none)
        "network": "none",
    }
