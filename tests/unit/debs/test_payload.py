"""Kernel payload by content: a module under any name, compressed, in a tar, cpio or zip;
kernel images and UKIs; libraries that only name the section are not modules."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
import zipfile

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
