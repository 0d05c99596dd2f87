"""`doit env`: create or update a build environment and write its env.json.

Edge module. A rootfs is made with mmdebstrap (the build dependencies in the same call) or,
where it is not installed, debootstrap, beside the old one and swapped in only when complete
(a failed or killed run leaves the previous root, or none, never a half-made one as if it
were good). Both are given only the keys the recipe or site names by fingerprint
(environments/keyring.py); nothing starts without them, apt inside the root trusts only
them, and the Release file apt read is verified with gpgv again before env.json records
it. A twin gets the target's /etc/os-release. Every fault is one line: environment, cause, fix.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xdnaforge.config.envspec import EnvironmentSpec
from xdnaforge.config.site import Site
from xdnaforge.environments.container import check_image
from xdnaforge.environments.keyring import Trusted, trust, verify_lists
from xdnaforge.environments.local import Place, place, read_env_record
from xdnaforge.environments.root_tools import (
    KEYRING_INSIDE,
    debootstrap_fault,
    fail,
    root_argv,
    sources_list,
)
from xdnaforge.install.consent import require
from xdnaforge.process.progress import RootPhases
from xdnaforge.process.run import CommandFailed, child_environment, run, run_streaming
from xdnaforge.process.sandbox import PATH_INSIDE, admin_argv
from xdnaforge.state.records import write_record
from xdnaforge.state.storage import swap_in
from xdnaforge.tools.dpkg import parse_installed

APT_ENV = {"DEBIAN_FRONTEND": "noninteractive"}
WHERE_KEYS = "the recipe's build.environment or site.yaml environments.<distro>-<release>"


def release_facts(root: Path) -> dict[str, Any]:
    """The archive's Release file as apt saw it: date, Valid-Until, sha256 (per list)."""
    facts: dict[str, Any] = {}
    lists = root / "var/lib/apt/lists"
    for path in sorted(lists.glob("*_InRelease")) or sorted(lists.glob("*_Release")):
        data = path.read_bytes()
        fields = {}
        for line in data.decode(errors="replace").splitlines():
            key, sep, value = line.partition(":")
            if sep and key in ("Date", "Valid-Until", "Suite", "Codename", "Origin"):
                fields[key] = value.strip()
        facts[path.name] = {**fields, "sha256": hashlib.sha256(data).hexdigest()}
    return facts


def _expired(facts: dict[str, Any], now: datetime.datetime) -> list[str]:
    """Release files whose Valid-Until lies in the past."""
    stale = []
    for name, fields in facts.items():
        until = fields.get("Valid-Until")
        if not until:
            continue
        try:
            when = datetime.datetime.strptime(until, "%a, %d %b %Y %H:%M:%S %Z").replace(
                tzinfo=datetime.UTC
            )
        except ValueError:
            continue
        if when < now:
            stale.append(f"{name} (valid until {until})")
    return stale


