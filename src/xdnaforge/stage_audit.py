"""Auditing .deb files: any files given on the command line, or a target's built packages.

Edge module: reads each file with debfile, judges it with audit, writes the record.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from . import runtime_container
from .audit import Verdict, Waiver, audit, audit_body, format_verdicts, wants_text
from .audit_host import HostPaths, host_paths
from .debfile import DebError, read_deb
from .errors import StepFailed
from .paths import Workspace
from .plan import Plan
from .project import Project
from .records import read_record, write_atomic, write_record
from .sandbox import WORK_INSIDE


def audit_files(
    files: Sequence[Path], waivers: Sequence[Waiver] = (), host: HostPaths | None = None
) -> tuple[list[Verdict], list[tuple[str, str]]]:
    """Verdicts for the readable files; (file, reason) for the others."""
    verdicts = []
    errors = []
    for file in files:
        try:
            verdicts.append(audit(read_deb(file, wants_text), waivers, host))
        except DebError as error:
            errors.append((str(file), error.message.removeprefix(f"{file}: ")))
    return verdicts, errors


def _conclude(verdicts: list[Verdict], errors: list[tuple[str, str]]) -> None:
    print(format_verdicts(verdicts, errors))
    if errors:
        raise StepFailed(
            f"{len(errors)} file(s) could not be audited: "
            + "; ".join(f"{f}: {r}" for f, r in errors)
        )
    blocked = [v.package for v in verdicts if v.verdict == "block"]
    if blocked:
        raise StepFailed(
            f"kernel payload found in {', '.join(blocked)}",
            hint="these packages must not be installed; build with -nokmod, or waive a rule "
            "in the recipe (audit.waivers: rule, package, justification) if it is a false block",
        )


def _host(project: Project, workspace: Workspace | None = None) -> HostPaths:
    """The directories of this build that no package may point into, most specific first."""
    site = project.site
    named = [(site.build_dir, "the build directory"), (site.ccache_dir, "the ccache directory")]
    # where every build step sees its tree (a bind mount): the path a package would carry
    whose = f"of {workspace.target}" if workspace is not None else "of a target"
    named[:0] = [
        (WORK_INSIDE / "src", f"the source tree {whose}, where its build steps see it"),
        (WORK_INSIDE, f"the build tree {whose}, where its build steps see it"),
    ]
    if workspace is not None:
        named[:0] = [
            (workspace.source_tree, f"the source tree of {workspace.target}"),
            (workspace.work, f"the build tree of {workspace.target}"),
        ]
    return host_paths([*named, (project.root, "the xdnaforge project directory")])


def audit_debs(project: Project, files: Sequence[str], json_out: str) -> None:
    """`doit audit --deb FILE ...`: any packages, no target needed."""
    if not files:
        raise StepFailed("nothing to audit", hint="give --deb FILE (repeatable) or --target T")
    verdicts, errors = audit_files([Path(f) for f in files], host=_host(project))
    if json_out:
        body = audit_body(verdicts, errors)
        write_atomic(Path(json_out), json.dumps(body, indent=2) + "\n")
    _conclude(verdicts, errors)


def audit_target(project: Project, plan: Plan, workspace: Workspace) -> None:
    """The audit stage: every package in packages.json, with the recipe's waivers."""
    stage = plan.stage("audit")
    packages = read_record(workspace.record("packages"))
    if packages is None:
        raise StepFailed(
            f"no packages.json for {plan.target}",
            hint=f"run `doit build --target {plan.target}` first",
        )
    waivers = [
        Waiver(rule=w.name, package=w.package or "", justification=w.justification)
        for w in plan.recipe.waivers
    ]
    files = [workspace.records / entry["file"] for entry in packages.get("packages", [])]
    verdicts, errors = audit_files(files, waivers, _host(project, workspace))
    recorded = {e["file"]: e["sha256"] for e in packages.get("packages", [])}
    for verdict in verdicts:
        name = str(Path(verdict.file).relative_to(workspace.records))
        if recorded.get(name) != verdict.sha256:
            errors.append(
                (
                    verdict.file,
                    f"sha256 {verdict.sha256} differs from "
                    f"{recorded.get(name)} in packages.json (changed after packaging)",
                )
            )
    body = audit_body(verdicts, errors)
    for entry in body["packages"]:  # type: ignore[attr-defined]
        entry["file"] = str(Path(entry["file"]).relative_to(workspace.records))
    body["target"] = plan.target
    body["waivers"] = [
        {"rule": w.rule, "package": w.package, "justification": w.justification} for w in waivers
    ]
    # a blocked or unreadable set is recorded (install reads it and refuses), but without
    # a fingerprint, so the stage is never "up to date" with a failing verdict
    passed = body["verdict"] == "pass"
    body["fingerprints"] = {"audit": stage.fingerprint} if passed else {}
    body["inputs"] = {"audit": stage.inputs}
    write_record(workspace.record("audit"), "audit", body)
    if passed and plan.recipe.hosts.runtime == "container":
        _write_runtime_container(plan, workspace, body)
    _conclude(verdicts, errors)


def _write_runtime_container(plan: Plan, workspace: Workspace, audit: dict[str, object]) -> None:
    """Hosts that run userspace in a container get the image of exactly these packages."""
    folder = workspace.records / runtime_container.FOLDER
    recipe = plan.recipe
    try:
        files = {
            "Containerfile": runtime_container.containerfile(recipe, audit),
            "README.md": runtime_container.readme(recipe, audit),
        }
    except ValueError as error:
        raise StepFailed(
            f"cannot write the runtime container of {plan.target}: {error}",
            hint="install.order must name packages that the audit passed",
        ) from None
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write_atomic(folder / name, text)
    print(f"runtime container: {folder / 'Containerfile'}")
    for line in runtime_container.run_lines(recipe, audit).values():
        print(f"    {line}")
