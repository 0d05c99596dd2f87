"""The step keeper: holds a step's whole process tree where no PID namespace can be made
(no bubblewrap, or user namespaces refused), so that a killed xdnaforge leaves nothing
running.

`python -m xdnaforge.process.keeper PARENT -- ARGV...` marks itself a child subreaper
(every orphan of the step, however it daemonised, is re-parented to the keeper, not to
init) and asks for SIGTERM when its parent, xdnaforge, dies, even by SIGKILL
(PR_SET_PDEATHSIG). It forks and execs the step, and ends the tree, SIGTERM, a grace
period, SIGKILL (containment.stop), when it is told to stop, when xdnaforge dies, and when
the step itself exits: as a PID namespace ends with its init. Its exit status is the
step's. It imports little (containment only) and starts the step with fork and exec: it is
part of the process layer process/run.py owns.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from collections.abc import Sequence

from xdnaforge.process import containment

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _reap() -> None:
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                return
        except ChildProcessError:
            return


def _end_tree() -> None:
    """Every process below the keeper: SIGTERM, the grace period, SIGKILL; then whatever
    was started meanwhile (a shell loop's next command), SIGKILL at once, until none is left."""
    tree = [p.pid for p in containment.descendants(os.getpid())]
    if tree:
        containment.stop(tree)
    for _ in range(100):
        _reap()
        left = [p.pid for p in containment.descendants(os.getpid())]
        if not left:
            return
        containment.send(left, signal.SIGKILL)
        time.sleep(0.02)


def _stop(signum: int, _frame: object) -> None:
    for stopping in _STOPPING:
        signal.signal(stopping, signal.SIG_IGN)
    _end_tree()
    os._exit(128 + signum)


def main(args: Sequence[str]) -> int:
    if len(args) < 3 or args[1] != "--" or not args[0].isdigit():
        print("usage: python -m xdnaforge.process.keeper PARENT -- ARGV...", file=sys.stderr)
        return 2
    parent, argv = int(args[0]), list(args[2:])
    if not _prctl(_PR_SET_CHILD_SUBREAPER, 1) or not _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM):
        print("xdnaforge keeper: prctl is not available; the tree is not held", file=sys.stderr)
    if os.getppid() != parent:
        return 128 + signal.SIGTERM  # xdnaforge died before the keeper could watch it
    for stopping in _STOPPING:
        signal.signal(stopping, _stop)
    child = os.fork()
    if child == 0:
        for stopping in _STOPPING:
            signal.signal(stopping, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as error:
            print(f"xdnaforge keeper: cannot run {argv[0]}: {error.strerror}", file=sys.stderr)
        os._exit(127)
    status = 0
    while True:
        try:
            pid, raw = os.waitpid(-1, 0)  # the step, or an orphan re-parented to the keeper
        except ChildProcessError:
            break
        if pid == child:
            status = os.waitstatus_to_exitcode(raw)
            break
    _end_tree()  # what the step left behind ends with it, as in a PID namespace
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
