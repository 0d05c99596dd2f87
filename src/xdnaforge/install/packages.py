"""Installing the audited packages, verifying them, and rolling back: the only stage that
changes a user's system, so it is explicit (every privileged command is printed, run only
with --yes), exact (only files whose sha256 the audit passed) and reversible (what it
replaced is kept as .deb files and install.json says how to restore it).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xdnaforge.compat.here import verdict_here
from xdnaforge.config.project import Project
from xdnaforge.config.recipe import Recipe
from xdnaforge.debs.debfile import DebError, read_deb
from xdnaforge.debs.rules import shown
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
from xdnaforge.install.consent import require, require_root
from xdnaforge.planning.plan import Plan
from xdnaforge.process.run import CommandFailed, run
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_atomic, write_record
from xdnaforge.tools.dpkg import install_argv, purge_argv, query_installed, repack_argv

DPKG_TIMEOUT = 1800.0


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _private_copies(chosen: list[dict[str, Any]], directory: Path) -> list[Path]:
    """Each approved file copied into `directory` (private: mode 0700, owned by whoever
    installs), hashed as it is copied; the copies are what dpkg installs.

    Whoever can write artifacts/ (the unprivileged builder, while root installs) could swap
    a file between its check and `dpkg -i`; a copy only its owner can write cannot be.
    """
    copies = []
    for item in chosen:
        source = Path(item["file"])
        target = directory / source.name
        digest = hashlib.sha256()
        try:
            handle = source.open("rb")
        except OSError as error:
            raise StageFailed(f"cannot read {source}: {error.strerror}") from None
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        with handle, os.fdopen(os.open(target, flags, 0o600), "wb") as copy:
            while block := handle.read(1 << 20):
                digest.update(block)
                copy.write(block)
        if digest.hexdigest() != item["sha256"]:
            raise StageFailed(
                f"refusing {source.name}: it changed after the audit check (sha256 "
                f"{digest.hexdigest()}, the audit passed {item['sha256']})",
                hint="someone can write the artifacts directory while you install; "
                "rebuild and re-audit, and keep artifacts/ writable only by you",
            )
        copies.append(target)
    return copies


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
        return "dependency problems: install the packages these depend on first (see above)"
    if "subprocess installed post-installation script" in text or "script" in text:
        return "a maintainer script failed (see above)"
    return "dpkg failed (see above)"


def preflight(
    plan: Plan, space: Workspace, root: Path, sysroot: Path, distro: Sequence[Recipe] = ()
) -> list[Check]:
    """Everything that must be said before anything changes; `distro`: the distro recipes
    for this host, offered to keep a distribution stack that is installed."""
    installed = query_installed(
        DISTRO_XRT_PACKAGES, cwd=space.work, log_file=None, admindir=_admindir(root)
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


def _kept_versions(space: Workspace) -> dict[tuple[str, str], Path]:
    """Packages xdnaforge installed before (any target), by (package, version)."""
    kept = {}
    for deb in sorted(space.artifacts_dir.glob("*/kept/*.deb")):
        try:
            contents = read_deb(deb)
        except DebError:
            continue
        kept[(contents.package, contents.control.get("Version", ""))] = deb
    return kept


def _approved(plan: Plan, space: Workspace) -> list[dict[str, Any]]:
    """The packages to install, in recipe order, each bound to the digest the audit passed."""
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
        digest = _sha256(path) if path.is_file() else "missing"
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
    space.work.mkdir(parents=True, exist_ok=True)  # a prebuilt recipe's build made none
    admindir = _admindir(root)
    host = plan.host
    distro = [
        r
        for r in project.recipes.values()
        if r.kind == "distro"
        and (r.hosts.distro_id, r.hosts.distro_version) == (host.distro_id, host.distro_version)
    ]
    checks = preflight(plan, space, root, project.site.sysroot, distro)
    for check in checks:
        label = "BLOCKING" if check.blocking else "warning"
        print(f"{label} [{check.code}] {check.message}\n  fix: {check.fix}")
    blocking = [c for c in checks if c.blocking]
    if blocking:
        raise StageFailed(
            f"not installing: {'; '.join(c.message for c in blocking)}",
            hint="\n".join(c.fix for c in blocking),
        )
    log = space.logs / "install.log"
    names = [c["package"] for c in chosen]
    before = query_installed(names, cwd=space.work, log_file=log, admindir=admindir)
    kept = _kept_versions(space)
    keep_dir = space.records / "kept"
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
    keep_dir.mkdir(parents=True, exist_ok=True)
    for argv in commands[:-1]:
        run(argv, cwd=keep_dir, timeout=DPKG_TIMEOUT, log_file=log)
    kept = _kept_versions(space)
    for item in chosen:
        if item["replaced"] is not None:
            item["kept"] = str(kept[(item["package"], item["replaced"])])
    with tempfile.TemporaryDirectory(prefix="xdnaforge-install-") as private:
        copies = _private_copies(chosen, Path(private))
        commands[-1] = install_argv(root, copies)
        _install_copies(root, chosen, space, commands[-1], log)
        for item, copy in zip(chosen, copies, strict=True):
            # what we installed is kept too, so a later upgrade can be rolled back to it
            target = keep_dir / Path(item["file"]).name
            if not target.exists():
                shutil.copy2(copy, target)
    _finish(plan, space, root, chosen, checks, commands)


def _install_copies(
    root: Path, chosen: list[dict[str, Any]], space: Workspace, argv: list[str], log: Path
) -> None:
    """`dpkg -i` of the private copies; a failure is rolled back."""
    try:
        run(argv, cwd=space.work, timeout=DPKG_TIMEOUT, log_file=log)
    except CommandFailed as error:
        if _lock_busy(error):
            # dpkg refused before touching anything: there is nothing to roll back
            raise StageFailed(
                f"nothing was installed: {_dpkg_failure(error)}", hint=f"full log: {log}"
            ) from None
        outcome = "was rolled back"
        try:
            _restore(root, chosen, space, log)
        except CommandFailed as undo:
            outcome = f"could NOT be rolled back ({undo.output.strip()[-300:]})"
        raise StageFailed(
            f"install failed and {outcome}: {_dpkg_failure(error)}\n{error.output.strip()}",
            hint=f"full log: {log}",
        ) from None


def _finish(
    plan: Plan,
    space: Workspace,
    root: Path,
    chosen: list[dict[str, Any]],
    checks: list[Check],
    commands: list[list[str]],
) -> None:
    """Verify what dpkg installed and record it."""
    problems = verify(root, chosen, space, plan.recipe.kind == "distro")
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
    )
    if problems:
        raise StageFailed("installed, but verification failed:\n" + "\n".join(problems))
    for item in chosen:
        was = f" (replaced {shown(item['replaced'])})" if item["replaced"] else ""
        print(f"installed {shown(item['package'])} {shown(item['version'])}{was}")


def verify(
    root: Path, chosen: list[dict[str, Any]], space: Workspace, distro: bool = False
) -> list[str]:
    """debsums-style: versions as expected, every file present with dpkg's recorded md5."""
    admindir = root / "var/lib/dpkg"
    names = [c["package"] for c in chosen]
    versions = query_installed(names, cwd=space.work, log_file=None, admindir=admindir)
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


