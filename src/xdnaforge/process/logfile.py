"""Opening a command's log for append, never through a link: what run() writes its `+ argv`
lines and output to, and what root appends to in a builder's build/ directory.

The log is opened O_APPEND|O_CREAT|O_NOFOLLOW, at a descriptor of its directory; as root it
is also opened non-blocking (a FIFO planted there cannot hang the install) and refused unless
it is a regular file with one link, owned by root or by its directory's owner: a builder's
symlink or hard link to /etc/shadow is never appended to. Each refusal is one line.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path
from typing import TextIO

from xdnaforge.errors import StageFailed

_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY


class LogRefused(StageFailed):
    """A log that is not a file root may append to."""


def _refused(log: Path, why: str) -> LogRefused:
    return LogRefused(
        f"refusing to append to {log}: {why}",
        hint="someone else can write this directory; remove that entry (a new log is created) "
        "and rerun",
    )


def append_at(dir_fd: int, name: str, log: Path, mode: int = 0o666) -> int:
    """The descriptor of log `name` in the directory `dir_fd`, opened for append (`log`: its
    path, for messages)."""
    root = os.geteuid() == 0
    try:
        fd = os.open(name, _FLAGS | (os.O_NONBLOCK if root else 0), mode, dir_fd=dir_fd)
    except OSError as error:
        if error.errno == errno.ELOOP or stat.S_ISLNK(_lstat(dir_fd, name)):
            raise _refused(log, "it is a symbolic link") from None
        if root and error.errno == errno.ENXIO:  # a FIFO nobody reads
            raise _refused(log, "it is a FIFO, not a file") from None
        raise OSError(error.errno, error.strerror, str(log)) from None
    if not root:
        return fd
    try:
        st, directory = os.fstat(fd), os.fstat(dir_fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refused(log, "it is not a regular file")
        if st.st_nlink > 1:
            raise _refused(log, f"it has {st.st_nlink} names (a hard link to another file?)")
        if st.st_uid not in (0, directory.st_uid):
            raise _refused(
                log, f"it is owned by uid {st.st_uid}, neither root nor the directory's owner"
            )
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _lstat(dir_fd: int, name: str) -> int:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        return 0


def open_log(log: Path, *, buffering: int = -1) -> TextIO:
    """`log` opened for append as text, its directory made if missing."""
    log.parent.mkdir(parents=True, exist_ok=True)
    dir_fd = os.open(log.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fd = append_at(dir_fd, log.name, log)
    finally:
        os.close(dir_fd)
    return os.fdopen(fd, "a", encoding="utf-8", buffering=buffering)
