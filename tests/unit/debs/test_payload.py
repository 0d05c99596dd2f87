"""Kernel payload by content: a module under any name, compressed, in a tar, cpio or zip;
kernel images and UKIs; libraries that only name the section are not modules."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
import zipfile
from collections.abc import Callable

import pytest
import zstandard

from tests.debs import elf_bytes, module_bytes
from xdnaforge.debs import payload


def scan(data: bytes, piece: int = 7000) -> tuple[str | None, str | None]:
    scanner = payload.Scanner()
    for start in range(0, len(data), piece):
        scanner.feed(data[start : start + piece])
    return scanner.finish()


def tar_of(name: str, data: bytes) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as archive:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        archive.addfile(tarfile.TarInfo("./README"), io.BytesIO(b""))
        archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def newc_cpio(name: str, data: bytes) -> bytes:
    """An initramfs member in the newc format the kernel unpacks."""
    fields = [0, 0o100644, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0]
    header = b"070701" + b"".join(f"{f:08x}".encode() for f in fields)
    body = header + name.encode() + b"\0"
    body += bytes(-len(body) % 4) + data
    return body + bytes(-len(body) % 4)


def test_a_module_is_found_whatever_its_name_and_wrapping() -> None:
    module = module_bytes()
    assert scan(module) == ("a kernel module", None)
    assert scan(lzma.compress(module))[0] == "a kernel module, compressed"
    assert scan(gzip.compress(module))[0] == "a kernel module, compressed"
    assert scan(bz2.compress(module))[0] == "a kernel module, compressed"
    assert scan(zstandard.ZstdCompressor().compress(module))[0] == "a kernel module, compressed"
    assert scan(tar_of("./amdxdna.bin", module))[0] == "a kernel module"
    assert scan(gzip.compress(tar_of("./x/amdxdna.KO", module)))[0] == (
        "a kernel module, compressed"
    )
    initramfs = lzma.compress(newc_cpio("lib/modules/6.8/amdxdna.ko", module) + b"070701")
    assert scan(initramfs)[0] == "a kernel module, compressed"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("drivers/amdxdna.ko", module)
    assert scan(out.getvalue())[0] == "a kernel module in the zip, 'drivers/amdxdna.ko'"


def test_the_section_name_split_across_pieces_is_found() -> None:
    module = module_bytes()
    at = module.index(payload.MODULE_MARK) + 5
    scanner = payload.Scanner()
    scanner.feed(module[:at])
    scanner.feed(module[at:])
    assert scanner.finish()[0] == "a kernel module"


def test_libraries_and_data_that_name_the_section_are_not_modules() -> None:
    library = elf_bytes("$ORIGIN") + b"\0.gnu.linkonce.this_module\0"  # libkmod reads it
    assert scan(library) == (None, None)
    assert scan(b"text about .gnu.linkonce.this_module") == (None, None)
    assert scan(gzip.compress(b"changelog" * 100)) == (None, None)


def test_kernel_images_are_recognised_by_their_headers() -> None:
    bzimage = bytearray(8192)
    bzimage[0x202:0x206] = b"HdrS"
    assert scan(bytes(bzimage))[0] == "an x86 kernel image (boot protocol header)"
    uki = b"MZ" + bytes(400) + b".linux\0\0" + bytes(4000)
    assert scan(uki)[0] == "a unified kernel image (PE with a .linux section)"


def test_a_compression_bomb_costs_a_bounded_amount_of_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(payload, "NESTED_LIMIT", 4 << 20)
    bomb = gzip.compress(bytes(64 << 20))  # 64 MiB of zeros in 64 KiB
    found, unjudged = scan(bomb, 1 << 16)
    assert found is None
    assert unjudged == "its content past 4 MiB is not searched for modules"


def split_module() -> tuple[bytes, bytes]:
    """A module cut before its section name: the ELF header in one half, the name in the
    other (neither half alone is a module)."""
    module = module_bytes()
    at = module.index(payload.MODULE_MARK)
    return module[:at], module[at:]


def xz(data: bytes) -> bytes:
    return lzma.compress(data, format=lzma.FORMAT_XZ)


def zstd(data: bytes) -> bytes:
    compressed: bytes = zstandard.ZstdCompressor().compress(data)
    return compressed


SKIPPABLE_ZSTD_FRAME = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"note"


@pytest.mark.parametrize("piece", [1, 5, 7000, 1 << 22])
@pytest.mark.parametrize(
    "wrap",
    [
        pytest.param(lambda a, b: gzip.compress(a) + gzip.compress(b), id="two-gzip-members"),
        pytest.param(
            lambda a, b: gzip.compress(a) + gzip.compress(b"") + gzip.compress(b), id="gzip-3"
        ),
        pytest.param(lambda a, b: xz(a) + xz(b), id="two-xz-streams"),
        pytest.param(lambda a, b: xz(a) + bytes(8) + xz(b), id="xz-stream-padding"),
        pytest.param(
            lambda a, b: lzma.compress(a, format=lzma.FORMAT_ALONE) + xz(b), id="lzma-then-xz"
        ),
        pytest.param(lambda a, b: bz2.compress(a) + bz2.compress(b), id="two-bzip2-streams"),
        pytest.param(lambda a, b: zstd(a) + zstd(b), id="two-zstd-frames"),
        pytest.param(
            lambda a, b: zstd(a) + zstd(b"") + SKIPPABLE_ZSTD_FRAME + zstd(b), id="zstd-skippable"
        ),
    ],
)
def test_a_module_split_over_members_or_streams_is_one_module(
    wrap: Callable[[bytes, bytes], bytes], piece: int
) -> None:
    # libkmod, gzip and xz read on into the next member or stream: so does the scan
    head, rest = split_module()
    assert scan(wrap(head, b"")) == (None, None)
    data = wrap(head, rest)
    scanner = payload.Scanner()
    scanner.feed(data[:16])  # the reader's first piece holds the magic (64 KiB, or all)
    for start in range(16, len(data), piece):
        scanner.feed(data[start : start + piece])  # a magic cut between pieces later on
    assert scanner.finish()[0] == "a kernel module, compressed"


@pytest.mark.parametrize("piece", [1 << 16, 1 << 23])
def test_a_member_past_the_decompressors_step_is_read_to_its_end_before_the_next(
    piece: int,
) -> None:
    # the first member decompresses to more than one step of output (what zlib holds back as
    # its unconsumed tail, lzma inside itself); the second still follows it
    head, rest = split_module()
    for compress in (gzip.compress, xz, bz2.compress):
        data = compress(head + bytes(3 << 20)) + compress(rest)
        assert scan(data, piece)[0] == "a kernel module, compressed", compress


def test_what_follows_the_last_stream_is_ignored_as_the_tools_ignore_it() -> None:
    head, rest = split_module()
    assert scan(gzip.compress(module_bytes()) + b"trailing garbage")[0] == (
        "a kernel module, compressed"
    )
    assert scan(gzip.compress(head) + b"garbage" + gzip.compress(rest)) == (None, None)
    assert scan(xz(b"changelog") + b"\0\0\0\0garbage") == (None, None)
    # damaged data after a module does not unsee it
    damaged = zstd(module_bytes()) + zstd(b"x" * 100)[:-3]
    assert scan(damaged)[0] == "a kernel module, compressed"


def test_the_bound_holds_across_all_members_together(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(payload, "NESTED_LIMIT", 4 << 20)
    head, rest = split_module()
    members = [gzip.compress(head)] + [gzip.compress(bytes(1 << 20))] * 8 + [gzip.compress(rest)]
    found, unjudged = scan(b"".join(members), 1 << 16)
    assert found is None
    assert unjudged == "its content past 4 MiB is not searched for modules"


@pytest.mark.parametrize(
    ("wrap", "levels"),
    [
        pytest.param(lambda m: gzip.compress(xz(m)), 2, id="gzip-of-xz"),
        pytest.param(lambda m: xz(gzip.compress(m)), 2, id="xz-of-gzip"),
        pytest.param(lambda m: bz2.compress(gzip.compress(xz(m))), 3, id="three-levels"),
        pytest.param(lambda m: zstd(gzip.compress(m)), 2, id="zstd-of-gzip"),
    ],
)
def test_a_module_compressed_more_than_once_is_found(
    wrap: Callable[[bytes], bytes], levels: int
) -> None:
    found, unjudged = scan(wrap(module_bytes()))
    assert found == "a kernel module" + ", compressed" * levels
    assert unjudged is None


def test_past_the_depth_limit_a_module_is_not_undone_further() -> None:
    # documented in docs/audit.md: four levels are not undone (libkmod undoes one)
    four = gzip.compress(gzip.compress(gzip.compress(gzip.compress(module_bytes()))))
    assert scan(four) == (None, None)


def test_the_bound_is_shared_by_every_level(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(payload, "NESTED_LIMIT", 4 << 20)
    # 64 MiB of zeros inside a gzip inside a gzip: the inner level's work counts too
    bomb = gzip.compress(gzip.compress(bytes(64 << 20)))
    found, unjudged = scan(bomb, 1 << 16)
    assert found is None
    assert unjudged == "its content past 4 MiB is not searched for modules"
