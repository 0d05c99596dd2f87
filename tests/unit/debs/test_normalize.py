"""Normalising a .deb's archive metadata: two builds' files with the same content become the
same bytes; the content and what dpkg reads stay as they were."""

from __future__ import annotations

import gzip
import io
import lzma
import tarfile

import pytest

from xdnaforge.debs.debfile import read_deb_stream
from xdnaforge.debs.normalize import NormalizeError, data_files, normalize

EPOCH = 1_733_000_000
FILES = {
    "./opt/xilinx/xrt/bin/xrt-smi": b"\x7fELF binary",
    "./opt/xilinx/xrt/lib/libxrt_core.so.2": b"library",
    "./opt/xilinx/xrt/version.json": b'{"BUILD_VERSION_DATE": "x"}\n',
}


def tar(order: list[str], *, mtime: int, uid: int, mode: int) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name in order:
            if name.endswith("/"):
                info = tarfile.TarInfo(name.rstrip("/"))
                info.type = tarfile.DIRTYPE
                info.mode = mode | 0o111
            else:
                info = tarfile.TarInfo(name)
                info.size = len(FILES[name])
                info.mode = mode
            info.mtime, info.uid, info.gid = mtime, uid, uid
            info.uname = info.gname = "builder" if uid else "root"
            archive.addfile(info, io.BytesIO(FILES.get(name, b"")) if info.isfile() else None)
    return out.getvalue()


def ar(members: list[tuple[str, bytes]], mtime: int) -> bytes:
    out = [b"!<arch>\n"]
    for name, data in members:
        out.append(f"{name:<16}{mtime:<12}{1000:<6}{1000:<6}{100664:<8}{len(data):<10}`\n".encode())
        out += [data, b"\n" if len(data) % 2 else b""]
    return b"".join(out)


def deb(order: list[str], *, mtime: int, uid: int = 1000, mode: int = 0o664) -> bytes:
    control = b"Package: xrt-npu\nVersion: 2.19.0\nArchitecture: amd64\n"
    control_tar = io.BytesIO()
    with tarfile.open(fileobj=control_tar, mode="w") as archive:
        info = tarfile.TarInfo("./control")
        info.size, info.mtime, info.uid = len(control), mtime, uid
        archive.addfile(info, io.BytesIO(control))
    return ar(
        [
            ("debian-binary", b"2.0\n"),
            ("control.tar.gz", gzip.compress(control_tar.getvalue(), mtime=mtime)),
            ("data.tar.xz", lzma.compress(tar(order, mtime=mtime, uid=uid, mode=mode))),
        ],
        mtime,
    )


DIRS = ["./opt/", "./opt/xilinx/", "./opt/xilinx/xrt/", "./opt/xilinx/xrt/bin/"]
DIRS.append("./opt/xilinx/xrt/lib/")
# name order, a directory before what it holds: the normal form
ORDERED = [*DIRS[:4], *list(FILES)[:1], DIRS[4], *list(FILES)[1:]]


def test_two_builds_with_the_same_content_become_the_same_bytes() -> None:
    first = deb(ORDERED, mtime=EPOCH + 600)
    second = deb([*reversed(FILES), *reversed(DIRS)], mtime=EPOCH + 1300, uid=1001, mode=0o644)
    assert first != second
    a, b = normalize(first, EPOCH), normalize(second, EPOCH)
    assert a.data == b.data
    assert "mtimes clamped to SOURCE_DATE_EPOCH (9 entries)" in a.changes
    assert "owners set to root:root (9 entries)" in a.changes
    assert "group/other write removed (8 entries)" in a.changes
    assert "members put in name order (1 archives)" in b.changes
    assert "members put in name order (1 archives)" not in a.changes
    assert normalize(a.data, EPOCH) == type(a)(a.data, ())  # the normal form is a fixed point


def test_the_content_and_control_survive_and_entries_are_normal() -> None:
    done = normalize(deb([*reversed(FILES), *DIRS], mtime=EPOCH + 5), EPOCH).data
    contents = read_deb_stream(io.BytesIO(done), "x.deb", digests=True)
    assert contents.package == "xrt-npu"
    assert contents.control["Version"] == "2.19.0"
    names = {path.removeprefix("./"): data for path, data in FILES.items()}
    assert data_files(done, set(names)) == names
    member = done.index(b"data.tar.xz")
    assert done[member + 16 : member + 28].strip() == str(EPOCH).encode()
    size = int(done[member + 48 : member + 58])
    data = lzma.decompress(done[member + 60 : member + 60 + size])
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        infos = archive.getmembers()
    assert [i.name for i in infos] == sorted(
        (i.name for i in infos), key=lambda n: tuple(n.split("/"))
    )
    assert infos[0].name == "./opt"  # a directory before what it holds
    assert {(i.uid, i.gid, i.uname, i.gname) for i in infos} == {(0, 0, "root", "root")}
    assert {i.mtime for i in infos} == {EPOCH}
    assert {i.mode & 0o022 for i in infos} == {0}


def test_older_mtimes_are_kept() -> None:
    done = normalize(deb(list(FILES), mtime=EPOCH - 86400), EPOCH)
    assert not any(change.startswith("mtimes") for change in done.changes)


def test_not_a_deb_is_refused() -> None:
    with pytest.raises(NormalizeError, match="no ar archive signature"):
        normalize(b"PK\x03\x04", EPOCH)
