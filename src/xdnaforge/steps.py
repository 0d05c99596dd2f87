"""The bodies of the doit actions; each turns an expected failure into doit's TaskFailed,
a disk-full or read-only error into one line, and an interruption into its exit status.

Edge module: gathers inputs (records, host facts), calls the pure core, prints or writes.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec

from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain
from doit.exceptions import TaskFailed

from . import interrupt, lazy, storage
from .envspec import choose_environment
from .errors import Interrupted, StepFailed, UsageError, XdnaforgeError
from .failure import clear_failure, describe_failure, outdated, record_failure
from .host import read_host_facts
from .lockfile import held, mark_step
from .matrix import USABLE
from .paths import Workspace
from .plan import Plan, Stage, matching_cells, plan_target, stage_status
from .project import Project
from .records import RECORDS, mark_interrupted, read_record
from .show import format_cells, format_check, format_plan
from .toolchain import query_toolchain

# the stages' modules are imported when a command runs them (see lazy.py)
if TYPE_CHECKING:
    from . import (
        environment,
        stage_audit,
        stage_build,
        stage_deps,
        stage_package,
        stage_rebuild,
        stage_report,
        stage_sources,
        stage_survey,
    )
    from . import install as install_module
else:
    environment = lazy.module("xdnaforge.environment")
    stage_audit = lazy.module("xdnaforge.stage_audit")
    stage_build = lazy.module("xdnaforge.stage_build")
    stage_deps = lazy.module("xdnaforge.stage_deps")
    stage_package = lazy.module("xdnaforge.stage_package")
    stage_rebuild = lazy.module("xdnaforge.stage_rebuild")
    stage_report = lazy.module("xdnaforge.stage_report")
    stage_sources = lazy.module("xdnaforge.stage_sources")
    stage_survey = lazy.module("xdnaforge.stage_survey")
    install_module = lazy.module("xdnaforge.install")

P = ParamSpec("P")
StageBody = Callable[[Project, Plan, Workspace], None]


def guarded(func: Callable[P, Any]) -> Callable[P, TaskFailed | None]:
    """Expected failures become TaskFailed (doit exit 1) with our message, never a traceback."""

    @functools.wraps(func)
    def action(*args: P.args, **kwargs: P.kwargs) -> TaskFailed | None:
        try:
            with interrupt.signals_interrupt():
                func(*args, **kwargs)
        except XdnaforgeError as error:
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


def workspace(project: Project, target: str) -> Workspace:
    return Workspace(target, project.site.build_dir, project.site.artifacts_dir)


def resolve_target(project: Project, target: str | None) -> str:
    """The named target, or the one supported matrix cell this host matches."""
    known = ", ".join(sorted(project.recipes))
    if target:
        if target not in project.recipes:
            raise UsageError(f"unknown target '{target}'", hint=f"targets: {known}")
        return target
    host = read_host_facts(project.site.sysroot)
    cells = matching_cells(project.cells(), host)
    supported = sorted({c.recipe for c in cells if c.expect in USABLE})
    if len(supported) == 1:
        return supported[0]
    if len(supported) > 1:
        raise UsageError(
            f"this host ({host.describe()}) matches several supported targets: "
            f"{', '.join(supported)}",
            hint="choose one with --target",
        )
    matched = f"\nmatching cells that are not supported:\n{format_cells(cells)}" if cells else ""
    raise UsageError(
        f"no supported matrix cell matches this host ({host.describe()}){matched}",
        hint=f"choose a target with --target; targets: {known}\n"
        f"matrix cells:\n{format_cells(project.cells())}",
    )


def make_plan(project: Project, target: str, *, probe: bool = True) -> Plan:
    """The target's plan; `probe=False` skips querying the toolchain (the stage list and
    their order do not depend on it, and `doit list` should not start compilers)."""
    host = read_host_facts(project.site.sysroot)
    recipe = project.recipes[target]
    distro = (host.distro_id or "unknown", host.distro_version or "unknown")
    spec = None
    if recipe.kind != "prebuilt" and recipe.environment is not None:
        # the recipe names where it builds; the site says how this machine provides it
        spec = choose_environment(recipe.environment, distro, project.site.environments)
    if spec is not None and spec.kind != "host":
        distro = recipe.environment or distro
        depends = recipe.depends_for(*distro) or ()
        toolchain = environment.toolchain(project.site, spec, depends) if probe else {}
    else:
        toolchain = _toolchain(project, target, distro) if probe else {}
    return plan_target(
        recipe,
        project.patches_for(recipe),
        workspace(project, target),
        distro=distro,
        toolchain=toolchain,
        environment=spec,
    )


def _toolchain(project: Project, target: str, distro: tuple[str, str]) -> dict[str, str]:
    """The toolchain as a build step of `target` will find it: its environment, its tree."""
    space = workspace(project, target)
    places = (space.source_tree, space.work, project.site.build_dir)
    cwd = next((p for p in places if p.is_dir()), Path.cwd())
    return query_toolchain(
        project.recipes[target].depends_for(*distro),
        stage_build.step_environment(space, project.site, ""),
        cwd,
    )


def stage_body(stage_name: str, plan: Plan) -> StageBody:
    bodies: dict[str, StageBody] = {
        "fetch": stage_sources.fetch,
        "patch": stage_sources.patch,
        "deps": stage_deps.deps,
        "package": (
            stage_package.collect_prebuilt
            if plan.recipe.kind == "prebuilt"
            else stage_package.package
        ),
        "audit": stage_audit.audit_target,
        "report": stage_report.report,
    }
    for step in plan.recipe.steps:
        bodies[f"build-{step.name}"] = functools.partial(stage_build.build_step, step=step)
    return bodies[stage_name]


def _fresh(project: Project, plan: Plan, stage: Stage) -> tuple[bool, str]:
    space = workspace(project, plan.target)
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


def stage_fresh(project: Project, target: str, stage_name: str) -> bool:
    """doit `uptodate`: the stage's record holds the fingerprint the plan computes now."""
    plan = make_plan(project, target)
    fresh = _fresh(project, plan, plan.stage(stage_name))[0]
    if fresh:
        # doit does not report private tasks it skips; said here, in pipeline order (doit
        # asks just before it would run the stage), so "deps: runs every time" stays in place
        print(f"{stage_name} {target}: up to date", flush=True)
    return fresh


