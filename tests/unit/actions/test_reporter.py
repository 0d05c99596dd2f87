"""Failures are said as our messages: no doit frame, no Python repr; a bug says it is one."""

from __future__ import annotations

import io
from types import SimpleNamespace

from doit.exceptions import TaskError, TaskFailed, UnmetDependency

from xdnaforge.actions.reporter import Reporter, failure_text, task_label


def test_private_stage_tasks_are_named_as_the_user_knows_them() -> None:
    assert task_label("_build-xrt:ubuntu26-compat") == "build-xrt ubuntu26-compat"
    assert task_label("build") == "build"


def test_a_failed_task_shows_its_message_alone() -> None:
    fail = TaskFailed("fetch T failed: no commit abc\nhint: update the mirror")
    assert (
        failure_text("_fetch:T", fail) == "fetch T failed: no commit abc\nhint: update the mirror\n"
    )


def test_a_task_not_run_names_the_stage_that_failed_before_it() -> None:
    fail = UnmetDependency("_fetch:T")
    assert failure_text("_patch:T", fail) == "patch T: not run, since fetch T failed\n"


def test_a_bug_is_said_to_be_one_with_its_traceback() -> None:
    try:
        raise KeyError("x")
    except KeyError as error:
        fail = TaskError("Python Task error", error)
    text = failure_text("build", fail)
    assert text.startswith("build: internal error (a bug in xdnaforge; please report it)\n")
    assert "KeyError" in text


def test_the_reporter_writes_no_doit_frame() -> None:
    out = io.StringIO()
    reporter = Reporter(out, {})
    task = SimpleNamespace(name="_fetch:T", actions=[1], options={}, executed=True)
    reporter.add_failure(task, TaskFailed("the message"))
    reporter.complete_run()
    assert out.getvalue() == "the message\n"
    assert "taskid" not in out.getvalue()


def test_a_help_page_is_not_announced_as_a_task_start() -> None:
    out = io.StringIO()
    reporter = Reporter(out, {})
    reporter.execute_task(SimpleNamespace(name="build", actions=[1], options={"help": True}))
    assert out.getvalue() == ""
    reporter.execute_task(
        SimpleNamespace(name="build", actions=[1], options={}, title=lambda: "build")
    )
    assert out.getvalue() == ".  build\n"
