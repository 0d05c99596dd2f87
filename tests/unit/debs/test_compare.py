"""Comparing two builds' packages: identical, or which files differ."""

from __future__ import annotations

from xdnaforge.debs.compare import ARCHIVE_ONLY, compare_builds, summary
from xdnaforge.debs.control import Fields
from xdnaforge.debs.debfile import DebContents, Entry


def deb(sha: str, files: dict[str, str], version: str = "2.20.0") -> DebContents:
    contents = DebContents(
        file="x.deb", sha256=sha, control=Fields({"Package": "xrt-npu", "Version": version})
    )
    contents.entries = [Entry(path=p, kind="file", size=1, link=None) for p in files]
    contents.digests = dict(files)
    return contents


def test_identical_packages_are_reproducible() -> None:
    same = deb("a" * 64, {"opt/lib.so": "1"})
    result = compare_builds({"xrt-npu": same}, {"xrt-npu": deb("a" * 64, {"opt/lib.so": "1"})})
    assert summary(result) == (True, 0)


def test_the_differing_file_is_named() -> None:
    first = deb("a" * 64, {"opt/lib.so": "1", "opt/version.h": "t1"})
    second = deb("b" * 64, {"opt/lib.so": "1", "opt/version.h": "t2"})
    result = compare_builds({"xrt-npu": first}, {"xrt-npu": second})
    assert result[0].differing == ("opt/version.h",)
    assert summary(result) == (False, 1)


def test_same_files_in_another_archive_is_said() -> None:
    first = deb("a" * 64, {"opt/lib.so": "1"})
    second = deb("b" * 64, {"opt/lib.so": "1"})
    assert compare_builds({"p": first}, {"p": second})[0].differing == (ARCHIVE_ONLY,)


def test_control_fields_and_missing_packages_count() -> None:
    first = deb("a" * 64, {"opt/lib.so": "1"}, version="1")
    second = deb("b" * 64, {"opt/lib.so": "1"}, version="2")
    result = compare_builds({"p": first, "q": first}, {"p": second})
    assert result[0].differing == ("control:Version",)
    assert result[1].second_sha256 is None
    assert summary(result) == (False, 2)
