"""git through run.run(), isolated from the user's configuration, plus pure parsers.

GitPython answers questions about objects (is a commit there, its date, .gitmodules);
transport and checkout go through here so every call has a timeout, a log and the same
scoped settings: local mirrors need `protocol.file.allow=always` for submodules since
git 2.38, given per command with `-c`, never written to any configuration file.
"""

from __future__ import annotations

import configparser
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.process.run import CommandResult, run

# The user's ~/.gitconfig and /etc/gitconfig could rewrite URLs, sign, or prompt; our git
# calls see neither, never ask for credentials, and allow local mirrors for submodules.
GIT_ENV = {
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "true",
}
SCOPED_CONFIG = ("protocol.file.allow=always", "advice.detachedHead=false", "core.autocrlf=false")
FETCH_TIMEOUT = 3600.0
LOCAL_TIMEOUT = 600.0


def git(
    args: Sequence[str],
    *,
    cwd: Path,
    log_file: Path | None,
    timeout: float = LOCAL_TIMEOUT,
    ok_codes: Sequence[int] = (0,),
    input_text: str | None = None,
) -> CommandResult:
    argv = ["git"]
    for setting in SCOPED_CONFIG:
        argv += ["-c", setting]
    argv += list(args)
    return run(
        argv,
        cwd=cwd,
        env=GIT_ENV,
        timeout=timeout,
        log_file=log_file,
        ok_codes=ok_codes,
        input_text=input_text,
    )


@dataclass(frozen=True, slots=True)
class SubmoduleEntry:
    name: str
    path: str
    url: str


def parse_gitmodules(text: str) -> list[SubmoduleEntry]:
    """`.gitmodules` sections -> entries (name, path, url); sections missing either are skipped."""
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    # git config syntax: indented keys, `[submodule "name"]` sections
    parser.read_string("\n".join(line.strip() for line in text.splitlines()))
    entries = []
    for section in parser.sections():
        match = re.fullmatch(r'submodule\s+"(.+)"', section)
        if not match:
            continue
        path = parser.get(section, "path", fallback=None)
        url = parser.get(section, "url", fallback=None)
        if path and url:
            entries.append(SubmoduleEntry(name=match.group(1), path=path.strip("/"), url=url))
    return entries


@dataclass(frozen=True, slots=True, kw_only=True)
class Gitlink:
    """One submodule of a tree: its full path, where it comes from, the recorded commit."""

    path: str  # xrt, xrt/src/runtime_src/core/common/aiebu
    url: str
    commit: str
    available: bool  # some mirror (or the object cache) holds the commit
    fetched_from: str


def parse_gitlinks(ls_tree: str) -> dict[str, str]:
    """`git ls-tree -r <commit>` output -> {path: commit} for submodule entries (mode 160000)."""
    links = {}
    for line in ls_tree.splitlines():
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[0] == "160000" and parts[1] == "commit":
            links[path] = parts[2]
    return links


def resolve_url(url: str, parent_url: str) -> str:
    """Submodule URLs may be relative to the parent's (`../aiebu.git`)."""
    if not url.startswith(("./", "../")):
        return url
    base = parent_url.rstrip("/")
    for part in url.split("/"):
        if part == "..":
            base = base.rsplit("/", 1)[0]
        elif part not in (".", ""):
            base = f"{base}/{part}"
    return base


def normalize_url(url: str) -> str:
    """For comparing URLs: no trailing slash, no `.git`, lowercase host part."""
    text = url.strip().rstrip("/").removesuffix(".git")
    match = re.match(r"^([a-z+]+://)([^/]+)(.*)$", text)
    if match:
        return match.group(1) + match.group(2).lower() + match.group(3)
    return text


def is_local(source: str) -> bool:
    """A path or file:// URL: reachable without a network (scp-like `host:path` is remote)."""
    if source.startswith(("/", "./", "../", "file://")):
        return True
    return "://" not in source and ":" not in source


def cache_name(url: str) -> str:
    """A directory name for the object cache of an upstream URL."""
    text = normalize_url(url)
    text = re.sub(r"^[a-z+]+://", "", text)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") + ".git"


@dataclass(frozen=True, slots=True)
class ApplyFailure:
    file: str | None
    line: str | None
    message: str


def parse_apply_error(stderr: str) -> ApplyFailure:
    """`git apply --check` failure text -> the file and hunk line it names."""
    file = line = None
    for text in stderr.splitlines():
        match = re.match(r"error: patch failed: (.+):(\d+)$", text.strip())
        if match:
            file, line = match.group(1), match.group(2)
            break
        match = re.match(
            r"error: (.+?): (does not exist in index|No such file or directory|"
            r"already exists in working directory|patch does not apply)$",
            text.strip(),
        )
        if match and file is None:
            file = match.group(1)
    message = " / ".join(t.strip() for t in stderr.splitlines() if t.strip().startswith("error:"))
    return ApplyFailure(file=file, line=line, message=message or stderr.strip())
