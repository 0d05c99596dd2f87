"""mypy --strict and ruff are part of the suite, so `pytest` alone is the gate."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

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


LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))


def _lint_imports(root: Path, src: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--config", str(REPO / "pyproject.toml")],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(src)},
        capture_output=True,
        text=True,
        check=False,
    )


def test_import_contracts_are_kept() -> None:
    done = _lint_imports(REPO, REPO / "src")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout


def _package_copy(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(
        REPO / "src/xdnaforge", src / "xdnaforge", ignore=shutil.ignore_patterns("__pycache__")
    )
    return src


def _add_import(module: Path, line: str) -> None:
    module.write_text(module.read_text() + f"\n{line}\n")


def test_an_upward_import_breaks_the_layers_contract(tmp_path: Path) -> None:
    src = _package_copy(tmp_path)
    _add_import(src / "xdnaforge/state/paths.py", "from xdnaforge.stages import build")
    done = _lint_imports(tmp_path, src)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "xdnaforge.state.paths -> xdnaforge.stages.build" in done.stdout


def test_an_import_cycle_breaks_the_cycle_contract(tmp_path: Path) -> None:
    src = _package_copy(tmp_path)
    # process/run.py imports process/sandbox.py; the reverse closes a cycle inside process/
    _add_import(src / "xdnaforge/process/sandbox.py", "from xdnaforge.process import run")
    done = _lint_imports(tmp_path, src)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "No cycles are allowed in xdnaforge.process" in done.stdout
