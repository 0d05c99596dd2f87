"""The action every command of dodo.py runs: its help page when given --help, else the
command's own action with the options it takes.

doit parses a task's options itself and refused `doit build --help` ("option --help not
recognized", exit 3): each task now has a --help option of its own, and this is what reads it.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from xdnaforge.actions import helppage

HELP = {
    "name": "help",
    "long": "help",
    "type": bool,
    "default": False,
    "help": "show this command's options, examples, exit codes and doc page",
}

PROGRAM_ENV = "XDNAFORGE_PROGRAM"  # set by the `xdnaforge` command: its pages say its name


def program() -> str:
    return os.environ.get(PROGRAM_ENV) or "doit"


def task_name(task: Any) -> str:
    return str(task.name)


def page(task: Any) -> str:
    """The help page of a doit Task (its doc line and its params)."""
    return helppage.render(task_name(task), str(task.doc or ""), task.params, program())


def _accepted(action: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    """The options `action` takes, as doit would give them (by parameter name)."""
    parameters = inspect.signature(action).parameters
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return options
    return {name: value for name, value in options.items() if name in parameters}


def run_or_help(action: Callable[..., Any], args: Sequence[Any], task: Any, **options: Any) -> Any:
    """doit's action for a command: `--help` prints the page and runs nothing."""
    if options.pop("help", False):
        sys.stdout.write(page(task))
        return None
    return action(*args, **_accepted(action, options))
