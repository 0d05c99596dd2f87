"""Disk full, read-only file systems and permission errors on the build, artifacts and cache
directories, as one line naming the path, the space needed when known, and the fix; and the
swap that puts a complete new directory tree in place of the old one.

Records are written atomically (state/records.py), so such an error leaves the previous records
in place; this module only says what happened. Starts no process.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from xdnaforge.errors import StageFailed

STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})
MIB = 1024 * 1024


def _mebibytes(size: int) -> str:
    return f"{size / MIB:.1f} MiB"


def _where(path: Path) -> Path:
    """The nearest existing directory at or above path: the file system it is on."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path("/")


def free_space(path: Path) -> int:
    return shutil.disk_usage(_where(path)).free


def describe(error: OSError, path: Path | None = None, needed: int | None = None) -> StageFailed:
    """The one-line StageFailed for a storage OSError (path: where it happened, if the error
    does not say)."""
    where = Path(os.fsdecode(error.filename)) if error.filename else path
    shown = str(where) if where is not None else "a file xdnaforge writes"
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        kind = "disk full" if error.errno == errno.ENOSPC else "disk quota exceeded"
        free = f", {_mebibytes(free_space(where))} free" if where is not None else ""
        need = f"; needs {_mebibytes(needed)}" if needed else ""
        return StageFailed(
            f"{shown}: {kind}{need}{free}",
            hint="free space there (the trees under build/ can be rebuilt; artifacts/ holds "
            "the records), or point build_dir, artifacts_dir or cache_dir in site.yaml at a "
            "larger file system; then run the same command again: it resumes",
        )
    if error.errno == errno.EROFS:
        return StageFailed(
            f"{shown}: read-only file system",
            hint="remount it read-write, or point build_dir, artifacts_dir or cache_dir in "
            "site.yaml at a writable directory",
        )
    return StageFailed(
        f"{shown}: permission denied ({error.strerror})",
        hint="run as the user who owns it (`ls -ld` the directory), fix its ownership, or "
        "point build_dir, artifacts_dir or cache_dir in site.yaml at a directory of yours",
    )


def is_storage_error(error: OSError) -> bool:
    return error.errno in STORAGE_ERRNOS


def require_space(destination: Path, files: Iterable[Path]) -> None:
    """Fail before copying `files` into `destination` when its file system cannot hold them."""
    needed = sum(path.stat().st_size for path in files)
    free = free_space(destination)
    if needed > free:
        raise describe(
            OSError(errno.ENOSPC, "No space left on device", str(destination)), needed=needed
        )


def swap_in(new: Path, live: Path) -> None:
    """Put the complete tree `new` where `live` is; the old tree goes only once the new one is
    in place, so a run killed at any point leaves one good tree (and at most a `.old` one)."""
    if not live.exists():
        new.rename(live)
        return
    retired = live.with_name(live.name + ".old")
    if retired.exists():
        shutil.rmtree(retired)
    live.rename(retired)
    new.rename(live)
    shutil.rmtree(retired)
