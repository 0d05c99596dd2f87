"""Host contamination rules: packages that point back into the machine that built them. Pure.

A run path, pkg-config file or CMake config that names the build tree, the source tree or a
home or temporary directory works on the build host and nowhere else (or, worse, loads
whatever a user later puts there). These are warnings: the package is not a kernel payload,
but it was not built cleanly. The rules read DebContents; the host paths are given by the
caller (the audit stage knows the workspace), never looked up here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.debs.debfile import DebContents

# directories no installed package may refer to: whatever is there belongs to one machine
HOST_DIRECTORIES = (
    ("/home", "a home directory"),
    ("/root", "root's home directory"),
    ("/tmp", "a temporary directory"),
    ("/var/tmp", "a temporary directory"),
)
# a run path into /usr/local loads whatever the admin installed there; a pkg-config or CMake
# file may list it as one search location among others (systemd.pc does), so texts may
RUN_PATH_DIRECTORIES = (("/usr/local", "the host's locally installed software"),)
RULES = (
    ("HOST-001", "executable or library whose RPATH/RUNPATH points into the build host"),
    ("HOST-002", "pkg-config file that points into the build host"),
    ("HOST-003", "CMake package configuration that points into the build host"),
    ("HOST-004", "executable or library whose dynamic section cannot be read"),
)
# an absolute path inside a line: after a quote, space, =, ;, :, comma, ( or -I/-L
_PATH_RE = re.compile(r"""(?:^|(?<=[\s"'=;:,(])|(?<=-[IL]))(/[^\s"';:,()]+)""")


@dataclass(frozen=True, slots=True)
class HostPaths:
    """Where the build happened, most specific first: (directory, what it is)."""

    directories: tuple[tuple[str, str], ...]
    run_path_only: tuple[tuple[str, str], ...] = RUN_PATH_DIRECTORIES

    def what(self, path: str, run_path: bool = False) -> str | None:
        """What host location `path` lies in, or None for a path that is fine."""
        extra = self.run_path_only if run_path else ()
        for directory, what in (*self.directories, *extra):
            if path == directory or path.startswith(directory.rstrip("/") + "/"):
                return what
        return None


def host_paths(named: Sequence[tuple[Path, str]] = ()) -> HostPaths:
    """The build's own directories (build tree, sources, project) and the usual host ones."""
    own = [(str(path), what) for path, what in named if str(path) != "/"]
    return HostPaths(directories=(*own, *HOST_DIRECTORIES))


def wants_text(path: str) -> bool:
    """pkg-config and CMake configuration files, whose content the rules read."""
    name = path.rpartition("/")[2]
    return (name.endswith(".pc") and "/pkgconfig/" in f"/{path}") or name.endswith(".cmake")


def _run_path_problem(entry: str, host: HostPaths) -> str | None:
    if entry == "":
        return "an empty entry, which means the current directory"
    if entry.startswith(("$ORIGIN", "${ORIGIN}")):
        return None  # relative to the library itself: the relocatable way
    if not entry.startswith("/"):
        return "a relative path, resolved against the current directory"
    what = host.what(entry, run_path=True)
    return f"in {what}" if what else None


def _text_problems(text: str, host: HostPaths) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        for match in _PATH_RE.finditer(line):
            what = host.what(match.group(1))
            if what:
                found.append(f"line {number}: {line.strip()[:160]} ({match.group(1)}: {what})")
                break
    return found


def host_findings(deb: DebContents, host: HostPaths) -> Iterable[tuple[str, str, str]]:
    """(rule, path, evidence) for every file that points into the build host."""
    for path, run_paths in sorted(deb.run_paths.items()):
        problems = [
            f"{run_path.tag} {run_path.value}: {entry or '(empty)'} is {problem}"
            for run_path in run_paths
            for entry in run_path.value.split(":")
            if (problem := _run_path_problem(entry, host))
        ]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            yield "HOST-001", path, problems[0] + more
    for path, text in sorted(deb.texts.items()):
        if not wants_text(path):
            continue
        problems = _text_problems(text, host)
        if problems:
            rule = "HOST-003" if path.endswith(".cmake") else "HOST-002"
            more = f" (and {len(problems) - 1} more lines)" if len(problems) > 1 else ""
            yield rule, path, problems[0] + more
    for path, reason in sorted(deb.unreadable_elf.items()):
        yield "HOST-004", path, f"{reason}; its run paths were not checked"
