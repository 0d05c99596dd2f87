"""Storage errors as one line: the path, the space needed when known, the fix."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from xdnaforge.errors import StageFailed
from xdnaforge.state.storage import describe, is_storage_error, require_space


def test_disk_full_names_the_path_the_free_space_and_the_fix(tmp_path: Path) -> None:
    error = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "lock.json"))
    failure = describe(error)
    first, hint = str(failure).splitlines()
    assert first.startswith(f"{tmp_path / 'lock.json'}: disk full, ")
    assert first.endswith(" MiB free")
    assert "artifacts_dir" in hint
    assert "resumes" in hint


def test_permission_denied_says_whose_it_is(tmp_path: Path) -> None:
    failure = describe(OSError(errno.EACCES, "Permission denied"), tmp_path / "build")
    assert (
        str(failure).splitlines()[0]
        == f"{tmp_path / 'build'}: permission denied (Permission denied)"
    )
    assert "run as the user who owns it" in str(failure)


def test_read_only_file_system() -> None:
    failure = describe(OSError(errno.EROFS, "Read-only file system", "/srv/artifacts/x.json"))
    assert str(failure).startswith("/srv/artifacts/x.json: read-only file system\nhint: remount")


def test_only_storage_errors_are_translated() -> None:
    assert is_storage_error(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert not is_storage_error(OSError(errno.ENOENT, "No such file or directory"))


def test_files_larger_than_the_free_space_fail_before_copying(tmp_path: Path) -> None:
    huge = tmp_path / "xrt-base.deb"
    size = shutil.disk_usage(tmp_path).free + (1 << 30)
    with huge.open("wb") as handle:
        os.truncate(handle.fileno(), size)  # sparse: larger than the disk, on no disk
    destination = tmp_path / "artifacts"
    with pytest.raises(StageFailed) as raised:
        require_space(destination, [huge])
    assert str(raised.value).startswith(f"{destination}: disk full; needs {size / 2**20:.1f} MiB, ")
    assert not destination.exists()
