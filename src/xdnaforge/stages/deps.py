"""The deps stage and `doit deps`: build dependencies per distro, and the options the pinned
build scripts accept, checked before anything compiles.

Edge module: dpkg-query for what is installed, apt-get (only with --yes) for what is not.
"""

from __future__ import annotations

import os
from pathlib import Path

from xdnaforge.config.envspec import host_mismatch
from xdnaforge.config.project import Project
from xdnaforge.environments import local as environment
from xdnaforge.errors import StageFailed
from xdnaforge.install.consent import require
from xdnaforge.planning.buildscript import parse_options, unknown_options
from xdnaforge.planning.plan import Plan
from xdnaforge.process.run import CommandFailed, run
from xdnaforge.process.sandbox import bwrap_fault
from xdnaforge.state.paths import Workspace
from xdnaforge.tools.dpkg import AptOutcome, install_command, parse_apt_install, query_installed


def _depends(plan: Plan) -> tuple[str, ...]:
    if plan.recipe.kind != "source":
        return ()  # nothing is built from a vendor's or a distribution's packages
    packages = plan.recipe.depends_for(*plan.distro)
    if packages is None:
        known = ", ".join(key for key, _ in plan.recipe.build_depends) or "none"
        raise StageFailed(
            f"recipe {plan.target} has no build dependency list for "
            f"{plan.distro[0]}-{plan.distro[1]} (it has: {known})",
            hint=f"add build.depends.{plan.distro[0]}-{plan.distro[1]} to "
            f"{plan.recipe.origin.rsplit(':', 1)[0]}, or build on a distro it lists",
        )
    return packages


def _wrapper(project: Project, plan: Plan, space: Workspace) -> list[str]:
    """The environment's wrapper ([] on the host); a `host` entry on another distro fails."""
    spec = plan.environment
    if spec is None:
        return []
    host = plan.host
    why = host_mismatch(spec, (host.distro_id or "unknown", host.distro_version or "unknown"))
    if why is not None:
        raise StageFailed(
            f"environment {spec.name}: {why}",
            hint=f"provide {spec.name} as a rootfs (or remove its site.yaml entry: the "
            "default is a rootfs from the distro's archive)",
        )
    return environment.step_wrapper(project.site, spec, space, space.work)


def missing_depends(project: Project, plan: Plan, space: Workspace) -> list[str]:
    packages = _depends(plan)
    wrapper = _wrapper(project, plan, space)
    try:
        installed = query_installed(
            packages, cwd=space.work, log_file=space.logs / "deps.log", wrapper=wrapper
        )
    except CommandFailed as error:
        fault = bwrap_fault(error.output) if wrapper else None
        if fault is None:
            raise
        assert plan.environment is not None
        raise StageFailed(f"environment {plan.environment.name}: {fault}") from None
    return [p for p in packages if p not in installed]


def _check_options(plan: Plan, space: Workspace) -> None:
    """Every option a step passes must exist in the pinned script (never a silent fallback)."""
    for step in plan.recipe.steps:
        script = space.source_tree / step.cwd / step.argv[0]
        if not script.is_file():
            raise StageFailed(
                f"build step {step.name}: {script} does not exist in the pinned tree",
                hint=f"check build.steps ({step.origin})",
            )
        accepted = parse_options(script.read_text(encoding="utf-8", errors="replace"))
        unknown = unknown_options(step.argv, accepted)
        if unknown:
            raise StageFailed(
                f"build step {step.name}: {script.relative_to(space.source_tree)} at the pinned "
                f"commit does not accept {', '.join(unknown)}",
                hint="this userspace line predates the option; pin a line that has it. "
                "xdnaforge never falls back to a build with the kernel module",
            )


def deps(project: Project, plan: Plan, space: Workspace) -> None:
    space.work.mkdir(parents=True, exist_ok=True)
    _check_options(plan, space)
    missing = missing_depends(project, plan, space)
    spec = plan.environment
    if missing and spec is not None and spec.kind != "host":
        raise StageFailed(
            f"missing build dependencies in environment {spec.name}: {', '.join(missing)}",
            hint=f"install them inside it: sudo .venv/bin/doit env --target {plan.target} --yes",
        )
    if missing:
        command = " ".join(install_command(missing))
        raise StageFailed(
            f"missing build dependencies for {plan.distro[0]} {plan.distro[1]}: "
            f"{', '.join(missing)}",
            hint=f"install them: sudo {command}\n(or: doit deps --target {plan.target} --yes)",
        )
    where = f" in {plan.environment.describe()}" if plan.environment else ""
    print(f"  {len(_depends(plan))} build dependencies installed{where}; build options accepted")


def install_deps(project: Project, plan: Plan, space: Workspace, yes: bool) -> None:
    """`doit deps --target T [--yes]`: show, and with authorisation run, the apt-get command."""
    space.work.mkdir(parents=True, exist_ok=True)
    if plan.recipe.kind != "source":
        print(f"{plan.target} is {plan.recipe.kind}: nothing to build, no build dependencies")
        return
    if plan.environment is not None and plan.environment.kind != "host":
        print(
            f"{plan.target} builds in {plan.environment.describe()}: its build dependencies "
            f"are installed there by `doit env --target {plan.target} --yes`"
        )
        return
    missing = missing_depends(project, plan, space)
    if not missing:
        print(f"all build dependencies for {plan.distro[0]} {plan.distro[1]} are installed")
        return
    print(f"missing build dependencies for {plan.distro[0]} {plan.distro[1]}: {', '.join(missing)}")
    argv = install_command(missing)
    if os.geteuid() != 0:
        argv = ["sudo", *argv]
    print(f"+ {' '.join(argv)}")
    require(yes, "not run: installing packages changes the system", "the command above")
    log = space.logs / "deps.log"
    done = run(
        argv,
        cwd=space.work,
        timeout=3600,
        log_file=log,
        env={"DEBIAN_FRONTEND": "noninteractive"},
    )
    print(describe_apt(parse_apt_install(done.stdout), len(missing), log))


def describe_apt(outcome: AptOutcome, asked: int, log: Path) -> str:
    """What apt did, not what was asked of it: upgrades of other packages are changes too."""
    if outcome.summary is None:
        return f"apt-get ran for {asked} package(s); its summary was not found, see {log}"

    def named(names: tuple[str, ...]) -> str:
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        return f" ({shown})" if names else ""

    return (
        f"apt: {len(outcome.installed)} newly installed for the {asked} asked for, "
        f"{len(outcome.upgraded)} upgraded{named(outcome.upgraded)}, "
        f"{len(outcome.removed)} removed{named(outcome.removed)}; log {log}"
    )
