"""The toolchain a build would use: compiler, CMake and Python versions, and the installed
versions of the recipe's build dependencies. Part of the build stages' fingerprint, so an
upgraded compiler or Boost rebuilds, while a new kernel does not.

Each tool is resolved as a build step resolves it (the build environment's PATH, its private
HOME, the build tree as cwd), and recorded with the real file it runs: a pyenv shim first on
the user's PATH is not the interpreter the build gets.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from xdnaforge.errors import ToolNotFound
from xdnaforge.process.run import CommandFailed, run
from xdnaforge.tools.dpkg import query_installed

TOOLS = (
    ("gcc", "--version"),
    ("g++", "--version"),
    ("cmake", "--version"),
)
# the interpreter says what it is, through whatever shim or link leads to it
PYTHON_PROBE = (
    "import os, platform, sys; "
    "print(f'Python {platform.python_version()} ({os.path.realpath(sys.executable)})')"
)

Environment = tuple[tuple[str, str], ...]


@functools.cache
def _version(argv: tuple[str, ...], env: Environment, cwd: str) -> str:
    try:
        result = run(list(argv), cwd=Path(cwd), env=dict(env), timeout=30)
    except (ToolNotFound, CommandFailed):
        return "absent"
    text = (result.stdout or result.stderr).strip()
    first = text.splitlines()[0] if text else "unknown"
    if argv[0] == "python3":
        return first
    program = shutil.which(argv[0], path=dict(env).get("PATH"))
    return f"{first} ({os.path.realpath(program)})" if program else first


@functools.cache
def _packages(packages: tuple[str, ...], path: str) -> tuple[tuple[str, str], ...]:
    del path  # part of the cache key: tests put other fakes on PATH
    try:
        installed = query_installed(packages, cwd=Path.cwd(), log_file=None)
    except (ToolNotFound, CommandFailed):
        installed = {}
    return tuple((p, installed.get(p, "absent")) for p in packages)


def query_toolchain(
    depends: tuple[str, ...] | None, env: Mapping[str, str], cwd: Path
) -> dict[str, str]:
    """{"gcc": "gcc (Debian 12.2.0-14) 12.2.0 (/usr/bin/x86_64-linux-gnu-gcc-12)", ...,
    "python3": "Python 3.11.2 (/usr/bin/python3.11)", "deb:libboost-dev": "1.74.0.3"};
    `env` and `cwd` are those of a build step."""
    key = tuple(sorted(env.items()))
    versions = {tool: _version((tool, flag), key, str(cwd)) for tool, flag in TOOLS}
    versions["python3"] = _version(("python3", "-c", PYTHON_PROBE), key, str(cwd))
    for package, version in _packages(depends or (), os.environ.get("PATH", "")):
        versions[f"deb:{package}"] = version
    return versions
