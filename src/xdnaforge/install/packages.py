"""Installing the audited packages, verifying them, and rolling back: the only stage that
changes a user's system, so it is explicit (every privileged command is printed, run only
with --yes), exact (dpkg is given private copies of the files the audit passed, audited
again as they are given) and reversible (what it replaced is kept as .deb files and
install.json says how to restore it).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xdnaforge.compat.here import verdict_here
from xdnaforge.config.project import Project
from xdnaforge.config.recipe import Recipe
from xdnaforge.debs.verdicts import shown
from xdnaforge.errors import StageFailed
from xdnaforge.hardware.host_checks import (
    DISTRO_XRT_PACKAGES,
    MEMLOCK_FILES,
    Check,
    compat_warnings,
    distro_xrt,
    memlock,
    parse_memlock,
    stale_library_path,
)
from xdnaforge.hardware.npu_user import installing_user
from xdnaforge.hardware.package_check import changed_files
from xdnaforge.hardware.xrt_layout import find_layout, installed_files
from xdnaforge.host import read_text
from xdnaforge.install import private
from xdnaforge.install.consent import require, require_root
from xdnaforge.install.reaudit import admit
from xdnaforge.planning.plan import Plan
from xdnaforge.process.run import CommandFailed, run
from xdnaforge.state import nofollow
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_atomic, write_record
from xdnaforge.tools.dpkg import install_argv, purge_argv, query_installed, repack_argv

DPKG_TIMEOUT = 1800.0


def _admindir(root: Path) -> Path:
    admindir = root / "var/lib/dpkg"
    if not (admindir / "status").is_file():
        raise StageFailed(
            f"{root} has no dpkg database ({admindir}/status)",
            hint="give --root a directory prepared for dpkg: var/lib/dpkg/{status,info,updates}",
        )
    return admindir


def _lock_busy(error: CommandFailed) -> bool:
    return "locked by another process" in error.output


def _dpkg_failure(error: CommandFailed) -> str:
    text = error.output
    if _lock_busy(error):
        return (
            "dpkg is busy: another package manager (apt, unattended-upgrades, a software "
            "centre) holds its lock; wait for it to finish and retry"
        )
    if "dependency problems" in text:
        return "dependency problems: install the packages these depend on first"
    if "subprocess installed post-installation script" in text or "script" in text:
        return f"a maintainer script failed ({_first_error(error)})"
    return f"dpkg failed ({_first_error(error)})"


def preflight(
    plan: Plan, cwd: Path, root: Path, sysroot: Path, distro: Sequence[Recipe] = ()
) -> list[Check]:
    """Everything that must be said before anything changes; `distro`: the distro recipes
    for this host, offered to keep a distribution stack that is installed."""
    installed = query_installed(
        DISTRO_XRT_PACKAGES, cwd=cwd, log_file=None, admindir=_admindir(root)
    )

    # the recipe whose packages are the installed ones first
    def fit(recipe: Recipe) -> tuple[int, int, str]:
        order = set(recipe.install_order)
        return (len(set(installed) - order), len(order - set(installed)), recipe.name)

    distro_targets = [r.name for r in sorted(distro, key=fit)]
    checks = [
        distro_xrt(
            installed,
            installed_files(root, installed),
            installing_distro=plan.recipe.kind == "distro",
            distro_targets=distro_targets,
        )
    ]
    if root == Path("/"):
        checks.append(stale_library_path(os.environ.get("LD_LIBRARY_PATH", "")))
    limits = parse_memlock(read_text(sysroot / "proc/self/limits") or "")
    checks.append(memlock(limits, plan.recipe.validation.memlock_min_kib))
    found = [c for c in checks if c is not None]
    if root == Path("/"):
        verdict = verdict_here(sysroot, plan.host, [plan.recipe])
        found.extend(compat_warnings(verdict, plan.recipe.name))
    return found


def _approved(plan: Plan, space: Workspace) -> list[dict[str, Any]]:
    """The packages to install, in recipe order, each with the digest audit.json gives it.

    audit.json and packages.json say which files to take; the builder can write both, so
    they may stop an install but never admit a package: the copies are audited again
    (install/reaudit.py)."""
    audit = read_record(space.record("audit"))
    packages = read_record(space.record("packages"))
    if audit is None or packages is None:
        raise StageFailed(
            f"no audited packages for {plan.target}",
            hint=f"run `doit build --target {plan.target}` first",
        )
    built_in = (read_record(space.record("build")) or {}).get("environment", {})
    if built_in.get("twin"):
        # a twin has the target's toolchain generation, not its libraries: proofs only
        raise StageFailed(
            f"refusing to install {plan.target}: its packages were built in a twin "
            f"({built_in.get('description', built_in.get('name'))}), not in "
            f"{built_in.get('name')} itself",
            hint="a twin's packages prove that the sources build; build in the real "
            "distro (a rootfs from its own archive, or on such a host) to install",
        )
    if audit.get("verdict") != "pass":
        raise StageFailed(
            f"the audit of {plan.target} did not pass ({audit.get('verdict')})",
            hint="only packages with a passing audit are installed; see audit.json",
        )
    audited = {p["package"]: p for p in audit.get("packages", [])}
    built = {p["package"]: p for p in packages.get("packages", [])}
    chosen = []
    for name in plan.recipe.install_order:
        if name not in built or name not in audited:
            raise StageFailed(f"{name} is in install.order but was not built and audited")
        path = space.records / built[name]["file"]
        anchor = private.artifacts_anchor(space)
        digest = private.sha256(path, anchor) if os.path.lexists(path) else "missing"
        if digest != audited[name]["sha256"] or audited[name]["verdict"] != "pass":
            raise StageFailed(
                f"refusing {path.name}: its sha256 is {digest}, the audit passed "
                f"{audited[name]['sha256']}",
                hint="the file changed after the audit; rebuild or re-audit it "
                f"(`doit build --target {plan.target}`)",
            )
        chosen.append(
            {
                "package": name,
                "version": built[name]["version"],
                "sha256": digest,
                "file": str(path),
            }
        )
    return chosen


def install(project: Project, plan: Plan, space: Workspace, root: Path, yes: bool) -> None:
    chosen = _approved(plan, space)
    admindir = _admindir(root)
    host = plan.host
    distro = [
        r
        for r in project.recipes.values()
        if r.kind == "distro"
        and (r.hosts.distro_id, r.hosts.distro_version) == (host.distro_id, host.distro_version)
    ]
    with private.workdir(space) as work:
        checks = preflight(plan, work.path, root, project.site.sysroot, distro)
        for check in checks:
            label = "BLOCKING" if check.blocking else "warning"
            print(f"{label} [{check.code}] {check.message}\n  fix: {check.fix}")
        blocking = [c for c in checks if c.blocking]
        if blocking:
            raise StageFailed(
                f"not installing: {'; '.join(c.message for c in blocking)}",
                hint="\n".join(c.fix for c in blocking),
            )
        names = [c["package"] for c in chosen]
        before = query_installed(names, cwd=work.path, log_file=work.log, admindir=admindir)
        kept = private.kept_versions(space)
        commands: list[list[str]] = []
        for item in chosen:
            version = before.get(item["package"])
            item["replaced"] = version
            if version is not None and (item["package"], version) not in kept:
                commands.append(repack_argv(root, item["package"]))
        commands.append(install_argv(root, [Path(c["file"]) for c in chosen]))
        for argv in commands:
            print(f"+ {' '.join(argv)}")
        require(yes, "not run: installing changes the system")
        require_root(root, f"install --target {plan.target}")
        _refuse_links_to_records(space)
        with private.kept_directory(space) as kept_dir:
            copies = private.private_copies(chosen, work, private.artifacts_anchor(space))
            admit(plan.recipe, plan.target, copies, work.scratch)
            _keep_replaced(commands[:-1], chosen, space, work, kept_dir)
            commands[-1] = install_argv(root, copies)
            _install_copies(root, chosen, work, commands[-1])
            for copy in copies:
                # what we installed is kept too, so a later upgrade can be rolled back to it
                private.keep(copy, kept_dir, space.records / "kept")
        _finish(plan, space, root, chosen, checks, commands, work)


def _refuse_links_to_records(space: Workspace) -> None:
    """Refuse, before anything changes, a link where install.json will be written."""
    os.close(nofollow.open_directory(space.records, below=private.artifacts_anchor(space)))


def _keep_replaced(
    repacks: list[list[str]],
    chosen: list[dict[str, Any]],
    space: Workspace,
    work: private.Workdir,
    kept_dir: int,
) -> None:
    """dpkg-repack of what is replaced and nobody kept, in the private directory, placed in
    kept/; each replaced package's kept .deb recorded for the rollback."""
    for argv in repacks:
        run(argv, cwd=work.repack, timeout=DPKG_TIMEOUT, log_file=work.log)
    for deb in sorted(work.repack.glob("*.deb")):
        private.keep(deb, kept_dir, space.records / "kept")
    kept = private.kept_versions(space)
    for item in chosen:
        if item["replaced"] is not None:
            item["kept"] = str(kept[(item["package"], item["replaced"])])


