"""A full or read-only file system under the artifacts directory: one line naming the path and
the fix, no traceback, the records intact, and the build resumes once it is fixed. Needs a
small tmpfs, which only root may mount; skipped with the reason otherwise."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.fixture import FakeTools
from tests.integration.conftest import build
from tests.integration.upstream import BOOST_PATCH


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, check=False)


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs, unmounted by the test."""
    point = tmp_path / "small-fs"
    point.mkdir()
    mounted = _mount("-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs", str(point))
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False)


def fill(where: Path) -> Path:
    """Fill the file system holding `where` with one file; returns it (delete it to free)."""
    filler = where / "filler"
    chunk = b"\0" * 65536
    with filler.open("wb", buffering=0) as handle:
        while shutil.disk_usage(where).free >= len(chunk):
            handle.write(chunk)
        handle.write(b"\0" * shutil.disk_usage(where).free)
    assert shutil.disk_usage(where).free == 0
    return filler


def test_full_artifacts_disk_is_one_line_and_the_build_resumes(
    setup: Path, fake_tools: FakeTools, small_fs: Path
) -> None:
    (setup / "site.yaml").write_text(f"artifacts_dir: {small_fs}\n")
    assert build(setup, fake_tools).rc == 0
    lock = small_fs / "synthetic/lock.json"
    before = lock.read_bytes()
    patch = setup / "patches/synthetic/0001-boost.patch"
    patch.write_text(BOOST_PATCH.replace("Subject: cmake:", "Subject: cmake (v2):"))
    filler = fill(small_fs)
    outcome = build(setup, fake_tools)
    assert outcome.rc == 1
    assert "Traceback" not in outcome.output
    assert f"{lock}: disk full, 0.0 MiB free" in outcome.output
    assert "point build_dir, artifacts_dir or cache_dir in site.yaml" in outcome.output
    assert lock.read_bytes() == before
    json.loads(lock.read_text())
    filler.unlink()
    resumed = build(setup, fake_tools)
    assert resumed.rc == 0, resumed.output


def test_read_only_artifacts_directory_is_one_line(
    setup: Path, fake_tools: FakeTools, small_fs: Path
) -> None:
    (setup / "site.yaml").write_text(f"artifacts_dir: {small_fs}\n")
    (small_fs / "synthetic").mkdir()
    remounted = _mount("-o", "remount,ro", str(small_fs))
    assert remounted.returncode == 0, remounted.stderr
    outcome = build(setup, fake_tools, "fetch", "-t", "synthetic")
    assert outcome.rc == 1
    assert "Traceback" not in outcome.output
    assert ": read-only file system" in outcome.output
    assert str(small_fs / "synthetic") in outcome.output
    assert _mount("-o", "remount,rw", str(small_fs)).returncode == 0
    assert build(setup, fake_tools, "fetch", "-t", "synthetic").rc == 0
