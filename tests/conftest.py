"""Shared fixtures: the repository root, a writable copy of the project's configuration, and
`require_tool`, the one way a test says which system tool it drives."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NoReturn

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
    "apt-get": "apt",
    "aptly": "aptly",
    "bwrap": "bubblewrap",
    "chromium": "chromium",
    "diffoscope": "diffoscope-minimal",
    "dpkg": "dpkg",
    "g++": "g++",
    "dpkg-deb": "dpkg",
    "dpkg-query": "dpkg",
    "dpkg-repack": "dpkg-repack",
    "git": "git",
    "gpg": "gnupg",
    "lava_common": "lava-common",  # a Python package (Debian's), not a program
    "Python.h": "python3-dev",  # the running interpreter's C headers, not a program
    "xz": "xz-utils",
}


def require_tool(name: str) -> str:
    """The tool's path; the test skips with the reason when it is missing (fails in CI)."""
    if name not in TOOL_PACKAGES:
        raise KeyError(f"{name}: add it and its Debian package to TOOL_PACKAGES")
    path = shutil.which(name)
    if path is None:
        missing_tool(name, "which is not installed")
    return path


def missing_tool(name: str, why: str) -> NoReturn:
    """Skips (or, under XDNAFORGE_REQUIRE_TOOLS=1, fails) a test whose tool is unusable."""
    package = TOOL_PACKAGES[name]
    reason = f"needs {name} (Debian package {package}), {why}"
    if os.environ.get(REQUIRE_TOOLS) == "1":
        pytest.fail(
            f"{reason}; {REQUIRE_TOOLS}=1 forbids skipping for a missing tool: "
            f"install it in .ci/run (packages=(... {package}))",
            pytrace=False,
        )
    pytest.skip(reason)


# a test's figures for the summary at the end of every run (record_property(FIGURES, text)):
# printed by the controller, so they show when the workers of pytest-xdist ran the tests
FIGURES = "xdnaforge-figures"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for status in ("passed", "failed"):
        for report in terminalreporter.stats.get(status, []):
            for name, text in getattr(report, "user_properties", ()):
                if name == FIGURES and getattr(report, "when", "") == "call":
                    terminalreporter.write_sep("-", report.nodeid.split("::")[-1])
                    terminalreporter.write_line(str(text))


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
