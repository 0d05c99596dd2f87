"""The README's two commands stay true: CI runs the test command verbatim."""

from __future__ import annotations

from tests.conftest import REPO


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
