"""The README's two commands stay true: CI runs the test command verbatim."""

from __future__ import annotations

import re

from tests.conftest import REPO, REQUIRE_TOOLS, TOOL_PACKAGES


def _commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if line.startswith("    ")]


def test_readme_has_exactly_two_commands() -> None:
    commands = _commands()
    assert len(commands) == 2
    assert commands[0].startswith("python3 -m venv .venv && .venv/bin/pip install -e . &&")
    assert commands[1].endswith(".venv/bin/pytest")


def test_ci_runs_the_readme_test_command() -> None:
    test_command = _commands()[1]
    ci_lines = [line.strip() for line in (REPO / ".ci/run").read_text().splitlines()]
    assert test_command in ci_lines


def test_ci_installs_every_tool_the_tests_require_and_forbids_skipping_for_one() -> None:
    ci = (REPO / ".ci/run").read_text()
    listed = re.search(r"^packages=\((.*)\)$", ci, re.MULTILINE)
    assert listed is not None
    assert set(TOOL_PACKAGES.values()) <= set(listed.group(1).split())
    exported = ci.index(f"export {REQUIRE_TOOLS}=1")
    assert exported < ci.index(_commands()[1])


def test_readme_names_every_package_a_test_may_skip_without() -> None:
    section = (REPO / "README.md").read_text().split("## Two commands", 1)[1].split("\n## ")[0]
    for package in set(TOOL_PACKAGES.values()) - {"dpkg", "git"}:
        assert f"`{package}`" in section
    assert REQUIRE_TOOLS in section
