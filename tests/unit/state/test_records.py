"""Records are replaced atomically, created O_EXCL|O_NOFOLLOW in a directory reached without
following a link that someone else planted."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from xdnaforge.state import records
from xdnaforge.state.nofollow import LinkRefused
from xdnaforge.state.records import read_record, write_atomic, write_record


def test_a_link_at_the_record_is_replaced_not_written_through(tmp_path: Path) -> None:
    target = tmp_path / "passwd"
    target.write_text("root:x:0:0\n")
    record = tmp_path / "install.json"
    record.symlink_to(target)
    write_record(
        record, "install", {"target": "T", "root": "/", "state": "installed", "installed": []}
    )
    assert not record.is_symlink()
    assert (read_record(record) or {})["state"] == "installed"
    assert target.read_text() == "root:x:0:0\n"


def test_below_an_anchor_a_linked_directory_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "cron.d"
    elsewhere.mkdir()
    (tmp_path / "artifacts").mkdir()
    (tmp_path / "artifacts/T").symlink_to(elsewhere)
    with pytest.raises(LinkRefused, match="artifacts/T: it is a symbolic link"):
        write_atomic(tmp_path / "artifacts/T/install.json", "{}\n", below=tmp_path)
    assert list(elsewhere.iterdir()) == []


def test_a_record_gets_the_mode_a_new_file_gets_and_leaves_no_temp_file(tmp_path: Path) -> None:
    mask = os.umask(0o027)
    try:
        write_atomic(tmp_path / "a/b/report.md", "text\n")
    finally:
        os.umask(mask)
    assert (tmp_path / "a/b/report.md").read_text() == "text\n"
    assert (tmp_path / "a/b/report.md").stat().st_mode & 0o777 == 0o640
    assert [p.name for p in (tmp_path / "a/b").iterdir()] == ["report.md"]


@pytest.mark.skipif(os.geteuid() != 0, reason="root's rule: links another user owns")
def test_as_root_a_directory_link_another_user_owns_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "etc"
    elsewhere.mkdir()
    link = tmp_path / "artifacts"
    link.symlink_to(elsewhere)
    os.lchown(link, 65534, 65534)
    with pytest.raises(LinkRefused, match="owned by uid 65534, not by root"):
        write_atomic(link / "BUILD_REPORT.md", "report\n")
    assert list(elsewhere.iterdir()) == []


def test_a_failure_at_the_directory_descriptor_names_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def read_only(_dir_fd: int, name: str) -> tuple[int, str]:
        raise OSError(errno.EROFS, "Read-only file system", f".{name}.0123abcd.tmp")

    monkeypatch.setattr(records, "_create_temp", read_only)
    with pytest.raises(OSError, match="Read-only") as failed:
        write_atomic(tmp_path / "lock.json", "{}\n")
    assert failed.value.filename == str(tmp_path / "lock.json")
