"""The build directory's lock: its owner record, and the refusal that names the holder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from xdnaforge.errors import StageFailed
from xdnaforge.state.lockfile import held, held_by_us, mark_stage, read_owner


def test_the_lock_records_its_owner_and_the_step(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    with held(lock, "the build directory") as owner:
        assert owner.pid == os.getpid()
        assert len(owner.run) == 32
        mark_stage(lock, "build-xrt@synthetic")
        recorded = json.loads(lock.read_text())
        assert recorded["step"] == "build-xrt@synthetic"
        assert recorded["run"] == owner.run
        assert {"pid", "started", "host", "command"} <= set(recorded)
        assert held_by_us(lock) == read_owner(lock)


def test_a_held_lock_is_refused_naming_the_holder_and_its_step(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    with held(lock, "the build directory"):
        mark_stage(lock, "build-xrt@synthetic")
        # another open of the file is another flock holder, even in this process
        with pytest.raises(StageFailed) as refused, held(lock, "the build directory"):
            pass
    message = str(refused.value)
    assert f"the build directory is in use by pid {os.getpid()} on " in message
    assert "stage build-xrt@synthetic" in message


def test_a_lock_of_an_older_version_gives_the_pid(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    lock.write_text("4242")
    owner = read_owner(lock)
    assert owner is not None
    assert owner.pid == 4242


def test_a_link_planted_at_the_lock_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    # `sudo doit install` takes the lock in a build directory the builder can write
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$hash:19000:0:99999:7:::\n")
    lock = tmp_path / "build/.lock"
    lock.parent.mkdir()
    lock.symlink_to(secret)
    with pytest.raises(StageFailed) as caught, held(lock, "the build directory"):
        pass
    assert (
        caught.value.message
        == f"cannot open the lock {lock}: Too many levels of symbolic links (it is a symbolic link)"
    )
    assert secret.read_text() == "root:$6$hash:19000:0:99999:7:::\n"


def test_a_fifo_at_the_lock_is_refused_without_waiting(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    os.mkfifo(lock)
    with pytest.raises(StageFailed) as caught, held(lock, "the build directory"):
        pass
    assert caught.value.message == f"refusing the lock {lock}: it is not a regular file"
