"""The package stage of a distro recipe: the archive's own XRT packages at exactly the pinned
versions, each checked against the sha256 the recipe pins or the one lock.json kept when it was
first seen, then published with packages.json as a build's packages are. Nothing is compiled.

Where the files come from, first match wins: the site's mirror of the archive URL (a directory
of .deb files, a directory holding an apt archive, or another URL), else the archive itself
through apt with a private configuration (build/<target>/archive/apt: the host's sources, pins
and keyrings play no part). `offline: true` without a mirror is refused before apt runs.
An archive is trusted only through the keys `distro.archive.keyring` names by fingerprint:
apt gets a keyring holding exactly those, and the Release file it read is verified with gpgv
again for lock.json. A directory of .deb files has no signed index: only packages whose sha256
the recipe pins (read from the signed Packages file) are taken from one.
Edge module: apt runs through tools/apt.py, files are read with debfile.
"""

from __future__ import annotations

import datetime
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdnaforge.config.project import Project
from xdnaforge.config.recipe import UNPINNED, DistroArchive, DistroPackage
from xdnaforge.debs.debfile import DebContents, DebError, read_deb
from xdnaforge.debs.rules import wants_text
from xdnaforge.environments.keyring import how_to_get, trust, verify_lists
from xdnaforge.errors import StageFailed
from xdnaforge.planning.plan import Plan
from xdnaforge.process.run import CommandFailed
from xdnaforge.stages import package as stage_package
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_record
from xdnaforge.tools import apt

LEFT_OUT = "left-out"  # under artifacts/<target>/: downloaded to be audited, never installed


@dataclass(frozen=True, slots=True)
class Origin:
    """Where the packages were taken from, as the records and messages say it."""

    describe: str  # "http://deb.debian.org/debian forky", "the directory /srv/debs"
    url: str | None  # an apt source URL; None: a directory of .deb files
    directory: Path | None


def _origin(project: Project, stack: DistroArchive) -> Origin:
    mirror = project.site.mirror_for(stack.url)
    if mirror is None:
        if project.site.offline:
            raise StageFailed(
                f"site.yaml says offline: true and names no mirror of {stack.url}",
                hint=f"add `mirrors: {{{stack.url}: <dir>}}` to {project.site.origin}: a "
                "directory of the .deb files, or of an apt archive (dists/, pool/)",
            )
        return Origin(f"{stack.url} {stack.suite}", stack.url, None)
    local = Path(mirror.removeprefix("file://")).expanduser()
    if "://" in mirror and not mirror.startswith("file://"):
        return Origin(f"{mirror} {stack.suite} (the site's mirror)", mirror, None)
    if not local.is_dir():
        raise StageFailed(
            f"the site's mirror of {stack.url} is {mirror}, which is not a directory",
            hint=f"correct mirrors in {project.site.origin}",
        )
    if (local / "dists").is_dir():
        return Origin(f"{local} {stack.suite} (the site's mirror)", f"file://{local}", None)
    return Origin(f"the directory {local} (the site's mirror)", None, local)


def wanted(stack: DistroArchive) -> list[DistroPackage]:
    """What to download: the stack's packages, and the left-out ones named at a version
    (audited to show why they are left out; never installed)."""
    extra = [
        DistroPackage(package=p.package, version=p.version, sha256=UNPINNED)
        for p in stack.left_out
        if p.version is not None
    ]
    return [*stack.packages, *extra]


def _missing_line(item: DistroPackage, offered: list[str], origin: Origin) -> str:
    if not offered:
        return f"{item.package} {item.version}: {origin.describe} has no package {item.package}"
    return (
        f"{item.package} {item.version} is not in {origin.describe}; the newest it has is "
        f"{apt.newest(offered)}"
    )


def _refuse_missing(stack: DistroArchive, origin: Origin, offers: dict[str, list[str]]) -> None:
    lines = [
        _missing_line(item, offers.get(item.package, []), origin)
        for item in wanted(stack)
        if item.version not in offers.get(item.package, [])
    ]
    if lines:
        raise StageFailed(
            "; ".join(lines),
            hint="pin the versions the archive has (recipe distro.packages), or point "
            "site.yaml mirrors at an archive or directory that keeps these",
        )


