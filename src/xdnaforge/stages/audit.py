"""Auditing .deb files: any files given on the command line, or a target's built packages.

Edge module: reads each file with debfile, judges it with audit, writes the record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from xdnaforge.config.project import Project
from xdnaforge.debs import judge
from xdnaforge.debs.debfile import read_deb
from xdnaforge.debs.host_rules import HostPaths, host_paths
from xdnaforge.debs.policy import Policy, from_recipe
from xdnaforge.debs.rules import Verdict
from xdnaforge.debs.verdicts import audit_body, format_verdicts, shown
from xdnaforge.environments import runtime_container
from xdnaforge.errors import StageFailed
from xdnaforge.hardware.xrt_layout import (
    DEFAULT_PREFIX,
    XrtLayout,
    layout_from_files,
    prefix_layout,
)
from xdnaforge.install.observe import observe
from xdnaforge.planning.plan import Plan
from xdnaforge.process.sandbox import WORK_INSIDE
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_atomic, write_record


def audit_files(
    files: Sequence[Path],
    policy: Policy | None = None,
    host: HostPaths | None = None,
    scratch: Path | None = None,
) -> tuple[list[Verdict], list[tuple[str, str]]]:
    """Verdicts for the readable files; (file, reason) for the others (debs/judge.py).
    With `scratch`, a set that passes and has maintainer scripts is installed in a
    throw-away root there (install/observe.py) and what that showed is in the verdicts."""
    debs, errors = judge.read_all(files)
    verdicts = judge.judge_all(debs, policy, host)
    scripted = any(deb.scripts for deb in debs)
    if scratch is None or not scripted or errors or any(v.verdict == "block" for v in verdicts):
        return verdicts, errors
    print(
        f"observing the maintainer scripts: installing {len(debs)} package(s) in a throw-away root"
    )
    observation = observe([Path(deb.file) for deb in debs], scratch=scratch)
    return judge.observed(verdicts, debs, observation, policy), errors


def _conclude(verdicts: list[Verdict], errors: list[tuple[str, str]], after: str = "") -> None:
    print(format_verdicts(verdicts, errors))
    if after:
        print(after)
    if errors:
        raise StageFailed(
            f"{len(errors)} file(s) could not be audited: "
            + "; ".join(f"{shown(f)}: {shown(r)}" for f, r in errors)
        )
    blocked = [shown(v.package) for v in verdicts if v.verdict == "block"]
    if blocked:
        raise StageFailed(
            f"kernel payload found in {', '.join(blocked)}",
            hint="these packages must not be installed; each block above says what a packager "
            "does about it (docs/audit.md)",
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
    if not files or not all(files):
        raise StageFailed("nothing to audit", hint="give --deb FILE (repeatable) or --target T")
    verdicts, errors = audit_files(
        [Path(f) for f in files], host=_host(project), scratch=project.site.build_dir / "observe"
    )
    if json_out:
        body = audit_body(verdicts, errors)
        try:
            write_atomic(Path(json_out), json.dumps(body, indent=2) + "\n")
        except OSError as error:
            raise StageFailed(
                f"cannot write --json {json_out}: {error.strerror}",
                hint="give --json a file path in a writable directory",
            ) from None
    _conclude(verdicts, errors)


def audit_target(project: Project, plan: Plan, workspace: Workspace) -> None:
    """The audit stage: every package in packages.json, with the recipe's waivers."""
    stage = plan.stage("audit")
    packages = read_record(workspace.record("packages"))
    if packages is None:
        raise StageFailed(
            f"no packages.json for {plan.target}",
            hint=f"run `doit build --target {plan.target}` first",
        )
    policy = from_recipe(plan.recipe)
    files = [workspace.records / entry["file"] for entry in packages.get("packages", [])]
    verdicts, errors = audit_files(
        files, policy, _host(project, workspace), scratch=workspace.work / "observe"
    )
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
        {"rule": w.rule, "package": w.package, "justification": w.justification}
        for w in policy.waivers
    ]
    body["admitted"] = [
        {"path": a.pattern, "package": a.package, "reason": a.reason} for a in policy.admitted
    ]
    body["script_waivers"] = [
        {
            "package": w.package,
            "script": w.script,
            "sha256": w.sha256,
            "justification": w.justification,
        }
        for w in policy.scripts
    ]
    left_out, shown = _audit_left_out(workspace, packages, policy, _host(project, workspace))
    if left_out:
        body["left_out"] = left_out
    # a blocked or unreadable set is recorded (install reads it and refuses), but without
    # a fingerprint, so the stage is never "up to date" with a failing verdict
    passed = body["verdict"] == "pass"
    body["fingerprints"] = {"audit": stage.fingerprint} if passed else {}
    body["inputs"] = {"audit": stage.inputs}
    write_record(workspace.record("audit"), "audit", body)
    if passed and plan.recipe.hosts.runtime == "container":
        _write_runtime_container(plan, workspace, body)
    _conclude(verdicts, errors, shown)


def _audit_left_out(
    workspace: Workspace,
    packages: dict[str, Any],
    policy: Policy,
    host: HostPaths,
) -> tuple[list[dict[str, Any]], str]:
    """A distro stack's left-out packages that were downloaded (a -dkms package of the same
    source package): audited to show why they are left out; their verdict is not the set's.
    Returns their audit entries and the text to show."""
    entries = [e for e in packages.get("left_out", []) if e.get("sha256")]
    if not entries:
        return [], ""
    verdicts, errors = audit_files([workspace.records / e["file"] for e in entries], policy, host)
    lines = ["left out of the set, never installed (audited to show why):"]
    lines += [
        line
        for line in format_verdicts(verdicts, errors).splitlines()
        if not line.startswith("audit")  # the set's summary line is the one that counts
    ]
    reasons = {e["package"]: e.get("reason", "") for e in entries}
    body = audit_body(verdicts, errors)["packages"]
    assert isinstance(body, list)
    for entry in body:
        entry["file"] = str(Path(entry["file"]).relative_to(workspace.records))
        entry["reason"] = reasons.get(entry["package"], "")
        lines.append(f"      left out: {entry['reason']}")
    return body, "\n".join(lines)


def _packages_layout(workspace: Workspace, audit: Mapping[str, Any]) -> XrtLayout:
    """Where the audited packages put XRT (/opt/xilinx/xrt, or a distro stack's /usr), read
    from their own file lists as the gates read dpkg's."""
    files = {
        entry["package"]: [
            f"/{item.path}" for item in read_deb(workspace.records / entry["file"]).entries
        ]
        for entry in audit.get("packages", [])
        if entry.get("verdict") == "pass"
    }
    return layout_from_files(files) or prefix_layout(
        DEFAULT_PREFIX, "assumed: no audited package holds xrt-smi or libxrt_coreutil"
    )


def _write_runtime_container(plan: Plan, workspace: Workspace, audit: dict[str, object]) -> None:
    """Hosts that run userspace in a container get the image of exactly these packages."""
    folder = workspace.records / runtime_container.FOLDER
    recipe = plan.recipe
    layout = _packages_layout(workspace, audit)
    try:
        files = {
            "Containerfile": runtime_container.containerfile(recipe, audit, layout),
            "README.md": runtime_container.readme(recipe, audit, layout),
        }
    except ValueError as error:
        raise StageFailed(
            f"cannot write the runtime container of {plan.target}: {error}",
            hint="install.order must name packages that the audit passed",
        ) from None
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write_atomic(folder / name, text)
    print(f"runtime container: {folder / 'Containerfile'}")
    for line in runtime_container.run_lines(recipe, audit).values():
        print(f"    {line}")
