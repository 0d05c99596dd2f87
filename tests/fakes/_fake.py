"""Shared core of the fake tools in tests/fakes/bin: replay a scenario, strict about argv.

Each fake is a real executable on PATH. Its behaviour comes from the scenario directory in
$FAKE_SCENARIO (canned outputs and exit codes); every call is appended as one JSON line to
$FAKE_CALLS. An argv the fake does not know exits 2 with "fake <tool>: unexpected argv",
so drift in how xdnaforge calls a tool fails the tests.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import NoReturn


def record(tool: str) -> None:
    calls = os.environ.get("FAKE_CALLS")
    if calls:
        entry = {"tool": tool, "argv": sys.argv[1:], "cwd": str(Path.cwd())}
        with Path(calls).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


def scenario() -> Path:
    return Path(os.environ["FAKE_SCENARIO"])


def unexpected(tool: str) -> NoReturn:
    sys.stderr.write(f"fake {tool}: unexpected argv {sys.argv[1:]}\n")
    sys.exit(2)


def replay(tool: str, name: str) -> NoReturn:
    """Print scenario/<tool>/<name>.out (and .err), exit with <name>.rc (default 0)."""
    folder = scenario() / tool
    out = folder / f"{name}.out"
    err = folder / f"{name}.err"
    rc = folder / f"{name}.rc"
    if not out.exists() and not rc.exists():
        sys.stderr.write(f"fake {tool}: the scenario has no {folder.name}/{name}.out\n")
        sys.exit(2)
    if out.exists():
        sys.stdout.write(out.read_text())
    if err.exists():
        sys.stderr.write(err.read_text())
    sys.exit(int(rc.read_text()) if rc.exists() else 0)
