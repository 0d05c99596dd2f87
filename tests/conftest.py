"""Shared fixtures: the repository root and a writable copy of the project's configuration."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.fakes.fixture import FakeTools, make_fake_tools

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """A copy of the shipped recipes, matrices and patches that a test may break."""
    root = tmp_path / "project"
    root.mkdir()
    for name in ("recipes", "matrices", "patches"):
        shutil.copytree(REPO / name, root / name)
    return root


@pytest.fixture
def fake_tools(tmp_path: Path) -> FakeTools:
    """Fake system and hardware tools first on PATH, replaying a per-test scenario."""
    return make_fake_tools(tmp_path / "fakes")
