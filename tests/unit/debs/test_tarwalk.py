"""The tar header walk: the same members as tarfile on every format, errors where it is silent."""

from __future__ import annotations

import contextlib
import io
import tarfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xdnaforge.debs import tarwalk
from xdnaforge.debs.streams import PieceReader


def pieces(data: bytes, size: int = 700) -> PieceReader:
    """A stream in uneven pieces, as decompression hands them over."""
    return PieceReader(iter([data[i : i + size] for i in range(0, len(data), size)]))


def walk(data: bytes) -> list[tuple[str, str, int, str, bytes]]:
    stream = pieces(data)
    found = []
    for member in tarwalk.members(stream):
        content = stream.read(member.size) if member.isreg() else b""
        found.append((member.name, member.kind, member.size, member.link, content))
    return found


def with_tarfile(data: bytes) -> list[tuple[str, str, int, str, bytes]]:
    kinds = {tarfile.DIRTYPE: "dir", tarfile.SYMTYPE: "symlink", tarfile.LNKTYPE: "hardlink"}
    found = []
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        for info in archive:
            kind = "file" if info.isreg() else kinds.get(info.type, "other")
            extracted = archive.extractfile(info) if info.isreg() else None
            content = extracted.read() if extracted else b""
            found.append((info.name, kind, info.size, info.linkname, content))
    return found


def archive(members: list[tuple[str, str, bytes]], form: int) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=form) as tar:
        for name, kind, content in members:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type = tarfile.DIRTYPE
            elif kind in ("symlink", "hardlink"):
                info.type = tarfile.SYMTYPE if kind == "symlink" else tarfile.LNKTYPE
                info.linkname = content.decode("utf-8", "surrogateescape")
            elif kind == "fifo":
                info.type = tarfile.FIFOTYPE
            else:
                info.size = len(content)
            tar.addfile(info, io.BytesIO(content) if kind == "file" else None)
    return out.getvalue()


LONG = "./usr/lib/" + "very-long-directory-name/" * 8 + "libfile.so.2"
MEMBERS = [
    ("./", "dir", b""),
    ("./usr/", "dir", b""),
    ("./usr/bin/tool", "file", b"\x7fELF" + bytes(3000)),
    ("./usr/share/empty", "file", b""),
    ("./usr/share/exact", "file", b"x" * 512),
    (LONG, "file", b"content"),
    ("./usr/lib/link", "symlink", LONG.encode()),
    ("./usr/lib/hard", "hardlink", b"./usr/bin/tool"),
    ("./usr/share/doc/naïve-ü.txt", "file", "ünïcode".encode()),
    ("./run/fifo", "fifo", b""),
]


@pytest.mark.parametrize("form", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT, tarfile.USTAR_FORMAT])
def test_every_format_lists_what_tarfile_lists(form: int) -> None:
    members = MEMBERS
    if form == tarfile.USTAR_FORMAT:  # ustar: a prefix field, no link targets over 100 bytes
        members = [m for m in MEMBERS if m[1] != "symlink"]
    data = archive(members, form)
    assert walk(data) == with_tarfile(data)
    assert [m[0] for m in walk(data)][5] == LONG


def test_a_pax_global_header_applies_to_the_members_after_it() -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.pax_headers = {"comment": "global"}
        tar.addfile(tarfile.TarInfo("./a"), io.BytesIO(b""))
    data = out.getvalue()
    assert walk(data) == with_tarfile(data) == [("./a", "file", 0, "", b"")]


def test_a_pax_size_overrides_the_header_size() -> None:
    info = tarfile.TarInfo("./big")
    info.size = 5
    info.pax_headers = {"size": "5"}
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(info, io.BytesIO(b"hello"))
    data = bytearray(out.getvalue())
    assert walk(bytes(data)) == [("./big", "file", 5, "", b"hello")]


def corrupt(data: bytes, offset: int, value: bytes) -> bytes:
    return data[:offset] + value + data[offset + len(value) :]