def _install_copies(
    root: Path, chosen: list[dict[str, Any]], work: private.Workdir, argv: list[str]
) -> None:
    """`dpkg -i` of the private copies; a failure is rolled back."""
    try:
        run(argv, cwd=work.path, timeout=DPKG_TIMEOUT, log_file=work.log)
    except CommandFailed as error:
        if _lock_busy(error):
            # dpkg refused before touching anything: there is nothing to roll back
            raise StageFailed(
                f"nothing was installed: {_dpkg_failure(error)}", hint=f"full log: {work.shown_log}"
            ) from None
        state = f"{root} has the packages it had before"
        outcome = "was rolled back"
        try:
            _restore(root, chosen, work)
        except StageFailed as undo:  # a command, or a kept package refused
            outcome = f"could NOT be rolled back ({_first_error(undo)})"
            state = f"{root} is left partly installed (`dpkg --root {root} --audit` lists it)"
        # one line: what failed, what state the root is in; dpkg's own words are in the log
        raise StageFailed(
            f"install failed and {outcome}: {_dpkg_failure(error)}; {state}",
            hint=f"dpkg's output is in the full log: {work.shown_log}",
        ) from None


def _first_error(failed: StageFailed) -> str:
    """The line of a failed command that says why (dpkg's `error` line), whole: a message is
    never cut inside a word."""
    if not isinstance(failed, CommandFailed):
        return failed.message.splitlines()[0]
    lines = [line.strip() for line in failed.output.splitlines() if line.strip()]
    for at, line in enumerate(lines):
        if "error" in line.lower():
            # dpkg says `error processing package P (--install):` and the reason on the next line
            if line.endswith(":") and at + 1 < len(lines):
                return f"{line} {lines[at + 1]}"
            return line
    return lines[-1] if lines else f"{failed.argv[0]} failed"


