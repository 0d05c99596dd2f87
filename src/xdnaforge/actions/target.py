"""One command's target, resolved once: its name, the host facts, its plan and its workspace,
computed at the command's start and handed to every stage it runs; and the one helper that
takes the build directory's lock.

Edge module: reads the host facts (host.py) and, for the plan's fingerprints, queries the
toolchain; every other module receives what it computed.
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from xdnaforge.actions import lazy
from xdnaforge.compat.observe import observe
from xdnaforge.compat.placement import host_cells
from xdnaforge.config.envspec import choose_environment
from xdnaforge.config.matrix import USABLE
from xdnaforge.config.project import Project
from xdnaforge.errors import UsageError
from xdnaforge.host import HostFacts, read_host_facts
from xdnaforge.planning.plan import Plan, plan_target
from xdnaforge.planning.show import format_cells
from xdnaforge.planning.toolchain import query_toolchain
from xdnaforge.state import lockfile
from xdnaforge.state.lockfile import Owner
from xdnaforge.state.paths import Workspace

# imported when a command plans with the toolchain (see actions/lazy.py)
if TYPE_CHECKING:
    from xdnaforge.environments import local as environment
    from xdnaforge.stages import build as stage_build
else:
    environment = lazy.module("xdnaforge.environments.local")
    stage_build = lazy.module("xdnaforge.stages.build")


@dataclass(frozen=True, kw_only=True)
class Target:
    """A recipe as one command acts on it. The plan is made on first use and then kept, so a
    command that only names its target (report, publish) starts no compiler, and one that runs
    several stages plans once. `probe=False` plans without querying the toolchain (the stage
    list and order do not depend on it; `doit list` should not start compilers)."""

    project: Project
    name: str
    host: HostFacts
    probe: bool = True

    @functools.cached_property
    def workspace(self) -> Workspace:
        return workspace(self.project, self.name)

    @functools.cached_property
    def plan(self) -> Plan:
        return _plan(self.project, self.name, self.host, probe=self.probe)


def workspace(project: Project, name: str) -> Workspace:
    return Workspace(name, project.site.build_dir, project.site.artifacts_dir)


def read_host(project: Project) -> HostFacts:
    """The host facts under the site's sysroot: read once per command, here."""
    return read_host_facts(project.site.sysroot)


def resolve(
    project: Project, requested: str | None, *, host: HostFacts | None = None, probe: bool = True
) -> Target:
    """The named target, or the one supported matrix cell this host matches."""
    facts = read_host(project) if host is None else host
    return Target(project=project, name=_name(project, requested, facts), host=facts, probe=probe)


def of(project: Project, name: str, host: HostFacts, *, probe: bool = True) -> Target:
    """A target known by name (a matrix cell's recipe, the installed one), on this host."""
    if name not in project.recipes:
        raise UsageError(f"unknown target '{name}'", hint=f"targets: {_known(project)}")
    return Target(project=project, name=name, host=host, probe=probe)


def build_dir_lock(project: Project, *, stop_stale: bool = False) -> AbstractContextManager[Owner]:
    """The build directory's lock: two runs never share build/, the caches or the records."""
    return lockfile.build_dir_lock(project.site.build_dir, stop_stale=stop_stale)


def _known(project: Project) -> str:
    return ", ".join(sorted(project.recipes))


def _name(project: Project, requested: str | None, host: HostFacts) -> str:
    if requested:
        if requested not in project.recipes:
            raise UsageError(f"unknown target '{requested}'", hint=f"targets: {_known(project)}")
        return requested
    # the cell by the driver this host runs (its DRM version), where the compat facts know it
    cells, moved = host_cells(project.cells(), host, observe(project.site.sysroot, host=host))
    supported = sorted({c.recipe for c in cells if c.expect in USABLE})
    if len(supported) == 1:
        for cell in cells:
            if cell.name in moved and cell.recipe == supported[0]:
                print(f"target {supported[0]}: cell {cell.name}, {moved[cell.name]}")
        return supported[0]
    if len(supported) > 1:
        raise UsageError(
            f"this host ({host.describe()}) matches several supported targets: "
            f"{', '.join(supported)}",
            hint="choose one with --target",
        )
    matched = f"\nmatching cells that are not supported:\n{format_cells(cells)}" if cells else ""
    placed = "".join(f"\n{name}: {why}" for name, why in sorted(moved.items()))
    raise UsageError(
        f"no supported matrix cell matches this host ({host.describe()}){matched}{placed}",
        hint=f"choose a target with --target; targets: {_known(project)}\n"
        f"matrix cells:\n{format_cells(project.cells())}",
    )


def _plan(project: Project, name: str, host: HostFacts, *, probe: bool) -> Plan:
    recipe = project.recipes[name]
    distro = (host.distro_id or "unknown", host.distro_version or "unknown")
    spec = None
    if recipe.kind == "source" and recipe.environment is not None:
        # the recipe names where it builds; the site says how this machine provides it
        spec = choose_environment(
            recipe.environment, distro, project.site.environments, recipe.environment_keyring
        )
    if spec is not None and spec.kind != "host":
        distro = recipe.environment or distro
        depends = recipe.depends_for(*distro) or ()
        toolchain = environment.toolchain(project.site, spec, depends) if probe else {}
    else:
        toolchain = _toolchain(project, name, distro) if probe else {}
    return plan_target(
        recipe,
        project.patches_for(recipe),
        workspace(project, name),
        distro=distro,
        toolchain=toolchain,
        environment=spec,
        host=host,
    )


def _toolchain(project: Project, name: str, distro: tuple[str, str]) -> dict[str, str]:
    """The toolchain as a build step of `name` will find it: its environment, its tree."""
    space = workspace(project, name)
    places = (space.source_tree, space.work, project.site.build_dir)
    cwd = next((p for p in places if p.is_dir()), Path.cwd())
    return query_toolchain(
        project.recipes[name].depends_for(*distro),
        stage_build.step_environment(space, project.site, ""),
        cwd,
    )
