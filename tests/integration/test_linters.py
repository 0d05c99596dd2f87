"""mypy --strict and ruff are part of the suite, so `pytest` alone is the gate."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *argv], cwd=REPO, capture_output=True, text=True, check=False
    )


def test_ruff_check() -> None:
    done = _run("ruff", "check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format() -> None:
    done = _run("ruff", "format", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict() -> None:
    done = _run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
