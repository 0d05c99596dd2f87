"""Comparing two builds' packages: identical, or which files differ."""

from __future__ import annotations

from tests.debs import elf_bytes
from xdnaforge.debs.compare import ARCHIVE_ONLY, CAUSES, compare_builds, explain, summary
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


TREES = ["/srv/build/t", "/srv/build/rebuild/t", "/xdnaforge/work"]


def test_a_wall_clock_date_is_named_as_the_build_date() -> None:
    first = b'static const char date[] = "Tue, 01 Dec 2026 09:27:23 +0000";'
    second = b'static const char date[] = "Tue, 01 Dec 2026 09:52:01 +0000";'
    cause = explain("usr/include/version.h", first, second, TREES)
    assert (cause.cause, cause.path) == ("build date", "usr/include/version.h")
    assert cause.detail == (
        "embeds the build time: 'Tue, 01 Dec 2026 09:27:23' in the first build, "
        "'Tue, 01 Dec 2026 09:52:01' in the second"
    )
    nanoseconds = explain("x", b"t=1764581243123456789\n", b"t=1764581249000000001\n", TREES)
    assert nanoseconds.cause == "build date"


def test_an_embedded_tree_path_is_named_with_the_path() -> None:
    first = b"\0/srv/build/t/src/xrt/core.cpp\0"
    second = b"\0/srv/build/rebuild/t/src/xrt/core.cpp\0"
    cause = explain("usr/lib/libxrt_coreutil.so.2", first, second, TREES)
    assert cause.cause == "embedded path"
    assert cause.detail == "embeds the build tree's path /srv/build/rebuild/t"
    # the canonical path in both builds is the same path: not a cause
    same = b"/xdnaforge/work/src/a.cpp"
    assert explain("x", same + b"1", same + b"2", TREES).cause == "content"


def test_a_different_runpath_is_named() -> None:
    cause = explain(
        "usr/lib/libxrt_core.so",
        elf_bytes("$ORIGIN/../lib"),
        elf_bytes("$ORIGIN/../lib64"),
        TREES,
    )
    assert cause.cause == "RUNPATH"
    assert cause.detail == "RUNPATH '$ORIGIN/../lib' vs '$ORIGIN/../lib64'"


def test_the_same_lines_in_another_order_and_plain_content() -> None:
    assert explain("list.txt", b"a\nb\nc\n", b"c\na\nb\n", TREES).detail == (
        "the same lines in another order"
    )
    content = explain("blob", b"abcdef", b"abcxef", TREES)
    assert (content.cause, content.detail) == ("content", "first difference at byte 3")
    only = explain("new.txt", None, b"x", TREES)
    assert (only.cause, only.detail) == ("only in one build", "only the second build has it")
    assert {c.cause for c in (content, only)} <= set(CAUSES)
