"""What the runtime gate checks about installed packages: every package of the recipe's
install order, at the version this target recorded (install.json when xdnaforge installed
into this root, else packages.json), and the files against dpkg's recorded md5sums.

Package names come from the recipe, never from a fixed list: XRT's packages differ by
version and distro (2.20 makes xrt-base, 2.19 on Debian 12 makes xrt-runtime instead).
`expected_packages` and `compare` are pure; `changed_files` reads files under a root.
Starts no process: the gate asks dpkg-query through tools/dpkg.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdnaforge.tools.dpkg import parse_md5sums

PLUGIN_PREFIX = "xrt_plugin"  # the amdxdna plugin's package name (xdna-driver's CPack)


@dataclass(frozen=True, slots=True, kw_only=True)
class Expected:
    package: str
    versions: tuple[str, ...]  # acceptable versions; empty: nothing recorded to compare with
    source: str  # where the versions come from (install.json, packages.json, the recipe)


def expected_packages(
    order: Sequence[str],
    install: Mapping[str, Any] | None,
    packages: Mapping[str, Any] | None,
    root: str,
    plugin_version: str | None,
) -> tuple[Expected, ...]:
    """Each package of `order` with the versions recorded for this target and this root."""
    recorded: dict[str, set[str]] = {}
    source = "nothing recorded"
    if install and install.get("state") == "installed" and install.get("root") == root:
        source = "install.json"
        for item in install.get("installed", []):
            recorded.setdefault(str(item["package"]), set()).add(str(item["version"]))
    elif packages:
        source = "packages.json"
        # one Package name can come in two files (XRT 2.19 makes two xrt-runtime .debs)
        for item in packages.get("packages", []):
            recorded.setdefault(str(item["package"]), set()).add(str(item["version"]))
    result = []
    for name in order:
        if name in recorded:
            result.append(
                Expected(package=name, versions=tuple(sorted(recorded[name])), source=source)
            )
        elif source == "nothing recorded" and plugin_version and name.startswith(PLUGIN_PREFIX):
            result.append(Expected(package=name, versions=(plugin_version,), source="the recipe"))
        else:
            result.append(Expected(package=name, versions=(), source=source))
    return tuple(result)


def compare(expected: Sequence[Expected], installed: Mapping[str, str]) -> list[str]:
    """A problem per package that is missing or at another version than recorded."""
    problems = []
    for item in expected:
        version = installed.get(item.package)
        if version is None:
            problems.append(f"{item.package} is not installed")
        elif item.versions and version not in item.versions:
            problems.append(
                f"{item.package} is {version}, {item.source} has {' or '.join(item.versions)}"
            )
    return problems


def md5sums_file(admindir: Path, package: str) -> Path | None:
    """dpkg's md5sums of `package` (`<package>.md5sums`, or `<package>:<arch>.md5sums` for
    multi-arch packages); None when dpkg keeps none for it."""
    info = admindir / "info"
    exact = info / f"{package}.md5sums"
    if exact.is_file():
        return exact
    return next(iter(sorted(info.glob(f"{package}:*.md5sums"))), None)


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def changed_files(root: Path, admindir: Path, package: str) -> tuple[int, list[str]] | None:
    """(files checked, problems) of `package` against dpkg's md5sums; None without md5sums."""
    sums = md5sums_file(admindir, package)
    if sums is None:
        return None
    entries = parse_md5sums(sums.read_text(encoding="utf-8", errors="replace"))
    problems = []
    for digest, path in entries:
        file = root / path
        if not file.is_file():
            problems.append(f"{package}: /{path} is missing")
        elif _md5(file) != digest:
            problems.append(f"{package}: /{path} differs from what dpkg installed")
    return len(entries), problems


@dataclass(frozen=True, slots=True, kw_only=True)
class PackageCheck:
    problems: tuple[str, ...]
    evidence: tuple[str, ...]  # one line per package: installed, recorded, files checked
    summary: str  # for a passing gate


def check_packages(
    expected: Sequence[Expected], installed: Mapping[str, str], root: Path, admindir: Path
) -> PackageCheck:
    """Versions against the record, then each installed package's files against dpkg."""
    problems = compare(expected, installed)
    evidence = []
    checked = 0
    for item in expected:
        version = installed.get(item.package)
        recorded = " or ".join(item.versions) or "no version"
        line = f"{item.package} {version or 'not installed'} ({recorded} in {item.source})"
        files = changed_files(root, admindir, item.package) if version else None
        if files is not None:
            count, changed = files
            checked += count
            problems.extend(changed)
            line += f"; {count} files against dpkg's md5sums, {len(changed)} differ"
        elif version:
            line += "; dpkg keeps no md5sums for it"
        evidence.append(line)
    sources = {item.source for item in expected}
    how = (
        "versions not compared: no packages.json or install.json for this target"
        if sources <= {"nothing recorded"}
        else f"as {', '.join(sorted(sources - {'nothing recorded'}))} records"
    )
    versions = ", ".join(f"{item.package} {installed.get(item.package)}" for item in expected)
    digests = f"; {checked} files match dpkg's md5sums" if checked else ""
    return PackageCheck(
        problems=tuple(problems), evidence=tuple(evidence), summary=f"{versions} ({how}){digests}"
    )
