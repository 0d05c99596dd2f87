"""Directories opened so that no symbolic link another user planted is followed: how root
reaches a builder's build/ and artifacts/ to write there (records, kept packages, its log).

A path is walked one component at a time through directory descriptors (openat with
O_NOFOLLOW|O_DIRECTORY), so nothing can be swapped between a check and the open, and a
missing directory is made at its parent's descriptor. Below the `below` anchor no link is
followed at all; above it (or without one) root follows a link only when root owns it (a
builder cannot plant one of those; /lib -> usr/lib keeps working), and any other user follows
links as before. Whoever opens a file in the directory does it at the descriptor
(`dir_fd=`), with O_EXCL or O_NOFOLLOW.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from xdnaforge.errors import StageFailed

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
MAX_LINKS = 40  # as the kernel's MAXSYMLINKS


class LinkRefused(StageFailed):
    """A link (or a non-directory) on the way to where a file is written: one line, a hint."""


def _refuse(where: str, why: str, hint: str) -> LinkRefused:
    return LinkRefused(f"refusing to write through {where}: {why}", hint=hint)


def _step(fd: int, name: str, *, create: bool, mode: int) -> int | os.stat_result:
    """The directory `name` at `fd` (made if missing and `create`), or its lstat when it is
    not one (a link, a file)."""
    for _ in range(3):  # a directory removed or made by someone else between the calls
        try:
            return os.open(name, _DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, mode, dir_fd=fd)
        except NotADirectoryError:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
    raise FileNotFoundError(errno.ENOENT, "it keeps disappearing", name)


def _walk(path: Path, *, create: bool, mode: int, below: Path | None) -> int:
    root = os.geteuid() == 0
    pending = list(path.parts[1:])
    # how many of the pending components lie above the anchor, where root-owned links count
    above = len(below.parts) - 1 if below is not None else len(pending)
    done: list[str] = []  # the components walked, to say where a refusal happened
    links = 0
    fd = os.open("/", _DIRECTORY)
    try:
        while pending:
            name = pending.pop(0)
            strict = above == 0
            above = max(above - 1, 0)
            if name in ("", "."):
                continue
            where = "/" + "/".join([*done, name])
            try:
                found = _step(fd, name, create=create, mode=mode)
            except OSError as error:
                # named in full, as the storage errors say it (state/storage.py)
                raise OSError(error.errno, error.strerror, where) from None
            if isinstance(found, int):
                os.close(fd)
                fd = found
                done = done[:-1] if name == ".." else [*done, name]
                continue
            if not stat.S_ISLNK(found.st_mode):
                raise _refuse(
                    where,
                    "it is not a directory",
                    "give a path whose directories are directories, or move that file aside",
                )
            if strict:
                raise _refuse(
                    where,
                    f"it is a symbolic link (owned by uid {found.st_uid})",
                    f"no link below {below} is followed to write there (a builder could point "
                    "one anywhere); remove it, or name the real directory in site.yaml",
                )
            if root and found.st_uid != 0:
                raise _refuse(
                    where,
                    f"it is a symbolic link owned by uid {found.st_uid}, not by root",
                    "root follows only links that root owns; use the real path",
                )
            links += 1
            if links > MAX_LINKS:
                raise _refuse(where, "too many levels of symbolic links", "use the real path")
            target = os.readlink(name, dir_fd=fd)
            if target.startswith("/"):
                os.close(fd)
                fd = os.open("/", _DIRECTORY)
                done = []
            parts = target.split("/")
            pending[:0] = parts
            above += len(parts)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_directory(
    path: Path, *, below: Path | None = None, create: bool = False, mode: int = 0o777
) -> int:
    """A descriptor of directory `path`, made (with its parents, `mode` minus the umask) when
    missing and `create`. `below`: a directory above `path` from which on no link is
    followed. The caller closes the descriptor."""
    # lexically absolute: resolve() would follow the very links this is about
    path = Path(os.path.abspath(path))  # noqa: PTH100
    if below is not None:
        below = Path(os.path.abspath(below))  # noqa: PTH100
        if not path.is_relative_to(below):
            raise ValueError(f"{path} is not below {below}")
    elif os.geteuid() != 0:
        # nobody's privilege is at stake: links are followed as they always were
        if create:
            path.mkdir(mode=mode, parents=True, exist_ok=True)
        return os.open(path, _DIRECTORY)
    return _walk(path, create=create, mode=mode, below=below)


def is_own_file(fd: int) -> bool:
    """Whether an open file is a regular file with one name, owned by this process's user:
    something this user wrote, not another's file or a hard link to one."""
    st = os.fstat(fd)
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and st.st_uid == os.geteuid()
