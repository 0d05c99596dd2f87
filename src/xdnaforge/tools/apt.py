"""apt with a private configuration: download exact package versions from one archive without
touching the host's apt state; argv builders, pure parsers, thin runners over run.run().

The configuration keeps every directory (sources, lists, cache, status, logs) under one
folder of the target's build tree, so the host's sources.list, pins and keyrings play no part:
the archive is the recipe's (or the site's mirror of it) and nothing else.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from xdnaforge.process.run import CommandFailed, CommandResult, run

APT_TIMEOUT = 1800.0


def private_config(folder: Path, sources_line: str, *, as_root: bool) -> Path:
    """Write an apt.conf (and its sources.list) that keeps apt inside `folder`."""
    for sub in ("etc/apt.conf.d", "etc/preferences.d", "state/lists/partial", "cache", "log"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (folder / "etc/sources.list").write_text(sources_line + "\n", encoding="utf-8")
    (folder / "status").write_text("", encoding="utf-8")
    lines = [
        f'Dir::Etc "{folder}/etc/";',
        f'Dir::Etc::Parts "{folder}/etc/apt.conf.d/";',
        f'Dir::Etc::SourceParts "{folder}/etc/sources.list.d/";',
        f'Dir::Etc::Preferences "{folder}/etc/preferences";',
        f'Dir::Etc::PreferencesParts "{folder}/etc/preferences.d/";',
        f'Dir::State "{folder}/state/";',
        f'Dir::State::status "{folder}/status";',
        f'Dir::Cache "{folder}/cache/";',
        f'Dir::Log "{folder}/log/";',
        'Acquire::Languages "none";',
        'Debug::NoLocking "true";',
        'APT::Get::AllowUnauthenticated "false";',
    ]
    if as_root:
        # as root apt drops to the _apt user, who cannot write into the build tree
        lines.append('APT::Sandbox::User "root";')
    config = folder / "apt.conf"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


def environment(config: Path) -> dict[str, str]:
    return {"APT_CONFIG": str(config), "DEBIAN_FRONTEND": "noninteractive"}


def update_argv() -> list[str]:
    return ["apt-get", "-q", "update"]


def download_argv(pins: Sequence[tuple[str, str]]) -> list[str]:
    """`apt-get download name=version ...`: exactly those versions, into the cwd."""
    return ["apt-get", "-q", "download", *[f"{name}={version}" for name, version in pins]]


def madison_argv(packages: Sequence[str]) -> list[str]:
    return ["apt-cache", "madison", *packages]


def parse_madison(output: str) -> dict[str, list[str]]:
    """`apt-cache madison` output -> {package: versions, newest first, as apt orders them}."""
    versions: dict[str, list[str]] = {}
    for line in output.splitlines():
        parts = [part.strip() for part in line.split("|")]
        if len(parts) < 3 or not parts[0] or not parts[1]:
            continue
        if not parts[2].endswith("Packages"):
            continue  # a Sources line (deb-src), not a binary package
        found = versions.setdefault(parts[0], [])
        if parts[1] not in found:
            found.append(parts[1])
    return versions


def run_apt(argv: Sequence[str], config: Path, cwd: Path, log_file: Path) -> CommandResult:
    return run(argv, cwd=cwd, timeout=APT_TIMEOUT, env=environment(config), log_file=log_file)


def available_versions(
    packages: Sequence[str], config: Path, cwd: Path, log_file: Path
) -> dict[str, list[str]]:
    """What the archive offers for `packages` (absent ones are missing from the result)."""
    try:
        result = run(
            madison_argv(packages),
            cwd=cwd,
            timeout=120,
            env=environment(config),
            log_file=log_file,
            ok_codes=(0, 100),
        )
    except CommandFailed:
        return {}
    return parse_madison(result.stdout)


def running_as_root() -> bool:
    return os.geteuid() == 0


def _order(char: str) -> int:
    """dpkg's ordering of one character of a non-digit part: ~ first, letters before others."""
    if char == "~":
        return -1
    if char.isalpha():
        return ord(char)
    return ord(char) + 256


def _compare_part(a: str, b: str) -> int:
    """dpkg's verrevcmp: alternating non-digit and digit runs."""
    i = j = 0
    while i < len(a) or j < len(b):
        first_diff = 0
        while (i < len(a) and not a[i].isdigit()) or (j < len(b) and not b[j].isdigit()):
            ac = _order(a[i]) if i < len(a) and not a[i].isdigit() else 0
            bc = _order(b[j]) if j < len(b) and not b[j].isdigit() else 0
            if ac != bc:
                return ac - bc
            i += 1
            j += 1
        while i < len(a) and a[i] == "0":
            i += 1
        while j < len(b) and b[j] == "0":
            j += 1
        while i < len(a) and a[i].isdigit() and j < len(b) and b[j].isdigit():
            if not first_diff:
                first_diff = ord(a[i]) - ord(b[j])
            i += 1
            j += 1
        if i < len(a) and a[i].isdigit():
            return 1
        if j < len(b) and b[j].isdigit():
            return -1
        if first_diff:
            return first_diff
    return 0


def _split(version: str) -> tuple[int, str, str]:
    epoch, sep, rest = version.partition(":")
    if not sep:
        epoch, rest = "0", version
    upstream, _, revision = rest.rpartition("-") if "-" in rest else (rest, "", "")
    return int(epoch or 0), upstream, revision


def compare_versions(a: str, b: str) -> int:
    """<0, 0, >0 as Debian version `a` sorts before, equal to, after `b` (dpkg's rules)."""
    ea, ua, ra = _split(a)
    eb, ub, rb = _split(b)
    if ea != eb:
        return ea - eb
    return _compare_part(ua, ub) or _compare_part(ra, rb)


def newest(versions: Sequence[str]) -> str | None:
    best: str | None = None
    for version in versions:
        if best is None or compare_versions(version, best) > 0:
            best = version
    return best
