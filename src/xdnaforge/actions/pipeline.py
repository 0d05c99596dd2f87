"""The bodies of the doit actions; each turns an expected failure into doit's TaskFailed,
a disk-full or read-only error into one line, and an interruption into its exit status.

Edge module: gathers inputs (records, host facts), calls the pure core, prints or writes.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec

from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain
from doit.exceptions import TaskFailed

from xdnaforge.actions import lazy, tasks
from xdnaforge.actions.target import Target, build_dir_lock, read_host, resolve, workspace
from xdnaforge.compat.observe import observe
from xdnaforge.compat.placement import host_cells
from xdnaforge.config.project import Project
from xdnaforge.errors import EXIT_CONFIG, Interrupted, StageFailed, UsageError, XdnaforgeError
from xdnaforge.install import consent
from xdnaforge.planning.plan import Plan, Stage, stage_status
from xdnaforge.planning.show import format_check, format_plan
from xdnaforge.process import interrupt
from xdnaforge.state import storage
from xdnaforge.state.failure import clear_failure, describe_failure, outdated, record_failure
from xdnaforge.state.lockfile import mark_stage
from xdnaforge.state.paths import Workspace, build_lock
from xdnaforge.state.records import RECORDS, mark_interrupted, read_record

# the stages' modules are imported when a command runs them (see actions/lazy.py)
if TYPE_CHECKING:
    from xdnaforge.compat.resolver import Verdict
    from xdnaforge.install import packages as install_module
    from xdnaforge.stages import audit as stage_audit
    from xdnaforge.stages import build as stage_build
    from xdnaforge.stages import deps as stage_deps
    from xdnaforge.stages import download as stage_download
    from xdnaforge.stages import fetch as stage_fetch
    from xdnaforge.stages import package as stage_package
    from xdnaforge.stages import rebuild as stage_rebuild
    from xdnaforge.stages import rebuild_buildinfo as stage_rebuild_buildinfo
    from xdnaforge.stages import report as stage_report
    from xdnaforge.stages import survey as stage_survey
    from xdnaforge.stages import track as stage_track
else:
    stage_audit = lazy.module("xdnaforge.stages.audit")
    stage_build = lazy.module("xdnaforge.stages.build")
    stage_deps = lazy.module("xdnaforge.stages.deps")
    stage_package = lazy.module("xdnaforge.stages.package")
    stage_rebuild = lazy.module("xdnaforge.stages.rebuild")
    stage_rebuild_buildinfo = lazy.module("xdnaforge.stages.rebuild_buildinfo")
    stage_report = lazy.module("xdnaforge.stages.report")
    stage_fetch = lazy.module("xdnaforge.stages.fetch")
    stage_survey = lazy.module("xdnaforge.stages.survey")
    install_module = lazy.module("xdnaforge.install.packages")
    stage_download = lazy.module("xdnaforge.stages.download")
    stage_track = lazy.module("xdnaforge.stages.track")

P = ParamSpec("P")
StageBody = Callable[[Project, Plan, Workspace], None]


def is_preview(error: XdnaforgeError) -> bool:
    """The refusal install/consent.require raises after showing what a change would run:
    a preview that did what was asked (apt-get -s and debootstrap --print-debs exit 0 too)."""
    return isinstance(error, StageFailed) and (error.hint or "").startswith(
        f"rerun with --yes (or {consent.ALLOW_ENV}=1)"
    )


def guarded(func: Callable[P, Any]) -> Callable[P, TaskFailed | None]:
    """Expected failures become TaskFailed (doit exit 1) with our message, never a traceback;
    bad configuration, an unknown target or a missing tool exits 3, a preview 0."""
    return _guard(func, top=True)


def _guard(func: Callable[P, Any], *, top: bool) -> Callable[P, TaskFailed | None]:
    """`top`: the action of a command the user typed, whose exit code is the command's; a
    stage of the nested run (`doit build`, each `doit matrix` cell) only fails, and the
    command around it says what that means."""

    @functools.wraps(func)
    def action(*args: P.args, **kwargs: P.kwargs) -> TaskFailed | None:
        try:
            with interrupt.signals_interrupt():
                func(*args, **kwargs)
        except XdnaforgeError as error:
            if top and error.exit_code == EXIT_CONFIG:
                # doit has no failure of its own that exits 3 once tasks run: said here, once
                print(str(error), file=sys.stderr, flush=True)
                raise SystemExit(EXIT_CONFIG) from None
            if top and is_preview(error):
                print(str(error), flush=True)
                return None
            # doit prints the TaskFailed message; printing it here too would say it twice
            return TaskFailed(str(error))
        except OSError as error:
            if not storage.is_storage_error(error):
                raise  # anything else is a bug: doit shows the traceback
            return TaskFailed(str(storage.describe(error)))
        except (KeyboardInterrupt, Interrupted) as stop:
            # SystemExit passes doit's runners (they catch Exception) and exits with 128+signal;
            # the innermost action says it, the outer ones (doit build's nested run) let it pass
            stopped = interrupt.as_interrupted(stop)
            raise interrupt.leave(stopped, stopped.what or "the run") from None
        return None

    return action


def stage_body(stage_name: str, plan: Plan) -> StageBody:
    bodies: dict[str, StageBody] = {
        "fetch": stage_fetch.fetch,
        "patch": stage_fetch.patch,
        "deps": stage_deps.deps,
        "package": {
            "prebuilt": stage_package.collect_prebuilt,
            "distro": stage_download.collect_distro,
        }.get(plan.recipe.kind, stage_package.package),
        "audit": stage_audit.audit_target,
        "report": stage_report.report,
    }
    for step in plan.recipe.steps:
        bodies[f"build-{step.name}"] = functools.partial(stage_build.build_step, step=step)
    return bodies[stage_name]


def _fresh(plan: Plan, space: Workspace, stage: Stage) -> tuple[bool, str]:
    recorded = read_record(space.record(stage.record)) if stage.record else None
    failure = read_record(space.record("failure"))
    failed = None
    if failure is not None and outdated(failure, {s.name: s.fingerprint for s in plan.stages}):
        failure = None  # of inputs that are no longer the current ones: history
    if failure is not None:
        if failure.get("stage") == stage.name:
            failed = describe_failure(failure)
        elif recorded is None and stage.record is not None and not stage.on_request:
            failed = f"never run; the target {describe_failure(failure)}"
    fresh, why = stage_status(stage, recorded, failed)
    if fresh and stage.name.startswith("build-"):
        # the record alone is not enough when the tree holding the outputs was replaced
        # (the files it made, as recorded: the recipe's globs are the package stage's input)
        step = next(s for s in plan.recipe.steps if f"build-{s.name}" == stage.name)
        cwd = space.source_tree / step.cwd
        made = (recorded or {}).get("steps", {}).get(step.name, {}).get("files", [])
        if not cwd.is_dir() or not all((cwd / file).is_file() for file in made):
            return False, "its packages are no longer in the build tree"
    return fresh, why


def stage_fresh(target: Target, stage_name: str) -> bool:
    """doit `uptodate`: the stage's record holds the fingerprint the plan computes now."""
    fresh = _fresh(target.plan, target.workspace, target.plan.stage(stage_name))[0]
    if fresh:
        # doit does not report private tasks it skips; said here, in pipeline order (doit
        # asks just before it would run the stage), so "deps: runs every time" stays in place
        print(f"{stage_name} {target.name}: up to date", flush=True)
    return fresh