def _finish(
    plan: Plan,
    space: Workspace,
    root: Path,
    chosen: list[dict[str, Any]],
    checks: list[Check],
    commands: list[list[str]],
    work: private.Workdir,
) -> None:
    """Verify what dpkg installed and record it."""
    problems = verify(root, chosen, work.path, plan.recipe.kind == "distro")
    write_record(
        space.record("install"),
        "install",
        {
            "target": plan.target,
            "root": str(root),
            # the NPU's user by default: whoever ran the install (sudo's caller)
            "user": installing_user(),
            "state": "installed" if not problems else "installed, verification failed",
            "installed": chosen,
            "checks": [
                {"code": c.code, "blocking": c.blocking, "message": c.message} for c in checks
            ],
            "commands": commands,
            "verification": problems or ["every file matches the digest dpkg recorded"],
            "fingerprints": {"install": plan.stage("install").fingerprint},
        },
        below=private.artifacts_anchor(space),
    )
    if problems:
        raise StageFailed("installed, but verification failed:\n" + "\n".join(problems))
    for item in chosen:
        was = f" (replaced {shown(item['replaced'])})" if item["replaced"] else ""
        print(f"installed {shown(item['package'])} {shown(item['version'])}{was}")


def verify(root: Path, chosen: list[dict[str, Any]], cwd: Path, distro: bool = False) -> list[str]:
    """debsums-style: versions as expected, every file present with dpkg's recorded md5."""
    admindir = root / "var/lib/dpkg"
    names = [c["package"] for c in chosen]
    versions = query_installed(names, cwd=cwd, log_file=None, admindir=admindir)
    problems = []
    for item in chosen:
        name = item["package"]
        if versions.get(name) != item["version"]:
            problems.append(
                f"{name}: dpkg reports {versions.get(name)}, expected {item['version']}"
            )
            continue
        # exactly this package's md5sums: a prefix glob would take xrt-base-dev's for xrt-base
        files = changed_files(root, admindir, name)
        problems.extend(files[1] if files else [])
    if "xrt_plugin-amdxdna" in names or distro:
        # where the packages just installed put the plugin, as dpkg lists their files
        layout = find_layout(root, names, site_prefix=None)
        where = layout.plugin_dir or layout.lib_dir
        if not list((root / where.relative_to("/")).glob("libxrt_driver_xdna.so*")):
            problems.append(
                f"{where} holds no libxrt_driver_xdna.so* ({layout.source}): XRT will find no NPU"
            )
    return problems


