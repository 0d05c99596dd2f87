"""Holding a step's whole process tree: the PID-namespace argv prefix, finding the tree's
processes in /proc, and stopping them (SIGTERM, a grace period, SIGKILL).

Owns no process start (process/run.py does that) and no policy about when to stop
(process/run.py and state/lockfile.py decide). A `make -j` starts compilers that may leave the
process group, so the group alone does not hold a build: a PID namespace whose init dies with
xdnaforge does.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.errors import Interrupted

# The host step's wrapper. bubblewrap sees the whole file system (--dev-bind / /), so the step
# runs as it would without it, but in a new PID namespace (with its own /proc): when bwrap
# dies (--die-with-parent: when xdnaforge dies, even by SIGKILL or the OOM killer) its init,
# pid 1 of the namespace, dies and the kernel kills every process left in the namespace,
# however many sessions they started. An environment (issue i12's rootfs) replaces this
# prefix with its own bwrap argv that has the same two options; never both.
PID_NAMESPACE_PREFIX = (
    "bwrap",
    "--dev-bind",
    "/",
    "/",
    "--unshare-pid",
    "--die-with-parent",
    "--proc",
    "/proc",
    "--",
)
# wrapper processes are not sent SIGTERM: their death would end the namespace with SIGKILL at
# once and rob make of the chance to delete its half-written targets
WRAPPERS = frozenset({"bwrap"})
# the variables that mark every process a step starts (the environment is inherited)
RUN_VARIABLE = "XDNAFORGE_RUN"
STEP_VARIABLE = "XDNAFORGE_STEP"
GRACE_S = 5.0


@dataclass(frozen=True, slots=True)
class Process:
    pid: int
    parent: int
    name: str  # /proc/PID/comm
    command: str  # /proc/PID/cmdline, spaces for NULs

    def describe(self) -> str:
        return f"{self.pid} {self.command or self.name}"


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # gone meanwhile, or not ours to read
        return b""


def read_process(pid: int, proc: Path = Path("/proc")) -> Process | None:
    stat = _read(proc / str(pid) / "stat").decode(errors="replace")
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split at the last ")"
    head, _, rest = stat.rpartition(")")
    fields = rest.split()
    if not head or len(fields) < 2 or fields[0] in {"Z", "X"}:
        return None  # exited (a zombie holds nothing and cannot be signalled away)
    command = _read(proc / str(pid) / "cmdline").replace(b"\0", b" ").decode(errors="replace")
    return Process(pid, int(fields[1]), head.partition("(")[2], command.strip())


def all_processes(proc: Path = Path("/proc")) -> list[Process]:
    found = []
    for pid in sorted(int(entry.name) for entry in proc.iterdir() if entry.name.isdigit()):
        process = read_process(pid, proc)
        if process is not None:
            found.append(process)
    return found


def descendants(pid: int, proc: Path = Path("/proc")) -> list[Process]:
    """Every living process below `pid`, parents before children. Inside a PID namespace,
    orphans are adopted by the namespace's init, so they stay below the wrapper."""
    children: dict[int, list[Process]] = {}
    for process in all_processes(proc):
        children.setdefault(process.parent, []).append(process)
    found: list[Process] = []
    queue = [pid]
    while queue:
        for child in children.get(queue.pop(0), []):
            found.append(child)
            queue.append(child.pid)
    return found


def marked(run: str, proc: Path = Path("/proc")) -> list[tuple[Process, str]]:
    """The living processes whose environment carries XDNAFORGE_RUN=run, with their step."""
    wanted = f"{RUN_VARIABLE}={run}".encode()
    found = []
    for process in all_processes(proc):
        environment = _read(proc / str(process.pid) / "environ").split(b"\0")
        if wanted in environment:
            prefix = f"{STEP_VARIABLE}=".encode()
            step = next((v[len(prefix) :] for v in environment if v.startswith(prefix)), b"")
            found.append((process, step.decode(errors="replace") or "?"))
    return found


def send(pids: Iterable[int], signum: signal.Signals) -> None:
    for pid in pids:
        # exited meanwhile; or not ours, and then not the step's either
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def alive(pids: Iterable[int]) -> list[int]:
    return [pid for pid in pids if read_process(pid) is not None]


def stop(pids: Sequence[int], *, grace: float = GRACE_S) -> str:
    """SIGTERM, wait up to `grace` seconds, SIGKILL what is left; say which it took.
    A second Ctrl-C while waiting kills at once."""
    send(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace
    try:
        while alive(pids) and time.monotonic() < deadline:
            time.sleep(0.05)
    except (KeyboardInterrupt, Interrupted):
        send(pids, signal.SIGKILL)
        return "killed (SIGKILL) at the second interruption"
    left = alive(pids)
    if not left:
        return "terminated (SIGTERM)"
    send(left, signal.SIGKILL)
    return f"killed (SIGKILL) after SIGTERM was ignored for {grace:g} s"