@guarded
def run_stage(project: Project, target: str, stage_name: str) -> None:
    plan = make_plan(project, target)
    stage = plan.stage(stage_name)
    space = workspace(project, target)
    print(f"{stage_name} {target}: {_fresh(project, plan, stage)[1]}", flush=True)
    mark_step(project.site.build_dir / ".lock", f"{stage_name}@{target}")
    try:
        stage_body(stage_name, plan)(project, plan, space)
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
        stopped.what = f"{stage_name} {target}"
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


@guarded
def run_tasks(
    namespace: dict[str, Any], project: Project, stage_name: str, target: str, stop_stale: bool
) -> None:
    """Run `_<stage>:<target>` and what it depends on through doit itself (nested run).

    doit gives a task's command-line parameters to that task only, so `doit build --target T`
    is a thin task that starts doit again on the per-target stage tasks. It holds the build
    directory's lock for the whole run, so two builds never share it.
    """
    name = resolve_target(project, target or None)
    plan = make_plan(project, name)
    stages = [s.name for s in plan.pipeline()]
    if stage_name not in stages:
        raise UsageError(
            f"{name} has no {stage_name} stage (a {plan.recipe.kind} recipe: {', '.join(stages)})"
        )
    with held(
        project.site.build_dir / ".lock",
        f"the build directory {project.site.build_dir}",
        stop_stale=stop_stale,
    ):
        chain = plan.pipeline()[: stages.index(stage_name) + 1]
        fresh = {stage.name for stage in chain if _fresh(project, plan, stage)[0]}
        before = _stamps(workspace(project, name))
        code = DoitMain(ModuleTaskLoader(namespace)).run([f"_{stage_name}:{name}"])
        # the report stage refreshes the report of a whole build; anything else that wrote
        # a record (`doit fetch`, a failed build) refreshes it here
        if (code != 0 or stage_name != "report") and _stamps(workspace(project, name)) != before:
            stage_report.write_report(name, workspace(project, name))
    if code != 0:
        task = "build" if stage_name == "report" else stage_name
        raise StepFailed(f"{task} {name} failed (exit {code}); the messages above say why")
    builds = [s.name for s in chain if s.name.startswith("build-")]
    if builds and all(b in fresh for b in builds):
        print(f"{name}: nothing was compiled; every build stage was up to date")


