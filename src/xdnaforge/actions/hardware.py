"""The doit action bodies of the commands about the NPU host: validate, doctor, matrix and the
kernel-upgrade ones (kernel-check, revalidate, kernel-hook). Edge module, as
actions/pipeline.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdnaforge.actions import lazy, reporter
from xdnaforge.actions.pipeline import guarded, run_chain
from xdnaforge.actions.target import Target, build_dir_lock, of, read_host, resolve
from xdnaforge.compat.placement import host_cells
from xdnaforge.config.project import Project, load_matrix_file
from xdnaforge.errors import EXIT_CONFIG, StageFailed, UsageError, XdnaforgeError
from xdnaforge.host import HostFacts
from xdnaforge.state.records import read_record

# imported when a command runs them (see actions/lazy.py)
if TYPE_CHECKING:
    from xdnaforge.compat.facts import HostCompat
    from xdnaforge.install import kernel_upgrade
    from xdnaforge.install import pyxrt as pyxrt_install
    from xdnaforge.stages import matrix as stage_matrix
    from xdnaforge.stages import report as stage_report
    from xdnaforge.stages import validate as stage_validate
else:
    kernel_upgrade = lazy.module("xdnaforge.install.kernel_upgrade")
    pyxrt_install = lazy.module("xdnaforge.install.pyxrt")
    stage_matrix = lazy.module("xdnaforge.stages.matrix")
    stage_report = lazy.module("xdnaforge.stages.report")
    stage_validate = lazy.module("xdnaforge.stages.validate")


@guarded
def validate(project: Project, target: str) -> None:
    resolved = resolve(project, target or None)
    stage_validate.validate(project, resolved.plan, resolved.workspace)


@guarded
def doctor(project: Project, target: str, log: list[str], json: str = "") -> None:
    if log:
        stage_validate.doctor_logs(log, json)
        return
    host = read_host(project)
    try:
        resolved = resolve(project, target or None, host=host)
        plan = resolved.plan
    except UsageError:
        if target:
            raise  # an unknown --target is the user's mistake (exit 3), not this host's
        # any host deserves a diagnosis
        cells, _ = host_cells(project.cells(), host, _running_driver(project, host))
        if cells:
            resolved = of(project, cells[0].recipe, host)
            print(
                f"(no supported matrix cell matches this host; it matches {cells[0].name} "
                f"({cells[0].expect}), so the checks use the limits of its recipe "
                f"{resolved.name})"
            )
            plan = resolved.plan
        else:
            # no recipe speaks for this host: check the general requirements, not the
            # limits of a recipe picked at random
            resolved = of(project, sorted(project.recipes)[0], host)
            plan = stage_validate.without_recipe_limits(resolved.plan)
            _compat_summary(project, host)
            stage_validate.doctor(project, plan, resolved.workspace, unmatched=True, json_out=json)
            return
    _compat_summary(project, host)
    stage_validate.doctor(project, plan, resolved.workspace, json_out=json)


def _build(config: dict[str, Any], target: Target) -> str | None:
    """Build `target` through doit; the stage that failed, or None when all passed."""
    failed: list[str] = []

    class Reporter(reporter.Reporter):
        """Our console output, remembering which task failed (the matrix judges it)."""

        def add_failure(self, task: Any, fail: Any) -> None:
            failed.append(str(task.name))
            super().add_failure(task, fail)

    # the nested run's DOIT_CONFIG names doit's reporter, and a dodo's config wins over GLOBAL
    code = run_chain({**config, "reporter": Reporter}, target, "report")
    if code == 0:
        return None
    # private stage tasks are named _<stage>:<target>
    stages = [name.split(":", 1)[0].removeprefix("_") for name in failed]
    return stages[0] if stages else "build"


def _validate_ok(target: Target, root_report: Path | None = None) -> bool:
    try:
        stage_validate.validate(target.project, target.plan, target.workspace, root_report)
    except XdnaforgeError as error:
        print(f"validate {target.name}: {error.message.splitlines()[0]}")
        return False
    return True


def _validation(target: Target) -> dict[str, Any] | None:
    """Validate `target`; the validation.json this run wrote (None if it wrote none: a
    record left by an earlier run says nothing about this one)."""
    path = target.workspace.record("validation")
    before = read_record(path)
    _validate_ok(target)
    after = read_record(path)
    return after if after is not None and after != before else None


@guarded
def matrix(config: dict[str, Any], project: Project, matrix: str, stop_stale: bool) -> None:
    cells = load_matrix_file(project, Path(matrix)).cells if matrix else project.cells()
    host = read_host(project)
    # one resolved target per recipe: built and validated with the same plan
    targets: dict[str, Target] = {}

    def target(name: str) -> Target:
        return targets.setdefault(name, of(project, name, host))

    with build_dir_lock(project, stop_stale=stop_stale):
        stage_matrix.run_matrix(
            project,
            host,
            cells,
            build=lambda name: _build(config, target(name)),
            validate=lambda name: _validation(target(name)),
            workspace=lambda name: target(name).workspace,
            compat=_running_driver(project, host),
        )


def _running_driver(project: Project, host: HostFacts) -> HostCompat:
    """The compat facts of the live host: the driver it runs, the firmware on disk."""
    from xdnaforge.compat import observe

    return observe.observe(project.site.sysroot, host=host)


@guarded
def kernel_check(project: Project, kernel: str) -> None:
    host = read_host(project)
    compat = _running_driver(project, host)
    print(kernel_upgrade.decide(project, host, kernel or None, compat).message)
    if kernel:
        from xdnaforge.compat import facts, resolver

        print(resolver.after_kernel(compat, kernel, facts.load_upstream()))


def _compat_summary(project: Project, host: HostFacts) -> None:
    """The compat verdict of the live host, for doctor (it never decides doctor's exit)."""
    from xdnaforge.compat import render
    from xdnaforge.compat.here import verdict_here

    verdict = verdict_here(project.site.sysroot, host, project.recipes_supported_first())
    print(render.format_verdict(verdict))


@guarded
def revalidate(project: Project, kernel: str, root_validate: str) -> None:
    """The first-boot action: decide, revalidate when that is all it takes, record the outcome.
    `root_validate`: the xrt-smi validate report the boot unit made as root beforehand."""
    host = read_host(project)
    decision = kernel_upgrade.decide(project, host, kernel or None, _running_driver(project, host))
    print(decision.message)
    outcome = "not run"
    if decision.kind == "revalidate" and decision.target:
        report = Path(root_validate) if root_validate else None
        validated = _validate_ok(of(project, decision.target, host), report)
        outcome = "pass" if validated else "fail"
    elif decision.kind == "build":
        outcome = f"needs doit build --target {decision.target}"
    kernel_upgrade.record_decision(project, decision, outcome)
    for target in {t for t in (decision.target, decision.installed) if t}:
        stage_report.write_report(target, of(project, target, host, probe=False).workspace)
    if outcome == "fail":
        raise StageFailed(
            f"revalidation for kernel {decision.kernel} failed",
            hint="see the report and validation.json",
        )


@guarded
def kernel_hook(project: Project, dodo_dir: str, install: bool, yes: bool, root: str) -> None:
    if not install:
        target = Path(root).resolve() / kernel_upgrade.HOOK
        state = "installed" if target.exists() else "not installed"
        print(f"kernel hook: {state} ({target}); `doit kernel-hook --install --yes` installs it")
        return
    kernel_upgrade.install_hook(project, Path(dodo_dir), Path(root).resolve(), yes)


@guarded
def compat(project: Project, target: str, facts: str, json: str) -> None:
    """Print (and record) the compat verdict of this host or of a facts file; exit 0/1/3."""
    import json as json_module
    import sys

    from xdnaforge.compat import facts as compat_facts
    from xdnaforge.compat import observe, render, resolver
    from xdnaforge.errors import ConfigError
    from xdnaforge.state.records import write_atomic

    try:
        host = (
            compat_facts.load_facts(Path(facts))
            if facts
            else observe.observe(project.site.sysroot, host=read_host(project))
        )
    except ConfigError as error:
        print(str(error), file=sys.stderr)
        raise SystemExit(3) from None
    if target and target not in project.recipes:
        known = ", ".join(sorted(project.recipes))
        raise UsageError(f"unknown target {target!r}; the targets are {known}")
    recipes = [project.recipes[target]] if target else project.recipes_supported_first()
    verdict = resolver.resolve(host, compat_facts.load_upstream(), recipes)
    print(render.format_verdict(verdict))
    text = json_module.dumps(verdict.as_record(), indent=1, sort_keys=True) + "\n"
    outputs = [project.site.artifacts_dir / "compat.json"] + ([Path(json)] if json else [])
    for output in outputs:
        output.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(output, text)
    if not verdict.ok:
        raise SystemExit(1)


@guarded
def pyxrt(project: Project, target: str, python: str, source: str, yes: bool) -> None:
    """Build pyxrt for one interpreter against the installed stack and install it there.
    Bad input (no interpreter, no stack, no source) exits 3 before anything is built."""
    import sys

    try:
        if not python:
            raise UsageError(
                "doit pyxrt needs --python PATH: the interpreter to build the binding for",
                hint="e.g. `doit pyxrt --python ~/flm/.venv/bin/python`",
            )
        resolved = resolve(project, target or None, probe=False)
        request = pyxrt_install.prepare(
            project.site, project.recipes[resolved.name], resolved.workspace, python, source, yes
        )
    except XdnaforgeError as error:
        if error.exit_code != EXIT_CONFIG:
            raise
        print(str(error), file=sys.stderr)
        raise SystemExit(EXIT_CONFIG) from None
    pyxrt_install.show(request)
    with build_dir_lock(project):
        pyxrt_install.build_and_install(request, resolved.workspace)
    stage_report.write_report(resolved.name, resolved.workspace)
