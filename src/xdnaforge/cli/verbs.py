"""doit's own verbs that do not apply to xdnaforge's tasks, refused in one line when `doit`
runs xdnaforge's dodo.py (the `xdnaforge` command does not offer them at all).

Registered as doit COMMAND plugins (pyproject's `doit.COMMAND` entry points), which replace
doit's commands of the same name; for any other project's dodo.py they do what doit's do.
`doit dumpdb` read build/.doit.db as a dbm file and ended in a traceback; `doit info` printed
internal dicts.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from doit.cmd_clean import Clean as _Clean
from doit.cmd_completion import TabCompletion as _TabCompletion
from doit.cmd_dumpdb import DumpDB as _DumpDB
from doit.cmd_forget import Forget as _Forget
from doit.cmd_help import Help as _Help
from doit.cmd_ignore import Ignore as _Ignore
from doit.cmd_info import Info as _Info
from doit.cmd_resetdep import ResetDep as _ResetDep
from doit.cmd_run import Run as _Run
from doit.cmd_strace import Strace as _Strace
from doit.cmdparse import CmdParseError

from xdnaforge.actions import command
from xdnaforge.cli.parse_errors import plain
from xdnaforge.cli.refused import refusal
from xdnaforge.errors import EXIT_CONFIG

BACKEND = "xdnaforge-json"  # what marks xdnaforge's dodo.py (its DOIT_CONFIG)


def _ours(command: Any, params: Any) -> bool:
    """Whether the dodo.py doit loaded is xdnaforge's."""
    command.loader.setup(params)
    config = command.loader.load_doit_config()
    return bool(config.get("backend") == BACKEND)


def _refuse(verb: str) -> int:
    print(refusal(verb, "doit"), file=sys.stderr)
    return EXIT_CONFIG


class Info(_Info):  # type: ignore[misc]
    def execute(self, params: Any, args: Any) -> Any:
        return _refuse("info") if _ours(self, params) else super().execute(params, args)


class Strace(_Strace):  # type: ignore[misc]
    def execute(self, params: Any, args: Any) -> Any:
        return _refuse("strace") if _ours(self, params) else super().execute(params, args)


class Forget(_Forget):  # type: ignore[misc]
    def execute(self, params: Any, args: Any) -> Any:
        return _refuse("forget") if _ours(self, params) else super().execute(params, args)


class Ignore(_Ignore):  # type: ignore[misc]
    def execute(self, params: Any, args: Any) -> Any:
        return _refuse("ignore") if _ours(self, params) else super().execute(params, args)


class ResetDep(_ResetDep):  # type: ignore[misc]
    def execute(self, params: Any, args: Any) -> Any:
        return _refuse("reset-dep") if _ours(self, params) else super().execute(params, args)


class Clean(_Clean):  # type: ignore[misc]
    def execute(self, params: Any, args: Any) -> Any:
        return _refuse("clean") if _ours(self, params) else super().execute(params, args)


class TabCompletion(_TabCompletion):  # type: ignore[misc]
    def execute(self, opt_values: Any, pos_args: Any) -> Any:
        if _ours(self, opt_values):
            return _refuse("tabcompletion")
        return super().execute(opt_values, pos_args)


class DumpDB(_DumpDB):  # type: ignore[misc]
    def execute(self, opt_values: Any, pos_args: Any) -> Any:
        # dumpdb loads no dodo.py: the one in this directory says whose project it is
        dodo = Path("dodo.py")
        if dodo.is_file() and "xdnaforge" in dodo.read_text(errors="replace"):
            return _refuse("dumpdb")
        return super().execute(opt_values, pos_args)


class Help(_Help):  # type: ignore[misc]
    """`doit help TASK`: for xdnaforge's tasks the same page as `doit TASK --help` (options,
    two examples, exit codes, the doc page) instead of doit's three lines."""

    def _execute(self, pos_args: Any) -> Any:
        tasks = {t.name: t for t in self.task_list}
        task = tasks.get(pos_args[0])
        if task is not None and any(p.get("name") == "help" for p in task.params):
            print(command.page(task), end="")
            return True
        return super()._execute(pos_args)


class Run(_Run):  # type: ignore[misc]
    """doit's run, with a wrong option said in one plain line (doit's message is a repr)."""

    def execute(self, params: Any, args: Any) -> Any:
        try:
            return super().execute(params, args)
        except CmdParseError as error:
            if self.loader.load_doit_config().get("backend") != BACKEND:
                raise
            task = next((a for a in args if not a.startswith("-")), None)
            raise CmdParseError(plain(str(error), task, command.program())) from None
