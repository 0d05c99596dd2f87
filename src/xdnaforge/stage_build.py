"""The deps, build-<step> and package stages: preflight, controlled builds, packages.json.

Edge module. Every build step runs with a private HOME and git configuration (upstream
build.sh runs `git config --global --add safe.directory '*'` on every configure), a fixed
locale, SOURCE_DATE_EPOCH from the pinned commit, the site's ccache, a job count from the
site or from cores and memory, in its own process group with a timeout; its full output
goes to build/<target>/logs/build-<step>.log.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from . import containment, environment, lockfile, storage
from .audit import wants_text
from .buildscript import parse_options
from .debfile import DebContents, DebError, read_deb
from .errors import Interrupted, StepFailed
from .host import choose_jobs, read_host_facts, read_memory_available_kib
from .paths import Workspace
from .plan import Plan
from .progress import Progress
from .project import Project
from .recipe import BuildStep
from .records import read_record, write_atomic, write_record
from .run import PASS_ENV, CommandFailed, run_streaming
from .site import Site
from .tools.ctest import CtestSummary, parse_ctest
from .tools.git import git

CONFIGURED_MARK = "-- Build files have been written to"


def build_environment(space: Workspace, site: Site, epoch: str) -> dict[str, str]:
    home = space.work / "home"
    tmp = space.work / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    site.ccache_dir.mkdir(parents=True, exist_ok=True)
    passed = {k: os.environ[k] for k in os.environ.get(PASS_ENV, "").split() if k in os.environ}
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
        "CCACHE_DIR": str(site.ccache_dir),
        "TERM": "dumb",
    }


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
    log = space.logs / f"build-{step.name}.log"
    epoch = git(
        ["log", "-1", "--format=%ct", "HEAD"], cwd=space.source_tree, log_file=None
    ).stdout.strip()
    spec = plan.environment
    env = build_environment(space, site, epoch)
    # every process of the step inherits these: a later run finds any that outlive this one
    owner = lockfile.held_by_us(site.build_dir / ".lock")
    markers = {
        containment.RUN_VARIABLE: owner.run if owner else f"pid-{os.getpid()}",
        containment.STEP_VARIABLE: f"{stage.name}@{plan.target}",
    }
    contain = site.containment == "pid-namespace"
    wrapper: list[str] = []
    if spec is not None and spec.kind != "host":
        # the step runs inside the recipe's environment: no network, work paths bound in
        env = environment.step_variables(spec, env)
        wrapper = environment.step_wrapper(site, spec, space, cwd)
    accepted = parse_options((cwd / step.argv[0]).read_text(errors="replace"))
    argv = [a.replace("{jobs}", str(_jobs(site))) for a in step.argv]
    state = _state(space)
    attempt = state.get(stage.name, {})
    extra: list[str] = []
    if (
        attempt.get("fingerprint") == stage.fingerprint
        and attempt.get("configured")
        and "-nocmake" in accepted
        and "-nocmake" not in argv
    ):
        # same inputs, configured last time: rerunning cmake would recompile nearly all
        extra.append("-nocmake")
        print(f"  resuming the previous attempt without reconfiguring ({' '.join(extra)})")
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    started = datetime.datetime.now(datetime.UTC)
    progress = Progress(f"build-{step.name}")
    known = {k.name: k.justification for k in plan.recipe.known_test_failures}
    known_seen: list[str] = []
    try:
        try:
            run_streaming(
                [*argv, *extra],
                cwd=cwd,
                env={**env, **markers},
                timeout=step.timeout_minutes * 60,
                log_file=log,
                on_line=progress.update,
                contain=contain,
                wrapper=wrapper,
            )
        except Interrupted:
            # configured before the interruption: the rerun resumes without reconfiguring
            state[stage.name] = {
                "fingerprint": stage.fingerprint,
                "configured": CONFIGURED_MARK in log.read_text(errors="replace"),
            }
            _save_state(space, state)
            progress.done("interrupted")
            raise
        except CommandFailed:
            text = log.read_text(errors="replace")
            state[stage.name] = {
                "fingerprint": stage.fingerprint,
                "configured": CONFIGURED_MARK in text,
            }
            _save_state(space, state)
            summary = parse_ctest(text)
            if summary is None or not summary.failed:
                raise
            unknown = [t for t in summary.failed_tests if t not in known]
            if unknown or not summary.failed_tests or "-noctest" not in accepted:
                raise StepFailed(
                    f"build-{step.name}: ctest failed ({summary.failed} of {summary.total}): "
                    f"{', '.join(summary.failed_tests) or 'see the log'}; upstream's build "
                    "script stops before packaging, so no packages were made",
                    hint=f"log: {log}\nif a failure is known and harmless, list it in "
                    "build.known_test_failures with a justification",
                ) from None
            # every failure is a known one: package without rerunning ctest or cmake
            known_seen = list(summary.failed_tests)
            print(f"  known test failures: {', '.join(known_seen)}; packaging without ctest")
            extra = [o for o in ("-nocmake", "-noctest") if o in accepted]
            run_streaming(
                [*argv, *extra],
                cwd=cwd,
                env={**env, **markers},
                timeout=step.timeout_minutes * 60,
                log_file=log,
                on_line=progress.update,
                contain=contain,
                wrapper=wrapper,
            )
    except (CommandFailed, StepFailed):
        progress.done("failed")
        raise
    finished = datetime.datetime.now(datetime.UTC)
    progress.done("done")
    text = log.read_text(errors="replace")
    files = sorted({str(p.relative_to(cwd)) for g in step.packages for p in cwd.glob(g)})
    if not files:
        raise StepFailed(
            f"build-{step.name} finished but made no file matching {', '.join(step.packages)} "
            f"in {cwd}",
            hint=f"see {log}; check build.steps[{step.name}].packages ({step.origin})",
        )
    state.pop(stage.name, None)
    _save_state(space, state)
    record = read_record(space.record("build")) or {}
    steps = dict(record.get("steps", {}))
    steps[step.name] = {
        "command": [*argv, *extra],
        "cwd": str(cwd),
        "environment": {k: v for k, v in env.items() if k != "PATH"},
        "started": started.isoformat(timespec="seconds"),
        "finished": finished.isoformat(timespec="seconds"),
        "duration_s": round((finished - started).total_seconds(), 1),
        "exit_status": 0,
        "log": str(log),
        "ctest": _ctest_record(parse_ctest(text), step),
        "known_test_failures": [{"test": t, "justification": known[t]} for t in known_seen],
        "files": files,
    }
    host = read_host_facts(site.sysroot)
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


def _entry(deb: DebContents, path: Path, step: str) -> dict[str, Any]:
    """One packages.json entry: what the control file says, not what the file name says."""
    return {
        "file": f"debs/{path.name}",
        "package": deb.package,
        "version": deb.control.get("Version", ""),
        "architecture": deb.control.get("Architecture", ""),
        "size": deb.size,
        "sha256": deb.sha256,
        "step": step,
        "source": str(path),
    }


def _publish(
    plan: Plan, space: Workspace, files: list[Path], entries: list[dict[str, Any]]
) -> None:
    """Swap the packages in, then write packages.json: the stage's last act."""
    stage = plan.stage("package")
    _replace_packages(space, files)
    write_record(
        space.record("packages"),
        "packages",
        {
            "target": plan.target,
            "packages": entries,
            "fingerprints": {"package": stage.fingerprint},
            "inputs": {"package": stage.inputs},
        },
    )
    for entry in entries:
        print(
            f"  {entry['package']} {entry['version']} {entry['architecture']} "
            f"{entry['size']} bytes  {entry['file']}"
        )
    sys.stdout.flush()


