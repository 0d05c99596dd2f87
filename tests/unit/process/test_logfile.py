"""A command's log is appended to, never through a link; as root, never another's file."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from xdnaforge.process.logfile import LogRefused, open_log

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the checks made for root")


def test_a_log_is_made_with_its_directory_and_appended_to(tmp_path: Path) -> None:
    log = tmp_path / "logs/install.log"
    for line in ("one\n", "two\n"):
        with open_log(log) as handle:
            handle.write(line)
    assert log.read_text() == "one\ntwo\n"


def test_a_link_at_the_log_is_refused_and_its_target_unchanged(tmp_path: Path) -> None:
    target = tmp_path / "shadow"
    target.write_text("root:x:0:\n")
    log = tmp_path / "install.log"
    log.symlink_to(target)
    with pytest.raises(LogRefused) as refused:
        open_log(log)
    assert refused.value.message == f"refusing to append to {log}: it is a symbolic link"
    assert target.read_text() == "root:x:0:\n"


def test_a_dangling_link_at_the_log_creates_nothing(tmp_path: Path) -> None:
    (tmp_path / "install.log").symlink_to(tmp_path / "ld.so.preload")
    with pytest.raises(LogRefused):
        open_log(tmp_path / "install.log")
    assert not (tmp_path / "ld.so.preload").exists()


@as_root
def test_as_root_a_hard_link_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "shadow"
    target.write_text("root:x:0:\n")
    os.link(target, tmp_path / "install.log")
    with pytest.raises(LogRefused, match="it has 2 names"):
        open_log(tmp_path / "install.log")
    assert target.read_text() == "root:x:0:\n"


@as_root
def test_as_root_a_fifo_is_refused_without_waiting_for_a_reader(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "install.log")
    refused: list[BaseException] = []

    def attempt() -> None:
        try:
            open_log(tmp_path / "install.log")
        except LogRefused as error:
            refused.append(error)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive()
    assert "it is a FIFO, not a file" in str(refused[0])


@as_root
def test_as_root_the_file_of_a_third_user_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "install.log"
    log.write_text("")
    os.chown(log, 65534, 65534)  # the directory is root's
    with pytest.raises(LogRefused, match="owned by uid 65534, neither root nor the directory's"):
        open_log(log)


@as_root
def test_as_root_the_directory_owners_log_is_appended_to(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "install.log").write_text("theirs\n")
    for path in (logs, logs / "install.log"):
        os.chown(path, 65534, 65534)
    with open_log(logs / "install.log") as handle:
        handle.write("root's\n")
    assert (logs / "install.log").read_text() == "theirs\nroot's\n"