def run_stage(target: Target, stage_name: str) -> TaskFailed | None:
    """One stage of the nested run, as doit's action."""
    return _guard(_nested_stage, top=False)(target, stage_name)


def _nested_stage(target: Target, stage_name: str) -> None:
    plan, space = target.plan, target.workspace
    stage = plan.stage(stage_name)
    print(f"{stage_name} {target.name}: {_fresh(plan, space, stage)[1]}", flush=True)
    mark_stage(build_lock(target.project.site.build_dir), f"{stage_name}@{target.name}")
    try:
        stage_body(stage_name, plan)(target.project, plan, space)
    except (KeyboardInterrupt, Interrupted) as stop:
        stopped = interrupt.as_interrupted(stop)
        log = space.logs / f"{stage_name}.log"
        if stage.record:
            mark_interrupted(
                space.record(stage.record),
                stage=stage_name,
                signal=stopped.signal_name,
                stopped=stopped.stopped,
                log=log if log.exists() else None,
            )
        stopped.what = f"{stage_name} {target.name}"
        raise stopped from None
    except XdnaforgeError as error:
        attempts = stage_build.pending_attempts(space, stage_name)
        record_failure(space, stage_name, error.message, attempts, stage.fingerprint)
        raise
    clear_failure(space, stage_name)


def _stamps(space: Workspace) -> list[int | None]:
    """When each record was last written, to tell whether a command wrote any."""
    paths = [space.record(name) for name in RECORDS]
    return [p.stat().st_mtime_ns if p.exists() else None for p in paths]


@contextlib.contextmanager
def _refreshing_report(space: Workspace) -> Iterator[None]:
    """Re-render the report when the command wrote a record, even when it then failed."""
    before = _stamps(space)
    try:
        yield
    finally:
        if _stamps(space) != before:
            stage_report.write_report(space.target, space)


