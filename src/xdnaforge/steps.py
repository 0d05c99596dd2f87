"""The bodies of the doit actions; each turns an expected failure into doit's TaskFailed.

Edge module: gathers inputs (records, host facts), calls the pure core, prints or writes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec

from doit.exceptions import TaskFailed

from .errors import UsageError, XdnaforgeError
from .host import read_host_facts
from .paths import Workspace
from .plan import Plan, matching_cells, plan_target, stage_status
from .project import Project
from .records import read_record
from .show import format_cells, format_check, format_plan

P = ParamSpec("P")


def guarded(func: Callable[P, Any]) -> Callable[P, TaskFailed | None]:
    """Expected failures become TaskFailed (doit exit 1) with our message, never a traceback."""

    @functools.wraps(func)
    def action(*args: P.args, **kwargs: P.kwargs) -> TaskFailed | None:
        try:
            func(*args, **kwargs)
        except XdnaforgeError as error:
            # doit prints the TaskFailed message; printing it here too would say it twice
            return TaskFailed(str(error))
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
    supported = sorted({c.recipe for c in cells if c.expect == "supported"})
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


def make_plan(project: Project, target: str) -> Plan:
    host = read_host_facts(project.site.sysroot)
    recipe = project.recipes[target]
    distro = (host.distro_id or "unknown", host.distro_version or "unknown")
    return plan_target(
        recipe, project.patches_for(recipe), workspace(project, target), distro=distro, toolchain={}
    )


@guarded
def check(project: Project) -> None:
    """Loading already validated everything (dodo.py fails with exit 3 otherwise)."""
    print(format_check(project))


@guarded
def show_plan(project: Project, target: str) -> None:
    name = resolve_target(project, target or None)
    plan = make_plan(project, name)
    space = workspace(project, name)
    statuses = []
    for stage in plan.stages:
        recorded = read_record(space.record(stage.record)) if stage.record else None
        statuses.append(stage_status(stage, recorded))
    host = read_host_facts(project.site.sysroot)
    cells = [c for c in matching_cells(project.cells(), host) if c.recipe == name]
    print(format_plan(plan, statuses, host, cells, project.root))
