"""Where the `xdnaforge` command finds the project, and how it reads -C."""

from __future__ import annotations

from pathlib import Path

from xdnaforge.cli.main import project_dir, split_directory


def test_c_comes_before_the_task_in_every_spelling() -> None:
    assert split_directory(["-C", "/p", "build", "-t", "x"]) == ("/p", ["build", "-t", "x"])
    assert split_directory(["--directory=/p", "plan"]) == ("/p", ["plan"])
    assert split_directory(["-C/p", "plan"]) == ("/p", ["plan"])
    # a task's own -C-looking value after the task is the task's
    assert split_directory(["audit", "-C", "x"]) == (None, ["audit", "-C", "x"])


def test_the_project_is_c_then_the_environment_then_here_then_dodo_s(tmp_path: Path) -> None:
    dodo = tmp_path / "checkout/dodo.py"
    here = tmp_path / "here"
    (here / "recipes").mkdir(parents=True)
    env = {"XDNAFORGE_PROJECT_DIR": str(tmp_path / "env")}
    assert project_dir(str(tmp_path / "c"), env, here, dodo) == tmp_path / "c"
    assert project_dir(None, env, here, dodo) == tmp_path / "env"
    assert project_dir(None, {}, here, dodo) == here
    assert project_dir(None, {}, tmp_path, dodo) == tmp_path / "checkout"


def test_which_command_lines_only_ask_for_help() -> None:
    from xdnaforge.cli.main import asks_help

    assert asks_help(["build", "--help"])
    assert asks_help(["help", "validate"])
    assert asks_help(["-f", "dodo.py", "help", "build"])  # doit's own option before it
    assert asks_help(["man"])
    assert asks_help([])  # xdnaforge alone prints the overview
    assert not asks_help([], bare_is_help=False)  # doit alone runs its default task
    assert not asks_help(["-f", "dodo.py"], bare_is_help=False)
    assert not asks_help(["build", "--target", "ubuntu26-compat"])
