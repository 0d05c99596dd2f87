"""The tar header walk: what dpkg reads, as tarfile lists it; errors where tarfile is silent
or dpkg would read differently."""

from __future__ import annotations

import contextlib
import io
import re
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
    kinds[tarfile.FIFOTYPE] = "fifo"
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


@pytest.mark.parametrize("form", [tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT])
def test_every_format_lists_what_tarfile_lists(form: int) -> None:
    members = MEMBERS
    if form == tarfile.USTAR_FORMAT:  # ustar: a prefix field, no link targets over 100 bytes
        members = [m for m in MEMBERS if m[1] != "symlink"]
    data = archive(members, form)
    assert walk(data) == with_tarfile(data)
    assert [m[0] for m in walk(data)][5] == LONG


def test_pax_headers_are_refused_as_dpkg_refuses_them() -> None:
    # dpkg 1.21 stops with "unsupported PAX tar header type 'x'"; a pax path would otherwise
    # hide the ustar name the audit judges
    for headers in ({"path": "./lib/modules/x.ko"}, {"comment": "x"}):
        info = tarfile.TarInfo("./usr/share/harmless")
        info.pax_headers = headers
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
            tar.addfile(info, io.BytesIO(b""))
        with pytest.raises(tarwalk.TarError, match="pax header"):
            walk(out.getvalue())
    out = io.BytesIO()
    with tarfile.open(
        fileobj=out, mode="w", format=tarfile.PAX_FORMAT, pax_headers={"comment": "global"}
    ) as tar:
        tar.addfile(tarfile.TarInfo("./a"), io.BytesIO(b""))
    with pytest.raises(tarwalk.TarError, match="pax header"):
        walk(out.getvalue())


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


def test_a_gnu_sparse_member_is_refused() -> None:
    header = bytearray(archive([("./a", "file", b"")], tarfile.GNU_FORMAT)[:512])
    header[156:157] = b"S"
    header[148:156] = b"        "
    header[148:156] = f"{sum(header):06o}\0 ".encode()
    with pytest.raises(tarwalk.TarError, match="sparse"):
        walk(bytes(header) + bytes(1024))


def test_base_256_sizes_are_read_when_octal_cannot_hold_them() -> None:
    header = bytearray(archive([("./a", "file", b"")], tarfile.GNU_FORMAT)[:512])
    header[124:136] = b"\x80" + (8**11).to_bytes(11, "big")
    header[148:156] = b"        "
    header[148:156] = f"{sum(header):06o}\0 ".encode()
    with pytest.raises(tarwalk.TarError, match=re.escape("data of './a' is cut short")):
        walk(bytes(header) + b"abc".ljust(512, b"\0") + bytes(1024))
    header[124:136] = b"\x80" + (3).to_bytes(11, "big")  # GNU tar reads a long name's
    header[148:156] = b"        "  # size written so differently from dpkg
    header[148:156] = f"{sum(header):06o}\0 ".encode()
    with pytest.raises(tarwalk.TarError, match="base-256 fits octal"):
        walk(bytes(header) + b"abc".ljust(512, b"\0") + bytes(1024))


names = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\0"), min_size=1, max_size=150
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    members=st.lists(
        st.tuples(
            names.map(lambda n: "./" + (n.strip("/").replace("//", "/") or "x")),
            st.sampled_from(["file", "dir", "symlink", "hardlink", "fifo"]),
            st.binary(max_size=1500),
        ),
        max_size=6,
    ),
)
def test_any_archive_tarfile_writes_is_listed_as_tarfile_reads_it(
    members: list[tuple[str, str, bytes]],
) -> None:
    data = archive(members, tarfile.GNU_FORMAT)  # the format dpkg-deb writes
    assert walk(data) == with_tarfile(data)


SEED = archive(MEMBERS, tarfile.GNU_FORMAT)


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


