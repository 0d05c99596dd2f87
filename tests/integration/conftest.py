"""Integration helpers: run the real `doit` on a project directory, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO


@dataclass(frozen=True)
class Outcome:
    rc: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_doit(project: Path, *args: str, env: dict[str, str] | None = None) -> Outcome:
    """`doit <args>` with the repository's dodo.py acting on `project` (its recipes etc.)."""
    child_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(project / "home"),
        "LC_ALL": "C.UTF-8",
        "XDNAFORGE_PROJECT_DIR": str(project),
        "XDNAFORGE_SYSROOT": str(project / "sysroot"),
        **(env or {}),
    }
    # cwd is the repository: doit reads its plugin configuration from pyproject.toml there
    done = subprocess.run(
        [sys.executable, "-m", "doit", "-f", str(REPO / "dodo.py"), *args],
        cwd=REPO,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Outcome(done.returncode, done.stdout, done.stderr)


def tree(root: Path) -> dict[str, int]:
    """Every file under root with its size and mtime, to prove that nothing changed."""
    return {
        str(p.relative_to(root)): p.stat().st_mtime_ns
        for p in sorted(root.rglob("*"))
        if p.is_file() or p.is_dir()
    }