def test_a_damaged_header_in_the_middle_is_an_error_where_tarfile_ends_quietly() -> None:
    data = archive(MEMBERS, tarfile.GNU_FORMAT)
    third = 1024  # "./" and "./usr/" are one header each, with no data
    broken = corrupt(data, third + 10, b"X")
    assert len(with_tarfile(broken)) == 2  # tarfile: the listing just ends
    with pytest.raises(tarwalk.TarError, match="checksum mismatch"):
        walk(broken)


def test_data_cut_short_is_an_error() -> None:
    data = archive(MEMBERS, tarfile.GNU_FORMAT)
    cut = data.index(b"\x7fELF") + 100
    with pytest.raises(tarwalk.TarError, match="cut short"):
        walk(data[:cut])


def test_a_header_cut_short_is_an_error() -> None:
    data = archive(MEMBERS, tarfile.GNU_FORMAT)
    with pytest.raises(tarwalk.TarError, match="header at byte 512 is cut short"):
        walk(data[:700])


def test_an_archive_without_its_end_blocks_ends_after_the_last_member() -> None:
    data = archive(MEMBERS[:2], tarfile.GNU_FORMAT)
    assert [m[0] for m in walk(data[:1024])] == [".", "./usr"]


def test_a_long_name_with_no_member_after_it_is_an_error() -> None:
    data = archive([(LONG, "file", b"")], tarfile.GNU_FORMAT)
    with pytest.raises(tarwalk.TarError, match="extension header"):
        walk(data[:1024])  # the ././@LongLink header and its data, then the end


def test_a_damaged_pax_record_is_an_error() -> None:
    info = tarfile.TarInfo("./a")
    info.pax_headers = {"comment": "x"}
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(info, io.BytesIO(b""))
    data = out.getvalue()
    record = data.index(b" comment=x\n") - 2  # "NN comment=x\n"
    with pytest.raises(tarwalk.TarError, match="pax header"):
        walk(corrupt(data, record, b"zz"))


def test_a_gnu_sparse_member_is_refused() -> None:
    header = bytearray(archive([("./a", "file", b"")], tarfile.GNU_FORMAT)[:512])
    header[156:157] = b"S"
    header[148:156] = b"        "
    header[148:156] = f"{sum(header):06o}\0 ".encode()
    with pytest.raises(tarwalk.TarError, match="sparse"):
        walk(bytes(header) + bytes(1024))


def test_base_256_sizes_are_read() -> None:
    header = bytearray(archive([("./a", "file", b"")], tarfile.GNU_FORMAT)[:512])
    header[124:136] = b"\x80" + (3).to_bytes(11, "big")
    header[148:156] = b"        "
    header[148:156] = f"{sum(header):06o}\0 ".encode()
    assert walk(bytes(header) + b"abc".ljust(512, b"\0") + bytes(1024)) == [
        ("./a", "file", 3, "", b"abc")
    ]


names = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\0"), min_size=1, max_size=150
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    members=st.lists(
        st.tuples(
            names.map(lambda n: "./" + n.strip("/").replace("//", "/") or "./x"),
            st.sampled_from(["file", "dir", "symlink", "hardlink", "fifo"]),
            st.binary(max_size=1500),
        ),
        max_size=6,
    ),
    form=st.sampled_from([tarfile.GNU_FORMAT, tarfile.PAX_FORMAT]),
)
def test_any_archive_tarfile_writes_is_listed_as_tarfile_reads_it(
    members: list[tuple[str, str, bytes]], form: int
) -> None:
    data = archive(members, form)
    assert walk(data) == with_tarfile(data)


SEED = archive(MEMBERS, tarfile.PAX_FORMAT)


@settings(max_examples=300, deadline=None)
@given(
    cuts=st.lists(
        st.tuples(st.integers(0, len(SEED) - 1), st.binary(min_size=1, max_size=8)), max_size=4
    ),
    truncate=st.integers(0, len(SEED)),
)
def test_damaged_archives_raise_only_tar_error(
    cuts: list[tuple[int, bytes]], truncate: int
) -> None:
    data = bytearray(SEED)
    for offset, replacement in cuts:
        data[offset : offset + len(replacement)] = replacement
    with contextlib.suppress(tarwalk.TarError):  # any other exception fails the test
        walk(bytes(data[:truncate]))