def run_chain(
    config: dict[str, Any],
    target: Target,
    stage_name: str,
    extra_config: dict[str, Any] | None = None,
) -> int:
    """Run `_<stage>:<target>` and the stages before it through doit itself (a nested run of
    the tasks actions/tasks.py makes for this resolved target); doit's exit code."""
    namespace = tasks.namespace(config, target, run_stage, stage_fresh)
    main = DoitMain(ModuleTaskLoader(namespace), extra_config=extra_config or {})
    return int(main.run([f"_{stage_name}:{target.name}"]))


@guarded
def run_tasks(
    config: dict[str, Any], project: Project, stage_name: str, target: str, stop_stale: bool
) -> None:
    """`doit fetch|patch|build --target T`: resolve T once, then run its stages up to `stage_name`.

    doit gives a task's command-line parameters to that task only, so `doit build --target T`
    is a thin task that starts doit again on the per-target stage tasks. It holds the build
    directory's lock for the whole run, so two builds never share it.
    """
    resolved = resolve(project, target or None)
    plan, space = resolved.plan, resolved.workspace
    stages = [s.name for s in plan.pipeline()]
    if stage_name not in stages:
        raise UsageError(
            f"{resolved.name} has no {stage_name} stage "
            f"(a {plan.recipe.kind} recipe: {', '.join(stages)})"
        )
    if stage_name == "report":  # doit build: say up front when this host cannot run it
        warning = _compat_warning(resolved)
        if warning:
            print(warning, flush=True)
    with build_dir_lock(project, stop_stale=stop_stale):
        chain = plan.pipeline()[: stages.index(stage_name) + 1]
        fresh = {stage.name for stage in chain if _fresh(plan, space, stage)[0]}
        before = _stamps(space)
        code = run_chain(config, resolved, stage_name)
        # the report stage refreshes the report of a whole build; anything else that wrote
        # a record (`doit fetch`, a failed build) refreshes it here
        if (code != 0 or stage_name != "report") and _stamps(space) != before:
            stage_report.write_report(resolved.name, space)
    if code != 0:
        task = "build" if stage_name == "report" else stage_name
        raise StageFailed(
            f"{task} {resolved.name} failed (exit {code}); the messages above say why"
        )
    builds = [s.name for s in chain if s.name.startswith("build-")]
    if builds and all(b in fresh for b in builds):
        print(f"{resolved.name}: nothing was compiled; every build stage was up to date")


@guarded
def deps(project: Project, target: str, yes: bool) -> None:
    resolved = resolve(project, target or None)
    stage_deps.install_deps(project, resolved.plan, resolved.workspace, yes)


@guarded
def rebuild_check(project: Project, target: str, buildinfo: str = "") -> None:
    """`doit rebuild-check`: a second build at another path, packages compared (with
    --buildinfo: with the digests someone else's .buildinfo records)."""
    resolved = resolve(project, target or None)
    with build_dir_lock(project):
        if buildinfo:
            stage_rebuild_buildinfo.check(
                project, resolved.plan, resolved.workspace, stage_body, buildinfo
            )
            return
        stage_rebuild.rebuild_check(project, resolved.plan, resolved.workspace, stage_body)


@guarded
def audit(project: Project, target: str, deb: list[str], json: str) -> None:
    """`doit audit --deb F...` audits those files; otherwise the target's packages."""
    if deb:
        if target:
            raise UsageError("give either --deb files or --target, not both")
        stage_audit.audit_debs(project, deb, json)
        return
    if json:
        raise UsageError("--json goes with --deb; a target's audit is in artifacts/<target>/")
    # the target's packages as they were built: auditing never triggers a build
    resolved = resolve(project, target or None)
    with build_dir_lock(project), _refreshing_report(resolved.workspace):
        stage_audit.audit_target(project, resolved.plan, resolved.workspace)


@guarded
def report(project: Project, target: str) -> None:
    """Render the report from the records as they are; builds nothing."""
    resolved = resolve(project, target or None)
    print(stage_report.write_report(resolved.name, resolved.workspace), end="")


@guarded
def install(project: Project, target: str, yes: bool, root: str) -> None:
    resolved = resolve(project, target or None)
    with build_dir_lock(project), _refreshing_report(resolved.workspace):
        install_module.install(
            project, resolved.plan, resolved.workspace, Path(root).resolve(), yes
        )


