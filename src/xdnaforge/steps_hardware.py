"""The doit action bodies of the commands about the NPU host: validate, doctor, matrix and
the kernel-upgrade ones (kernel-check, revalidate, kernel-hook). Edge module, as steps.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain
from doit.reporter import ConsoleReporter

from . import lazy
from .errors import StepFailed, UsageError, XdnaforgeError
from .host import read_host_facts
from .lockfile import held
from .plan import matching_cells
from .project import Project, load_matrix_file
from .records import read_record
from .steps import guarded, make_plan, resolve_target, workspace

# imported when a command runs them (see lazy.py)
if TYPE_CHECKING:
    from . import kernel_upgrade, stage_matrix, stage_report, stage_validate
else:
    kernel_upgrade = lazy.module("xdnaforge.kernel_upgrade")
    stage_matrix = lazy.module("xdnaforge.stage_matrix")
    stage_report = lazy.module("xdnaforge.stage_report")
    stage_validate = lazy.module("xdnaforge.stage_validate")


@guarded
def validate(project: Project, target: str) -> None:
    name = resolve_target(project, target or None)
    stage_validate.validate(project, make_plan(project, name), workspace(project, name))


@guarded
def doctor(project: Project, target: str, log: list[str]) -> None:
    if log:
        stage_validate.doctor_logs(log)
        return
    unmatched = False
    try:
        name = resolve_target(project, target or None)
        plan = make_plan(project, name)
    except UsageError:
        # any host deserves a diagnosis
        host = read_host_facts(project.site.sysroot)
        cells = matching_cells(project.cells(), host)
        if cells:
            name = cells[0].recipe
            print(
                f"(no supported matrix cell matches this host; it matches {cells[0].name} "
                f"({cells[0].expect}), so the checks use the limits of its recipe {name})"
            )
            plan = make_plan(project, name)
        else:
            # no recipe speaks for this host: check the general requirements, not the
            # limits of a recipe picked at random
            name = sorted(project.recipes)[0]
            plan = stage_validate.without_recipe_limits(make_plan(project, name))
            unmatched = True
    _compat_summary(project)
    stage_validate.doctor(project, plan, workspace(project, name), unmatched=unmatched)


def _build(namespace: dict[str, Any], target: str) -> str | None:
    """Build `target` through doit; the stage that failed, or None when all passed."""
    failed: list[str] = []

    class Reporter(ConsoleReporter):  # type: ignore[misc]
        """doit's console output, remembering which task failed (the matrix judges it)."""

        def add_failure(self, task: Any, fail: Any) -> None:
            failed.append(str(task.name))
            super().add_failure(task, fail)

    code: int = DoitMain(
        ModuleTaskLoader(namespace), extra_config={"GLOBAL": {"reporter": Reporter}}
    ).run([f"_report:{target}"])
    if code == 0:
        return None
    # private stage tasks are named _<stage>:<target>
    stages = [name.split(":", 1)[0].removeprefix("_") for name in failed]
    return stages[0] if stages else "build"


def _validate_ok(project: Project, target: str, root_report: Path | None = None) -> bool:
    try:
        stage_validate.validate(
            project, make_plan(project, target), workspace(project, target), root_report
        )
    except XdnaforgeError as error:
        print(f"validate {target}: {error.message.splitlines()[0]}")
        return False
    return True


def _validation(project: Project, target: str) -> dict[str, Any] | None:
    """Validate `target`; the validation.json this run wrote (None if it wrote none: a
    record left by an earlier run says nothing about this one)."""
    path = workspace(project, target).record("validation")
    before = read_record(path)
    _validate_ok(project, target)
    after = read_record(path)
    return after if after is not None and after != before else None


@guarded
def matrix(namespace: dict[str, Any], project: Project, matrix: str, stop_stale: bool) -> None:
    cells = load_matrix_file(project, Path(matrix)).cells if matrix else project.cells()
    with held(
        project.site.build_dir / ".lock",
        f"the build directory {project.site.build_dir}",
        stop_stale=stop_stale,
    ):
        stage_matrix.run_matrix(
            project,
            cells,
            build=lambda target: _build(namespace, target),
            validate=lambda target: _validation(project, target),
            workspace=lambda target: workspace(project, target),
        )


@guarded
def kernel_check(project: Project, kernel: str) -> None:
    print(kernel_upgrade.decide(project, kernel or None).message)
    if kernel:
        from .compat import facts, observe, resolver

        host = observe.observe(project.site.sysroot)
        print(resolver.after_kernel(host, kernel, facts.load_upstream()))


def _compat_summary(project: Project) -> None:
    """The compat verdict of the live host, for doctor (it never decides doctor's exit)."""
    from .compat import facts, observe, render, resolver

    verdict = resolver.resolve(
        observe.observe(project.site.sysroot), facts.load_upstream(), list(project.recipes.values())
    )
    print(render.format_verdict(verdict))


@guarded
def revalidate(project: Project, kernel: str, root_validate: str) -> None:
    """The first-boot action: decide, revalidate when that is all it takes, record the outcome.
    `root_validate`: the xrt-smi validate report the boot unit made as root beforehand."""
    decision = kernel_upgrade.decide(project, kernel or None)
    print(decision.message)
    outcome = "not run"
    if decision.kind == "revalidate" and decision.target:
        report = Path(root_validate) if root_validate else None
        outcome = "pass" if _validate_ok(project, decision.target, report) else "fail"
    elif decision.kind == "build":
        outcome = f"needs doit build --target {decision.target}"
    kernel_upgrade.record_decision(project, decision, outcome)
    for target in {t for t in (decision.target, decision.installed) if t}:
        stage_report.write_report(target, workspace(project, target))
    if outcome == "fail":
        raise StepFailed(
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

    from .compat import facts as compat_facts
    from .compat import observe, render, resolver
    from .errors import ConfigError
    from .records import write_atomic

    try:
        host = (
            compat_facts.load_facts(Path(facts)) if facts else observe.observe(project.site.sysroot)
        )
    except ConfigError as error:
        print(str(error), file=sys.stderr)
        raise SystemExit(3) from None
    if target and target not in project.recipes:
        known = ", ".join(sorted(project.recipes))
        raise UsageError(f"unknown target {target!r}; the targets are {known}")
    recipes = [project.recipes[target]] if target else list(project.recipes.values())
    verdict = resolver.resolve(host, compat_facts.load_upstream(), recipes)
    print(render.format_verdict(verdict))
    text = json_module.dumps(verdict.as_record(), indent=1, sort_keys=True) + "\n"
    outputs = [project.site.artifacts_dir / "compat.json"] + ([Path(json)] if json else [])
    for output in outputs:
        output.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(output, text)
    if not verdict.ok:
        raise SystemExit(1)