def _from_directory(stack: DistroArchive, origin: Origin) -> dict[str, tuple[Path, DebContents]]:
    """The pinned packages among the .deb files of a directory (names are no contract: the
    control fields are read)."""
    assert origin.directory is not None
    unpinned = [p.package for p in stack.packages if p.sha256 == UNPINNED]
    if unpinned:
        raise StageFailed(
            f"{origin.describe} has no signed index, and the recipe pins no sha256 for "
            f"{', '.join(unpinned)}: nothing vouches for those files",
            hint="pin each package's sha256 from the archive's signed Packages file "
            "(distro.packages), or point the mirror at an apt archive (dists/, pool/)",
        )
    pins = {p.package: p.version for p in wanted(stack)}
    offers: dict[str, list[str]] = {}
    found: dict[str, tuple[Path, DebContents]] = {}
    for path in sorted(origin.directory.rglob("*.deb")):
        if path.name.split("_", 1)[0] not in pins:
            continue
        try:
            deb = read_deb(path, wants_text)
        except DebError as error:
            raise StageFailed(f"download: {error.message}") from None
        version = deb.control.get("Version", "")
        offers.setdefault(deb.package, []).append(version)
        architecture = deb.control.get("Architecture", "")
        if pins.get(deb.package) == version and architecture in (stack.architecture, "all"):
            found[deb.package] = (path, deb)
    _refuse_missing(stack, origin, offers)
    return found


def _from_apt(
    stack: DistroArchive, origin: Origin, space: Workspace, verified: dict[str, Any]
) -> dict[str, tuple[Path, DebContents]]:
    """`apt-get download name=version` for every pinned package, with a private apt that
    trusts only the named keys; `verified` gets the keys and the Release files checked."""
    assert origin.url is not None
    folder = space.work / "archive"
    what = f"download from {origin.describe}"
    trusted = trust(stack.keyring, folder / "keyring.gpg", what, "the recipe's distro.archive")
    line = stack.sources_line(origin.url, keyring=str(trusted.file))
    config = apt.private_config(folder / "apt", line, as_root=apt.running_as_root())
    lists = folder / "apt/state/lists"
    for old in lists.glob("*") if lists.is_dir() else ():
        if old.is_file():
            old.unlink()  # a Release file of an earlier run is not this run's evidence
    downloads = folder / "debs"
    if downloads.exists():
        shutil.rmtree(downloads)
    downloads.mkdir(parents=True)
    log = space.logs / "download.log"
    print(f"  apt: {line}")
    try:
        apt.run_apt(apt.update_argv(), config, downloads, log)
    except CommandFailed as error:
        said = [line.strip() for line in error.output.splitlines() if line.startswith(("E:", "W:"))]
        unknown = re.findall(r"NO_PUBKEY ([0-9A-F]+)", error.output)
        if unknown:
            named = ", ".join(trusted.keyring.fingerprints)
            raise StageFailed(
                f"{what}: the Release file is signed by key {', '.join(dict.fromkeys(unknown))}, "
                f"which is not among the keys the recipe names ({named}); nothing was downloaded",
                hint=f"if the archive changed its key, name the new fingerprint in "
                f"{trusted.keyring.origin} after checking it; {how_to_get(trusted.keyring)}",
            ) from None
        raise StageFailed(
            f"apt could not read {origin.describe}: {' '.join(said) or error.message}",
            hint=f"see {log}; check the archive URL and suite in the recipe (distro.archive) "
            f"and the keyring it names, or name a mirror in site.yaml; apt settings of this "
            f"machine (a proxy, Acquire::Check-Valid-Until) go in {config.parent}/etc/apt.conf.d/",
        ) from None
    verified["keyring"] = trusted.record()
    verified["release_verified"] = verify_lists(trusted, lists, what)
    for item in verified["release_verified"]:
        print(f"  {item['file']}: signed by {', '.join(item['signed_by'])} (verified with gpgv)")
    items = wanted(stack)
    offers = apt.available_versions([p.package for p in items], config, downloads, log)
    _refuse_missing(stack, origin, offers)
    apt.run_apt(
        apt.download_argv([(p.package, p.version) for p in items]),
        config,
        downloads,
        log,
    )
    found: dict[str, tuple[Path, DebContents]] = {}
    for path in sorted(downloads.glob("*.deb")):
        try:
            deb = read_deb(path, wants_text)
        except DebError as error:
            raise StageFailed(f"download: {error.message}") from None
        found[deb.package] = (path, deb)
    return found