def _size(root: Path) -> int:
    """Bytes on disk under root, each hard-linked file once."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for directory, _, files in os.walk(root):
        for name in files:
            try:
                info = Path(directory, name).lstat()
            except OSError:
                continue
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total


def os_release(spec: EnvironmentSpec, base: str) -> str:
    """A twin's /etc/os-release: the target's ID and VERSION_ID, saying what it really is."""
    return (
        f'PRETTY_NAME="{spec.distro.capitalize()} {spec.release} (xdnaforge twin on {base})"\n'
        f'NAME="{spec.distro.capitalize()}"\nID={spec.distro}\nID_LIKE=debian\n'
        f'VERSION_ID="{spec.release}"\nVERSION="{spec.release}"\n'
        f'XDNAFORGE_TWIN_OF="{base}"\n'
    )


def _inside(bwrap: str, root: Path, argv: Sequence[str], log: Path, timeout: float) -> str:
    # argv is looked up inside the root, on the root's PATH (the host's may name directories
    # the root does not have)
    result = run(
        [*admin_argv(bwrap, root), *argv],
        cwd=Path("/"),
        timeout=timeout,
        log_file=log,
        env={**APT_ENV, "PATH": PATH_INSIDE},
    )
    return result.stdout


def _apt(spec: EnvironmentSpec, bwrap: str, root: Path, packages: Sequence[str], log: Path) -> bool:
    """apt-get update and install inside; True when Valid-Until had to be ignored."""
    ignored = False
    try:
        _inside(bwrap, root, ["apt-get", "update"], log, 600)
    except CommandFailed as error:
        if "expired" not in error.output and "valid until" not in error.output.lower():
            raise fail(spec, "apt-get update failed inside the root", f"see {log}") from None
        # Debian testing's Release file carries a Valid-Until that can lie in the past: the
        # archive is still the newest one; say its date instead of refusing it.
        conf = root / "etc/apt/apt.conf.d/99xdnaforge-valid-until"
        conf.write_text('Acquire::Check-Valid-Until "false";\n')
        ignored = True
        _inside(bwrap, root, ["apt-get", "update"], log, 600)
    try:
        _inside(
            bwrap,
            root,
            ["apt-get", "install", "-y", "--no-install-recommends", *packages],
            log,
            3600,
        )
    except CommandFailed as error:
        missing = [
            line.split("Unable to locate package", 1)[1].strip()
            for line in error.output.splitlines()
            if "Unable to locate package" in line
        ]
        cause = (
            f"the archive has no package {', '.join(missing)}"
            if missing
            else "apt-get install failed inside the root"
        )
        raise fail(spec, cause, f"see {log}; fix the recipe's build.depends or the suite") from None
    # the downloaded .deb files are not part of the environment (hundreds of MB)
    _inside(bwrap, root, ["apt-get", "clean"], log, 120)
    return ignored


def _trust_inside(spec: EnvironmentSpec, root: Path, trusted: Trusted) -> None:
    """apt inside the root trusts the named keys for the archive, and no other source."""
    inside = root / KEYRING_INSIDE
    inside.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(trusted.file, inside)
    inside.chmod(0o644)
    (root / "etc/apt/sources.list").write_text(sources_list(spec))
    parts = root / "etc/apt/sources.list.d"
    for old in (*parts.glob("*.list"), *parts.glob("*.sources")) if parts.is_dir() else ():
        old.unlink()


def create(
    site: Site,
    spec: EnvironmentSpec,
    packages: Sequence[str],
    *,
    refresh: bool,
    yes: bool,
    target: str,
) -> Path:
    """Create (or update) `spec` with `packages` installed; return env.json's path."""
    if spec.kind == "host":
        print(f"{spec.name}: the host itself; nothing to create ({spec.reason})")
        return place(site, spec).record
    where = place(site, spec)
    if spec.kind != "rootfs":
        print(
            f"environment {spec.describe()}: checking that it starts and has {len(packages)} "
            "build dependencies"
        )
        require(yes, f"environment {spec.name}: not checked (it may pull {spec.image})")
        return check_image(spec, where, packages)
    bwrap = shutil.which("bwrap")
    tool = shutil.which("mmdebstrap") or shutil.which("debootstrap")
    if bwrap is None or tool is None:
        what = "bubblewrap" if bwrap is None else "mmdebstrap (or debootstrap)"
        package = "bubblewrap" if bwrap is None else "mmdebstrap"
        raise fail(spec, f"{what} is not installed", f"apt-get install {package}")
    fresh = refresh or not where.root.is_dir() or read_env_record(site, spec) is None
    print(f"environment {spec.describe()}")
    trusted = trust(
        spec.keyring,
        where.base.with_name(spec.name + ".keyring.gpg"),
        f"environment {spec.name}",
        WHERE_KEYS,
    )
    keys = ", ".join(f"{f} ({uid})" for f, uid in trusted.found.items())
    print(f"  the archive must be signed by: {keys}")
    new_root = where.base.with_name(spec.name + ".new") / "root"
    boot, note = root_argv(spec, tool, trusted.file, new_root, packages)
    if note:
        print(f"  {note}")
    if fresh:
        print(f"+ {' '.join(boot)}")
    print(f"  then apt-get install inside: {' '.join(packages)}")
    if os.geteuid() != 0:
        raise fail(
            spec,
            f"creating or updating a root file system needs root ({Path(tool).name}, apt-get)",
            f"run: sudo .venv/bin/doit env --target {target} --yes",
        )
    require(yes, f"environment {spec.name}: not created", "the commands above")
    return _make(spec, where, boot if fresh else None, bwrap, packages, trusted)


def _tool_version(tool: str, log: Path) -> str:
    name = Path(tool).name
    if name != "mmdebstrap":
        return name  # debootstrap has no --version
    try:
        out = run([tool, "--version"], cwd=Path("/"), timeout=60, log_file=log).stdout
    except CommandFailed:
        return name
    return out.strip().splitlines()[0] if out.strip() else name


