"""Shared fixtures: the repository root, a writable copy of the project's configuration, and
`require_tool`, the one way a test says which system tool it drives."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.fakes.fixture import FakeTools, make_fake_tools

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"

# Set by .ci/run: there every tool is installed, so a missing one is a broken CI image, and a
# suite that passed by skipping would prove nothing.
REQUIRE_TOOLS = "XDNAFORGE_REQUIRE_TOOLS"
# Every tool a test drives -> the Debian package that provides it. A tool must be listed here
# to be required; tests/unit/test_readme.py checks that .ci/run installs each package and the
# README names it, so a new tool cannot be skipped silently in CI or forgotten in the docs.
TOOL_PACKAGES = {
    "dpkg": "dpkg",
    "dpkg-deb": "dpkg",
    "dpkg-query": "dpkg",
    "dpkg-repack": "dpkg-repack",
    "git": "git",
    "xz": "xz-utils",
}


def require_tool(name: str) -> str:
    """The tool's path; the test skips with the reason when it is missing (fails in CI)."""
    package = TOOL_PACKAGES[name]  # KeyError: add the tool and its package above
    path = shutil.which(name)
    if path:
        return path
    reason = f"needs {name} (Debian package {package}), which is not installed"
    if os.environ.get(REQUIRE_TOOLS) == "1":
        pytest.fail(
            f"{reason}; {REQUIRE_TOOLS}=1 forbids skipping for a missing tool: "
            f"install it in .ci/run (packages=(... {package}))",
            pytrace=False,
        )
    pytest.skip(reason)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "tools(*names): system tools the test drives (skips when one is missing)"
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("tools"):
        for name in marker.args:
            require_tool(name)


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
