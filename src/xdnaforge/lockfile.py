"""Advisory locks (flock) so two runs never share a build directory or an object cache."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import StepFailed


@contextmanager
def held(path: Path, what: str) -> Iterator[None]:
    """Hold an exclusive lock on `path` or fail at once, naming the holder's pid."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "another process"
            raise StepFailed(
                f"{what} is in use by pid {holder} (lock {path})",
                hint="wait for the other run to finish; the lock goes away with its process",
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        # the kernel drops the flock when the descriptor closes, even after SIGKILL
        os.close(fd)