def header(name: bytes, type_: bytes, size: int, **fields: bytes) -> bytes:
    """One hand-made header block, as a hostile package would carry it; fields by offset name."""
    block = bytearray(archive([("./a", "file", b"")], tarfile.GNU_FORMAT)[:512])
    block[0:100] = name.ljust(100, b"\0")
    block[124:136] = f"{size:011o}\0".encode()
    block[156:157] = type_
    for offset, value in fields.items():
        start = int(offset[1:])
        block[start : start + len(value)] = value
    block[148:156] = b"        "
    block[148:156] = f"{sum(block):06o}\0 ".encode()
    return bytes(block)


def pad(data: bytes) -> bytes:
    return data + bytes(-len(data) % 512)


def test_a_nul_type_entry_named_like_a_directory_cannot_hide_the_members_after_it() -> None:
    # dpkg and GNU tar make "./usr/" of type NUL a directory and skip its 512 bytes of data;
    # read as a directory with no data, those bytes are a decoy header that swallows the module
    module = header(b"./lib/modules/amdxdna.ko", b"0", 3) + pad(b"mod")
    decoy = header(b"./usr/share/decoy", b"0", len(module))
    data = header(b"./usr/", b"\0", len(decoy)) + decoy + module + bytes(1024)
    with pytest.raises(tarwalk.TarError, match=re.escape("regular file named './usr/'")):
        walk(data)


@pytest.mark.parametrize("type_", [b"5", b"2", b"1", b"3", b"6"])
def test_data_on_a_member_that_is_not_a_regular_file_is_refused(type_: bytes) -> None:
    inner = header(b"./lib/y.ko", b"0", 3) + pad(b"mod")
    with pytest.raises(tarwalk.TarError, match="no regular file but has 512 bytes"):
        walk(header(b"./usr", type_, len(inner) - 512) + inner + bytes(1024))


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("s124", b"0000000_003\0", "the size is not a number"),  # int("0_3", 8) == 3
        ("s124", b"+0000000003\0", "the size is not a number"),
        ("s124", b"00000 00003\0", "the size is not a number"),
        ("s257", b"ustar\x00xx", "magic"),  # dpkg would not join the prefix
        ("s156", b"7", "type b'7'"),  # dpkg: unknown tar header type '7'
        ("s156", b"V", "type b'V'"),
        ("s0", b"\0", "empty name"),
    ],
)
def test_headers_dpkg_refuses_or_reads_differently_are_refused(
    field: str, value: bytes, why: str
) -> None:
    block = header(b"./a", b"0", 3, **{field: value})
    with pytest.raises(tarwalk.TarError, match=why):
        walk(block + pad(b"abc") + bytes(1024))


def test_a_signed_checksum_is_refused_as_dpkg_refuses_it() -> None:
    block = bytearray(header("./é".encode(), b"0", 0))
    unsigned = sum(block) - sum(block[148:156]) + 256
    signed = unsigned - 256 * sum(1 for byte in block if byte > 127)
    block[148:156] = f"{signed:06o}\0 ".encode()
    with pytest.raises(tarwalk.TarError, match="checksum mismatch"):
        walk(bytes(block) + bytes(1024))


def test_a_long_name_over_path_max_is_refused_before_it_is_read() -> None:
    name = b"./" + b"n" * 5000
    long_name = header(b"././@LongLink", b"L", len(name) + 1) + pad(name + b"\0")
    with pytest.raises(tarwalk.TarError, match="5003-byte long name, over PATH_MAX"):
        walk(long_name + header(b"./n", b"0", 0) + bytes(1024))
    fits = b"./" + b"n" * 4000
    listed = walk(
        header(b"././@LongLink", b"L", len(fits) + 1) + pad(fits) + header(b"./n", b"0", 0)
    )
    assert [m[0] for m in listed] == [fits.decode()]
    with pytest.raises(tarwalk.TarError, match="malformed long name"):  # dpkg: "./", tar: all
        walk(header(b"././@LongLink", b"L", 3) + pad(fits) + header(b"./n", b"0", 0))