def _replace_packages(space: Workspace, files: list[Path]) -> None:
    """Copy into a new directory, then swap: a failure leaves the previous packages in place."""
    staging = space.packages.with_name("debs.new")
    if staging.exists():
        shutil.rmtree(staging)
    # the one place where the space needed is known: say it before copying half of them
    storage.require_space(space.records, files)
    staging.mkdir(parents=True)
    for path in files:
        shutil.copy2(path, staging / path.name)
    if space.packages.exists():
        retired = space.packages.with_name("debs.old")
        if retired.exists():
            shutil.rmtree(retired)
        space.packages.rename(retired)
        staging.rename(space.packages)
        shutil.rmtree(retired)
    else:
        staging.rename(space.packages)


def package(project: Project, plan: Plan, space: Workspace) -> None:
    """Collect each step's .deb files, read their control data, compare with the recipe."""
    del project
    found: list[tuple[Path, str]] = []
    for step in plan.recipe.steps:
        cwd = space.source_tree / step.cwd
        for pattern in step.packages:
            found.extend((p, step.name) for p in sorted(cwd.glob(pattern)))
    entries = []
    names: dict[str, list[str]] = {}
    for path, step_name in found:
        try:
            deb = read_deb(path, wants_text)
        except DebError as error:
            raise StepFailed(f"package: {error.message}") from None
        names.setdefault(deb.package, []).append(path.name)
        entries.append(_entry(deb, path, step_name))
    expected = set(plan.recipe.produced_packages())
    missing = sorted(expected - set(names))
    unexpected = sorted(set(names) - expected)
    doubled = sorted(f"{n} ({', '.join(files)})" for n, files in names.items() if len(files) > 1)
    if missing or unexpected or doubled:
        problems = []
        if missing:
            problems.append(f"missing {', '.join(missing)}")
        if unexpected:
            problems.append(f"unexpected {', '.join(unexpected)}")
        if doubled:
            problems.append(f"more than one file for {'; '.join(doubled)}")
        raise StepFailed(
            f"the built packages are not the set the recipe expects: {'; '.join(problems)}",
            hint="file names are not a contract: the Package fields were compared; adjust "
            "build.steps[].produces or packages in the recipe if upstream changed them",
        )
    _publish(plan, space, [path for path, _ in found], entries)


def collect_prebuilt(project: Project, plan: Plan, space: Workspace) -> None:
    """The package stage of a prebuilt recipe: the vendor's files, each at its pinned sha256."""
    folders = project.site.vendor_dirs
    found: list[tuple[Path, str]] = []
    entries = []
    for item in plan.recipe.prebuilt:
        path = next(
            (folder / item.file for folder in folders if (folder / item.file).is_file()), None
        )
        if path is None:
            raise StepFailed(
                f"{item.file} is not in {', '.join(str(f) for f in folders)}",
                hint="put the vendor bundle's .deb files there, or name their folder in "
                "site.yaml (vendor_dirs)",
            )
        try:
            deb = read_deb(path, wants_text)
        except DebError as error:
            raise StepFailed(f"package: {error.message}") from None
        if item.sha256 != deb.sha256:
            pinned = (
                "does not pin its sha256 yet"
                if item.sha256 == "unpinned"
                else f"pins {item.sha256}"
            )
            raise StepFailed(
                f"{item.file} has sha256 {deb.sha256}; the recipe {pinned}",
                hint="compare the digest with the vendor's published checksums; pin it in "
                f"{plan.recipe.origin.rsplit(':', 1)[0]} only if they agree",
            )
        if deb.package != item.package:
            raise StepFailed(
                f"{item.file} is package {deb.package}, the recipe says {item.package}"
            )
        found.append((path, item.file))
        entries.append(_entry(deb, path, "prebuilt"))
    # every file matched its pinned sha256 above
    _publish(plan, space, [p for p, _ in found], entries)