@guarded
def rollback(project: Project, target: str, yes: bool, root: str) -> None:
    resolved = resolve(project, target or None)
    with build_dir_lock(project), _refreshing_report(resolved.workspace):
        install_module.rollback(
            project, resolved.plan, resolved.workspace, Path(root).resolve(), yes
        )


@guarded
def memlock(yes: bool, root: str) -> None:
    install_module.write_memlock(Path(root).resolve(), yes)


@guarded
def check(project: Project) -> None:
    """Loading validated the files (dodo.py fails with exit 3 otherwise); the recipes'
    `driver:` contracts are held against what the compat resolver reads (exit 3 too)."""
    from xdnaforge import yamlfile
    from xdnaforge.compat import contracts
    from xdnaforge.compat.facts import load_upstream
    from xdnaforge.errors import ConfigError, Problem

    upstream = load_upstream()
    problems = []
    for recipe in project.recipes.values():
        found = contracts.check_contract(recipe, upstream)
        if not found:
            continue
        source = recipe.origin.rsplit(":", 1)[0]
        document = yamlfile.load(project.root / source, source)
        for key_path, message in found:
            line, column = document.where(key_path)
            problems.append(
                Problem(
                    source=source,
                    line=line,
                    column=column,
                    key_path=yamlfile.format_path(key_path),
                    message=message,
                    hint="docs/compat.md says what each contract field means",
                )
            )
    if problems:
        print(str(ConfigError(problems)), file=sys.stderr)
        raise SystemExit(3)
    print(format_check(project))
    for recipe in project.recipes.values():
        silent = contracts.unexplained(recipe)
        if silent:
            print(
                f"note: {recipe.origin}: driver contract states nothing of {', '.join(silent)} "
                "(state it, or say why under driver.unknown: compat cannot judge it)"
            )


def _compat_line(target: Target) -> str:
    """Whether the host this runs on can run the recipe: said up front, never blocking (the
    build may be meant for another machine)."""
    from xdnaforge.compat import render

    return render.plan_line(_verdict(target), target.name)


def _compat_warning(target: Target) -> str | None:
    """The warning `doit build` prints when the host it runs on cannot run the recipe."""
    from xdnaforge.compat import render

    return render.build_warning(_verdict(target), target.name)


def _verdict(target: Target) -> Verdict:
    """The compat verdict of the host this runs on, for the target's recipe."""
    from xdnaforge.compat.here import verdict_here

    return verdict_here(target.project.site.sysroot, target.host, [target.plan.recipe])


@guarded
def show_plan(project: Project, target: str) -> None:
    resolved = resolve(project, target or None)
    plan, space, host = resolved.plan, resolved.workspace, resolved.host
    statuses = [_fresh(plan, space, stage) for stage in plan.stages]
    inside, _ = host_cells(project.cells(), host, observe(project.site.sysroot, host=host))
    cells = [c for c in inside if c.recipe == resolved.name]
    lock = read_record(space.record("lock"))
    print(format_plan(plan, statuses, host, cells, project.root, lock))
    if plan.recipe.kind == "source":
        # every repository the pinned tree needs, nested ones read from the mirrors' gitlinks
        from xdnaforge.sources.inventory import format_inventory, inventory

        print(format_inventory(inventory(plan.recipe, project.site)))
    print(_compat_line(resolved))
    surveyed = stage_survey.survey_warnings(space, plan.recipe.digest)
    if surveyed is None:
        print(
            f"survey: none yet (`doit survey --target {resolved.name}` reads the tree "
            "without building)"
        )
    else:
        warnings, stale = surveyed
        note = "; the recipe changed since, run `doit survey` again" if stale else ""
        print(f"survey: {len(warnings)} warning(s){note}")
        for line in warnings:
            print(f"  warning: {line}")


@guarded
def track(
    project: Project,
    line: str,
    branch: str,
    tag: str,
    commit: str,
    check: bool,
    start_from: str,
) -> None:
    """`doit track --line NAME [--branch B | --tag T | --commit C] [--check] [--from R]`."""
    if not line:
        raise UsageError("name the line: doit track --line NAME (recipes/NAME.yaml)")
    if sum(bool(x) for x in (branch, tag, commit)) > 1:
        raise UsageError("give one of --branch, --tag or --commit")
    if commit and (len(commit) != 40 or any(c not in "0123456789abcdef" for c in commit)):
        raise UsageError(f"--commit {commit}: give the full 40-hex commit")
    ref = stage_track.Ref(branch=branch, tag=tag, commit=commit)
    space = workspace(project, line)  # the line may be new: no recipe to resolve yet
    if check:
        stage_track.check(project, line, ref, space.logs / "track.log")
        return
    stage_track.track(project, line, ref, start_from, os.environ, read_host(project))
