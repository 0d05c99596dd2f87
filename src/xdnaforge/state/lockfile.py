"""Advisory locks (flock) so two runs never share a build directory or an object cache, and
the lock's owner record: who holds it (pid, start, host, command, step, run id).

The kernel drops a flock with its process, even after SIGKILL; the processes that process
started may live on where nothing held them (no PID namespace). They carry the run id in
their environment (XDNAFORGE_RUN), so the next run finds them, says so and refuses, or with
`--stop-stale` stops them. Must not start processes.
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import json
import os
import shlex
import socket
import stat
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from xdnaforge.errors import StageFailed
from xdnaforge.process import containment
from xdnaforge.state import nofollow
from xdnaforge.state.paths import build_lock

# processes of a SIGKILLed namespace take a moment to be reaped; do not call them stale
SETTLE_S = 2.0


@dataclass(frozen=True, slots=True)
class Owner:
    pid: int
    started: str
    host: str
    command: str
    step: str  # the stage running now ("" between stages)
    run: str  # marks every process the run starts (containment.RUN_VARIABLE)

    def describe(self) -> str:
        stage = f", stage {self.step}" if self.step else ""
        return f"pid {self.pid} on {self.host} since {self.started} ({self.command}{stage})"


def read_owner(path: Path) -> Owner | None:
    """The owner recorded in the lock file; an old plain-pid lock gives the pid only."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return _parse(text)


def _parse(text: str) -> Owner | None:
    if text.isdigit():
        return Owner(int(text), "?", "?", "?", "", "")
    try:
        data = json.loads(text)
        return Owner(**{k: data[k] for k in Owner.__dataclass_fields__})
    except (ValueError, TypeError, KeyError):
        return None  # torn or foreign: nothing to say about its owner


def _write(fd: int, owner: Owner) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(asdict(owner), indent=1) + "\n").encode(), 0)


def _stale(previous: Owner) -> list[tuple[containment.Process, str]]:
    deadline = time.monotonic() + SETTLE_S
    left = containment.marked(previous.run)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = containment.marked(previous.run)
    return left


def _check_stale(path: Path, what: str, previous: Owner | None, stop_stale: bool) -> None:
    if previous is None or not previous.run or previous.pid == os.getpid():
        return
    left = _stale(previous)
    if not left:
        return
    stages = sorted({stage for _, stage in left})
    listing = "; ".join(p.describe()[:120] for p, _ in left[:5])
    more = f" and {len(left) - 5} more" if len(left) > 5 else ""
    if not stop_stale:
        raise StageFailed(
            f"{len(left)} process(es) of stage {', '.join(stages)} of a previous run "
            f"({previous.describe()}) still run in {what}: {listing}{more}",
            hint="they write into the same tree; wait for them, or rerun with --stop-stale "
            f"(doit fetch, patch, build and matrix take it) to stop them (lock {path})",
        )
    how = containment.stop([p.pid for p, _ in left])
    print(f"stopped {len(left)} stale process(es) of stage {', '.join(stages)}: {how}")


def _open_lock(path: Path, *, create: bool) -> int:
    """The lock file, opened at its directory's descriptor without following a link (as
    root, `sudo doit install` takes this lock in a build directory the builder owns: a
    planted link at build/.lock to /etc/shadow would be truncated and written), and, as
    root, refused unless it is a regular file with one name owned by root or by the
    directory's owner."""
    directory = nofollow.open_directory(path.parent, create=create)
    try:
        flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(path.name, flags | (os.O_CREAT if create else 0), 0o644, dir_fd=directory)
        except OSError as error:
            raise StageFailed(
                f"cannot open the lock {path}: {error.strerror}"
                + (" (it is a symbolic link)" if error.errno == errno.ELOOP else ""),
                hint=f"remove {path}: the lock is made anew by the next run",
            ) from None
        st, where = os.fstat(fd), os.fstat(directory)
    finally:
        os.close(directory)
    problem = None
    if not stat.S_ISREG(st.st_mode):
        problem = "it is not a regular file"
    elif os.geteuid() == 0 and (st.st_nlink != 1 or st.st_uid not in (0, where.st_uid)):
        problem = "it is a hard link or another user's file"
    if problem is not None:
        os.close(fd)
        raise StageFailed(
            f"refusing the lock {path}: {problem}",
            hint=f"remove {path}: the lock is made anew by the next run",
        )
    return fd


@contextmanager
def held(path: Path, what: str, *, stop_stale: bool = False) -> Iterator[Owner]:
    """Hold an exclusive lock on `path` or fail at once, naming the holder."""
    fd = _open_lock(path, create=True)
    try:
        previous = _parse(os.pread(fd, 4096, 0).decode(errors="replace").strip())
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = previous.describe() if previous else "another process"
            raise StageFailed(
                f"{what} is in use by {holder} (lock {path})",
                hint="wait for the other run to finish; the lock goes away with its process",
            ) from None
        _check_stale(path, what, previous, stop_stale)
        owner = Owner(
            pid=os.getpid(),
            started=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            host=socket.gethostname(),
            command=shlex.join(["doit", *sys.argv[1:]]),
            step="",
            run=uuid.uuid4().hex,
        )
        _write(fd, owner)
        yield owner
    finally:
        # the kernel drops the flock when the descriptor closes, even after SIGKILL
        os.close(fd)


def build_dir_lock(build_dir: Path, *, stop_stale: bool = False) -> AbstractContextManager[Owner]:
    """The build directory's lock: the one way any command takes it (two runs never share
    build/, the caches or the records)."""
    return held(build_lock(build_dir), f"the build directory {build_dir}", stop_stale=stop_stale)


def held_by_us(path: Path) -> Owner | None:
    """The owner record when this process holds the lock (a nested stage asks), else None."""
    owner = read_owner(path)
    return owner if owner is not None and owner.pid == os.getpid() else None


def mark_stage(path: Path, stage: str) -> Owner | None:
    """Record the stage now running in the lock we hold; the owner, None if we hold none."""
    owner = held_by_us(path)
    if owner is None:
        return None
    owner = replace(owner, step=stage)  # the record key stays `step` (docs/records.md)
    fd = _open_lock(path, create=False)
    try:
        _write(fd, owner)
    finally:
        os.close(fd)  # another descriptor: closing it does not drop the lock held by `held`
    return owner