def _make(
    spec: EnvironmentSpec,
    where: Place,
    boot: list[str] | None,
    bwrap: str,
    packages: Sequence[str],
    trusted: Trusted,
) -> Path:
    started = datetime.datetime.now(datetime.UTC)
    new = where.base.with_name(spec.name + ".new")
    work = new if boot is not None else where.base
    made_with = None
    if boot is not None:
        if new.exists():
            shutil.rmtree(new)  # what a killed run left: never used
        new.mkdir(parents=True)
        where.log.write_text("")
        made_with = _tool_version(boot[0], where.log)
        # minutes of work: its phases and package counts, live or every 30 s (process/progress)
        phases = RootPhases(f"env {spec.name}")
        try:
            run_streaming(
                boot,
                cwd=new,
                timeout=3600,
                env=child_environment({}, os.environ),
                log_file=where.log,
                on_line=phases.update,
                contain=False,  # it mounts and chroots as root: no PID namespace of ours
            )
            phases.done("root made")
        except CommandFailed as error:
            phases.done("failed")
            # wget's own words (404, connection refused) are only in debootstrap's log
            inner = new / "root/debootstrap/debootstrap.log"
            detail = inner.read_text(errors="replace") if inner.is_file() else ""
            shutil.rmtree(new, ignore_errors=True)
            raise debootstrap_fault(spec, error.output + detail) from None
    root = work / "root"
    try:
        _trust_inside(spec, root, trusted)
        ignored = _apt(spec, bwrap, root, packages, where.log)
        verified = verify_lists(trusted, root / "var/lib/apt/lists", f"environment {spec.name}")
        kept = work / "release"
        shutil.rmtree(kept, ignore_errors=True)
        kept.mkdir()
        for item in verified:
            # the signed file itself, beside env.json: anyone can run gpgv on it again
            for name in (item["file"], item.get("data")):
                if name:
                    shutil.copyfile(root / "var/lib/apt/lists" / name, kept / name)
            item["kept"] = f"release/{item['file']}"
        if spec.twin:
            release = root / "etc/os-release"
            base = _base_identity(root)
            release.unlink(missing_ok=True)  # a symlink to usr/lib/os-release in Debian
            release.write_text(os_release(spec, base))
        listing = _inside(
            bwrap,
            root,
            ["dpkg-query", "-W", "-f", "${Package}\\t${db:Status-Abbrev}\\t${Version}\\n"],
            where.log,
            120,
        )
    except BaseException:
        if boot is not None:
            shutil.rmtree(new, ignore_errors=True)
        raise
    installed = parse_installed(listing)
    facts = release_facts(root)
    size = _size(root)
    now = datetime.datetime.now(datetime.UTC)
    previous = _previous(where) if boot is None else {}
    body = {
        "environment": spec.name,
        "distro": spec.distro,
        "release": spec.release,
        "provider": spec.kind,
        "twin": spec.twin,
        "description": spec.describe(),
        "suite": spec.suite,
        "archive": spec.mirror,
        "made_with": made_with or previous.get("made_with"),
        "keyring": trusted.record(),
        "release_verified": verified,
        "release_files": facts,
        "valid_until_ignored": ignored or bool(_expired(facts, now)),
        "compilers": dict(spec.compilers),
        "requested": sorted(packages),
        "packages": dict(sorted(installed.items())),
        "size_bytes": size,
        "created": now.isoformat(timespec="seconds"),
        "seconds": round((now - started).total_seconds(), 1),
    }
    if previous.get("created"):
        # an update in place: keep when and how fast the root was made, say when it changed
        body["updated"], body["update_seconds"] = body["created"], body["seconds"]
        body["created"], body["seconds"] = previous["created"], previous.get("seconds")
    write_record(work / "env.json", "env", body)
    if boot is not None:
        swap_in(new, where.base)
    took = body.get("update_seconds", body["seconds"])
    print(f"{spec.name}: {len(installed)} packages, {size / 2**20:.0f} MiB, {took} s")
    for item in verified:
        print(f"  {item['file']}: signed by {', '.join(item['signed_by'])} (verified with gpgv)")
    if body["valid_until_ignored"]:
        dates = ", ".join(f.get("Date", "?") for f in facts.values())
        print(f"  the archive's Release file has expired; used it anyway (archive date {dates})")
    return where.record


def _previous(where: Place) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(where.record.read_text())
    except (OSError, ValueError):
        return {}
    return data


def _base_identity(root: Path) -> str:
    text = (root / "usr/lib/os-release").read_text(errors="replace")
    fields = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    return fields.get("PRETTY_NAME", "unknown").strip('"')