def check_digest(item: DistroPackage, actual: str, first_seen: str | None, lock: Path) -> str:
    """'' when `actual` is the digest the recipe pins (or, unpinned, the one first seen);
    else the refusal, naming both digests."""
    if item.sha256 != UNPINNED and actual != item.sha256:
        return f"{item.package} {item.version} has sha256 {actual}; the recipe pins {item.sha256}"
    if first_seen is not None and actual != first_seen:
        return (
            f"{item.package} {item.version} has sha256 {actual}; it had {first_seen} when "
            f"first seen ({lock}): the archive republished a version under the same number"
        )
    return ""


def collect_distro(project: Project, plan: Plan, space: Workspace) -> None:
    """Download (or take from the mirror) the pinned packages, check them, publish them."""
    stack = plan.recipe.distro
    if stack is None:
        raise StageFailed(f"{plan.target} is not a distro recipe")
    origin = _origin(project, stack)
    print(f"  taking {len(stack.packages)} packages from {origin.describe}")
    verified: dict[str, Any] = {}
    if origin.directory:
        found = _from_directory(stack, origin)
        verified["release_verified"] = "none: a directory of .deb files; each sha256 is pinned"
    else:
        found = _from_apt(stack, origin, space, verified)
    lock_path = space.record("lock")
    lock = read_record(lock_path) or {}
    seen: dict[str, dict[str, Any]] = dict(lock.get("packages", {}))
    problems = []
    files: list[Path] = []
    entries: list[dict[str, Any]] = []
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    for item in wanted(stack):
        if item.package not in found:
            problems.append(f"{item.package} {item.version} did not arrive from {origin.describe}")
            continue
        path, deb = found[item.package]
        version = deb.control.get("Version", "")
        if version != item.version:
            problems.append(f"{path.name} is {item.package} {version}, not {item.version}")
            continue
        known = seen.get(item.package, {})
        first = known.get("sha256") if known.get("version") == item.version else None
        refusal = check_digest(item, deb.sha256, first, lock_path)
        if refusal:
            problems.append(refusal)
            continue
        if first is None:
            seen[item.package] = {
                "version": item.version,
                "sha256": deb.sha256,
                "first_seen": now,
                "from": origin.describe,
                "pinned_in_recipe": item.sha256 != UNPINNED,
            }
        files.append(path)
        entries.append(stage_package._entry(deb, path, "download"))
    taken = len(stack.packages)
    if problems:
        raise StageFailed(
            "; ".join(problems),
            hint="a digest is refused unless the recipe pins it or lock.json kept it; compare "
            "with the archive's Packages file before changing the pin in "
            f"{plan.recipe.origin.rsplit(':', 1)[0]}",
        )
    unpinned = [p.package for p in stack.packages if p.sha256 == UNPINNED]
    write_record(
        lock_path,
        "lock",
        {
            "target": plan.target,
            "recipe": stage_package.recipe_record(plan.recipe),
            "archive": {
                "url": stack.url,
                "suite": stack.suite,
                "components": list(stack.components),
                "signed_by": stack.signed_by,
                "source_package": stack.source_package,
                "taken_from": origin.describe,
                **verified,
            },
            "packages": seen,
            "unpinned": unpinned,
        },
    )
    if unpinned:
        print(
            f"  not pinned in the recipe: {', '.join(unpinned)}; their digests as first seen "
            f"are kept in {lock_path} and a different file for the same version is refused"
        )
    left_out = _keep_left_out(space, stack, files[taken:], entries[taken:])
    stage_package._publish(plan, space, files[:taken], entries[:taken], left_out)


def _keep_left_out(
    space: Workspace, stack: DistroArchive, files: list[Path], entries: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The left-out packages for packages.json; those downloaded go to left-out/ beside the
    packages, for the audit to show why (they are never installed)."""
    folder = space.records / LEFT_OUT
    if folder.exists():
        shutil.rmtree(folder)
    if files:
        folder.mkdir(parents=True)
    for path in files:
        shutil.copy2(path, folder / path.name)
    downloaded = {e["package"]: (path, e) for path, e in zip(files, entries, strict=True)}
    result: list[dict[str, Any]] = []
    for item in stack.left_out:
        if item.package in downloaded:
            path, entry = downloaded[item.package]
            result.append(
                {
                    **entry,
                    "file": f"{LEFT_OUT}/{path.name}",
                    "reason": item.reason,
                    "source": str(path),
                }
            )
        else:
            result.append(
                {"file": "(not downloaded)", "package": item.package, "reason": item.reason}
            )
    return result