def _undo(
    root: Path, items: list[dict[str, Any]], previous: Sequence[Path] | None = None
) -> list[list[str]]:
    """The dpkg commands that put back what `items` replaced: purge what was new (in reverse
    install order), reinstall the kept previous versions (`previous`: their private
    copies, in that order)."""
    new = [i["package"] for i in items if i.get("replaced") is None]
    if previous is None:
        previous = _kept(items)
    commands = []
    if new:
        commands.append(purge_argv(root, list(reversed(new))))
    if previous:
        commands.append(install_argv(root, previous))
    return commands


def _kept(items: list[dict[str, Any]]) -> list[Path]:
    return [Path(i["kept"]) for i in items if i.get("replaced") is not None and i.get("kept")]


def _restore(root: Path, items: list[dict[str, Any]], work: private.Workdir) -> list[list[str]]:
    """Run the undo commands with private copies of the kept packages (refused unless this
    user wrote them: kept/ is the builder's directory); the commands run."""
    copies = [private.copy_kept(kept, work) for kept in _kept(items)]
    commands = _undo(root, items, copies)
    for argv in commands:
        run(argv, cwd=work.path, timeout=DPKG_TIMEOUT, log_file=work.log)
    return commands


def rollback(project: Project, plan: Plan, space: Workspace, root: Path, yes: bool) -> None:
    del project
    anchor = private.artifacts_anchor(space)
    record = private.read_own_record(space.record("install"), anchor)
    if record is None or record.get("state", "").startswith("rolled back"):
        raise StageFailed(
            f"nothing to roll back for {plan.target}",
            hint="install.json records no install by xdnaforge",
        )
    if Path(record["root"]) != root:
        raise StageFailed(
            f"the install was into {record['root']}, not {root}",
            hint=f"pass --root {record['root']}",
        )
    _admindir(root)
    items = record["installed"]
    for argv in _undo(root, items):
        print(f"+ {' '.join(argv)}")
    require(yes, "not run: rolling back changes the system")
    require_root(root, f"rollback --target {plan.target}")
    _refuse_links_to_records(space)
    with private.workdir(space) as work:
        try:
            commands = _restore(root, items, work)
        except CommandFailed as error:
            # one line: what failed and the root's state; dpkg's own words are in the log
            raise StageFailed(
                f"rollback failed: {_first_error(error)}; {root} is left partly rolled back "
                f"(`dpkg --root {root} --audit` lists it); install.json still records the install",
                hint=f"dpkg's output is in the full log: {work.shown_log}",
            ) from None
        versions = query_installed(
            [i["package"] for i in items],
            cwd=work.path,
            log_file=work.log,
            admindir=root / "var/lib/dpkg",
        )
    wrong = [
        f"{i['package']}: {versions.get(i['package'])}, expected {i.get('replaced')}"
        for i in items
        if versions.get(i["package"]) != i.get("replaced")
    ]
    write_record(
        space.record("install"),
        "install",
        {
            **{k: v for k, v in record.items() if k not in ("schema", "kind", "xdnaforge")},
            "state": "rolled back" if not wrong else "rolled back, verification failed",
            "rollback": {"commands": commands, "problems": wrong},
        },
        below=anchor,
    )
    if wrong:
        raise StageFailed(
            "rolled back, but dpkg does not show the previous set:\n" + "\n".join(wrong)
        )
    for item in items:
        if item.get("replaced"):
            print(f"restored {item['package']} {item['replaced']}")
        else:
            print(f"purged {item['package']} (was new)")


def write_memlock(root: Path, yes: bool) -> None:
    """`doit memlock`: the limits.d and systemd drop-ins that lift RLIMIT_MEMLOCK."""
    for path, text in MEMLOCK_FILES.items():
        print(f"--- {root / path}\n{text}")
    require(yes, "not written: changes the system's limits", "the files above")
    require_root(root, "memlock")
    for path, text in MEMLOCK_FILES.items():
        # a system change by design; no link inside another root is followed, and on / only
        # links root owns (state/nofollow.py)
        write_atomic(root / path, text, below=None if root == Path("/") else root)
    print("written; log out and in again (or reboot) for the new limit to apply")