def _undo(root: Path, items: list[dict[str, Any]]) -> list[list[str]]:
    """The dpkg commands that put back what `items` replaced: purge what was new (in reverse
    install order), reinstall the kept previous versions."""
    new = [i["package"] for i in items if i.get("replaced") is None]
    previous = [Path(i["kept"]) for i in items if i.get("replaced") is not None and i.get("kept")]
    commands = []
    if new:
        commands.append(purge_argv(root, list(reversed(new))))
    if previous:
        commands.append(install_argv(root, previous))
    return commands


def _restore(root: Path, items: list[dict[str, Any]], space: Workspace, log: Path) -> None:
    for argv in _undo(root, items):
        run(argv, cwd=space.work, timeout=DPKG_TIMEOUT, log_file=log)


def rollback(project: Project, plan: Plan, space: Workspace, root: Path, yes: bool) -> None:
    del project
    record = read_record(space.record("install"))
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
    commands = _undo(root, items)
    for argv in commands:
        print(f"+ {' '.join(argv)}")
    require(yes, "not run: rolling back changes the system")
    require_root(root, f"rollback --target {plan.target}")
    log = space.logs / "install.log"
    for argv in commands:
        run(argv, cwd=space.work, timeout=DPKG_TIMEOUT, log_file=log)
    versions = query_installed(
        [i["package"] for i in items], cwd=space.work, log_file=log, admindir=root / "var/lib/dpkg"
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
        write_atomic(root / path, text)
    print("written; log out and in again (or reboot) for the new limit to apply")
