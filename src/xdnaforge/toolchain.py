"""The toolchain a build would use: compiler, CMake and Python versions, and the installed
versions of the recipe's build dependencies. Part of the build stages' fingerprint, so an
upgraded compiler or Boost rebuilds, while a new kernel does not.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from .errors import ToolNotFound
from .run import CommandFailed, run
from .tools.dpkg import query_installed

TOOLS = (
    ("gcc", "--version"),
    ("g++", "--version"),
    ("cmake", "--version"),
    ("python3", "--version"),
)


@functools.cache
def _version(tool: str, flag: str) -> str:
    try:
        result = run([tool, flag], cwd=Path.cwd(), timeout=30)
    except (ToolNotFound, CommandFailed):
        return "absent"
    text = (result.stdout or result.stderr).strip()
    return text.splitlines()[0] if text else "unknown"


@functools.cache
def _packages(packages: tuple[str, ...], path: str) -> tuple[tuple[str, str], ...]:
    del path  # part of the cache key: tests put other fakes on PATH
    try:
        installed = query_installed(packages, cwd=Path.cwd(), log_file=None)
    except (ToolNotFound, CommandFailed):
        installed = {}
    return tuple((p, installed.get(p, "absent")) for p in packages)


def query_toolchain(depends: tuple[str, ...] | None) -> dict[str, str]:
    """{"gcc": "gcc (Ubuntu 15.2.0-4ubuntu4) 15.2.0", ..., "deb:libboost-dev": "1.90.0.1"}."""
    versions = {tool: _version(tool, flag) for tool, flag in TOOLS}
    for package, version in _packages(depends or (), os.environ.get("PATH", "")):
        versions[f"deb:{package}"] = version
    return versions