@guarded
def deps(project: Project, target: str, yes: bool) -> None:
    name = resolve_target(project, target or None)
    stage_deps.install_deps(project, make_plan(project, name), workspace(project, name), yes)


@guarded
def rebuild_check(project: Project, target: str) -> None:
    """`doit rebuild-check`: a second build at another path, packages compared."""
    name = resolve_target(project, target or None)
    with held(project.site.build_dir / ".lock", f"the build directory {project.site.build_dir}"):
        plan = make_plan(project, name)
        stage_rebuild.rebuild_check(project, plan, workspace(project, name), stage_body)


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
    name = resolve_target(project, target or None)
    with held(project.site.build_dir / ".lock", f"the build directory {project.site.build_dir}"):
        plan = make_plan(project, name)
        with _refreshing_report(workspace(project, name)):
            stage_audit.audit_target(project, plan, workspace(project, name))


@guarded
def report(project: Project, target: str) -> None:
    """Render the report from the records as they are; builds nothing."""
    name = resolve_target(project, target or None)
    print(stage_report.write_report(name, workspace(project, name)), end="")


def _system_change(project: Project, target: str, root: str) -> tuple[Plan, Workspace, Path]:
    name = resolve_target(project, target or None)
    return make_plan(project, name), workspace(project, name), Path(root).resolve()


@guarded
def install(project: Project, target: str, yes: bool, root: str) -> None:
    plan, space, root_dir = _system_change(project, target, root)
    with (
        held(project.site.build_dir / ".lock", f"the build directory {project.site.build_dir}"),
        _refreshing_report(space),
    ):
        install_module.install(project, plan, space, root_dir, yes)


@guarded
def rollback(project: Project, target: str, yes: bool, root: str) -> None:
    plan, space, root_dir = _system_change(project, target, root)
    with (
        held(project.site.build_dir / ".lock", f"the build directory {project.site.build_dir}"),
        _refreshing_report(space),
    ):
        install_module.rollback(project, plan, space, root_dir, yes)


@guarded
def memlock(yes: bool, root: str) -> None:
    install_module.write_memlock(Path(root).resolve(), yes)


@guarded
def check(project: Project) -> None:
    """Loading already validated everything (dodo.py fails with exit 3 otherwise)."""
    print(format_check(project))


@guarded
def show_plan(project: Project, target: str) -> None:
    name = resolve_target(project, target or None)
    plan = make_plan(project, name)
    statuses = [_fresh(project, plan, stage) for stage in plan.stages]
    host = read_host_facts(project.site.sysroot)
    cells = [c for c in matching_cells(project.cells(), host) if c.recipe == name]
    lock = read_record(workspace(project, name).record("lock"))
    print(format_plan(plan, statuses, host, cells, project.root, lock))
    surveyed = stage_survey.survey_warnings(workspace(project, name), plan.recipe.digest)
    if surveyed is None:
        print(f"survey: none yet (`doit survey --target {name}` reads the tree without building)")
    else:
        warnings, stale = surveyed
        note = "; the recipe changed since, run `doit survey` again" if stale else ""
        print(f"survey: {len(warnings)} warning(s){note}")
        for line in warnings:
            print(f"  warning: {line}")
