"""What doit prints about tasks, in xdnaforge's words: a failed task's message once, whole,
with no `TaskFailed - taskid:` frame and no Python repr; a bug's traceback under one line
that says it is a bug.

doit's ConsoleReporter frames every failure as `<ExceptionClass> - taskid:<task>` and, for a
task that did not run because one before it failed, adds a second frame. Our actions' messages
already say what failed, where and what to do (actions/pipeline.guarded), so the frame only
hides them. Used for `doit` and `xdnaforge` alike (dodo.py's DOIT_CONFIG), and by the nested
runs of `doit build` and `doit matrix`.
"""

from __future__ import annotations

from typing import Any

from doit.exceptions import TaskError, UnmetDependency
from doit.reporter import ConsoleReporter


def task_label(name: str) -> str:
    """A task's name as the user knows it: `_build-xrt:T` is the stage `build-xrt` of T."""
    if name.startswith("_") and ":" in name:
        stage, target = name[1:].split(":", 1)
        return f"{stage} {target}"
    return name


def failure_text(name: str, fail: Any) -> str:
    """The lines shown for a failed task: the message alone (it says what and where), a
    skipped task in one line, and a bug's traceback under a line saying it is one."""
    message = str(getattr(fail, "message", "") or "").rstrip("\n")
    if isinstance(fail, UnmetDependency):
        # doit's message is the names of the failed tasks it depended on
        before = ", ".join(task_label(n) for n in message.split())
        return f"{task_label(name)}: not run, since {before} failed\n"
    if isinstance(fail, TaskError):
        trace = "".join(getattr(fail, "traceback", "") or "")
        head = f"{task_label(name)}: internal error (a bug in xdnaforge; please report it)"
        return f"{head}\n{message}\n{trace}".rstrip("\n") + "\n"
    return message + "\n"


class Reporter(ConsoleReporter):  # type: ignore[misc]
    """doit's console reporter with failures said as xdnaforge's messages."""

    desc = "console output, failures as xdnaforge's messages"

    def execute_task(self, task: Any) -> None:
        if (getattr(task, "options", None) or {}).get("help"):
            return  # `TASK --help` prints a page, not the start of a task
        super().execute_task(task)

    def _write_failure(self, result: dict[str, Any], write_exception: bool = True) -> None:
        if write_exception:
            self.write(failure_text(str(result["task"].name), result["exception"]))

    def complete_run(self) -> None:
        # doit repeats a failed task's output here only for tasks below verbosity 2; ours
        # are all verbosity 2, so only doit's own runtime errors are left to say
        if self.runtime_errors:
            self.write("stopped: " + "; ".join(str(m) for m in self.runtime_errors) + "\n")
