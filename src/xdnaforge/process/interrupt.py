"""Being asked to stop: SIGTERM raised as Interrupted (Ctrl-C already is KeyboardInterrupt), the
one line that says what was stopped, and the exit status shells expect (128 + signal).

process/run.py stops the processes; actions/pipeline.py marks the stage's record. This module
starts nothing.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from xdnaforge.errors import Interrupted


def _raise(signum: int, _frame: FrameType | None) -> None:
    raise Interrupted(signum)


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """While inside, SIGTERM raises Interrupted in the main thread, as SIGINT raises
    KeyboardInterrupt; the previous handler comes back afterwards (nesting is harmless)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; doit runs actions there
        return
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def as_interrupted(stop: BaseException) -> Interrupted:
    return stop if isinstance(stop, Interrupted) else Interrupted(signal.SIGINT)


def leave(stop: Interrupted, what: str) -> SystemExit:
    """Say in one line what was stopped and that a rerun resumes; the exit to raise."""
    stopped = f" ({stop.stopped})" if stop.stopped else ""
    print(
        f"interrupted by {stop.signal_name}: stopped {what}{stopped}; the last good records "
        "and packages are kept; run the same command again to resume",
        file=sys.stderr,
        flush=True,
    )
    return SystemExit(stop.exit_code)
