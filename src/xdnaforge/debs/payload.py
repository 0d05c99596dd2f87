"""Kernel payload recognised by content, whatever the file is called.

A module renamed `*.bin` or `*.KO`, a module inside a tar, cpio (initramfs) or zip, or a
compressed one, a kernel image or a unified kernel image (UKI) under `boot/efi/`: file
names cannot find these. A Scanner is fed one file's bytes in order, once, as the streaming
reader hands them over, and says what it found:

- a kernel module: the section name `.gnu.linkonce.this_module` (every module has that
  section; modpost creates it) in a stream that also holds an ELF header, the file not
  being an executable or shared library itself (libkmod names the section too);
- inside a gzip, xz, lzma or bzip2 file: the same test on what it decompresses to, one
  level deep, at most NESTED_LIMIT bytes (a bomb costs at most that much work); a zstd
  file or a zip (up to ZIP_LIMIT, read whole: zstd's push decoder cannot bound its output,
  a zip's directory is at its end) the same way, a zip member by member;
- a kernel image: the x86 boot protocol's "HdrS" at 0x202, the arm64 Image magic at 0x38,
  or a PE file with a `.linux` section (a UKI).

What it does not find is written in docs/audit.md: a module compressed inside a compressed
archive (two levels), or in an archive format not listed here. Pure: bytes in, evidence out.
"""

from __future__ import annotations

import bz2
import io
import lzma
import zipfile
import zlib
from typing import Protocol

import zstandard

MODULE_MARK = b".gnu.linkonce.this_module"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ELF_MAGIC = b"\x7fELF"
NESTED_LIMIT = 256 << 20  # bytes decompressed from one nested file
ZIP_LIMIT = 64 << 20  # a zip is read whole (its directory is at its end)
HEAD = 4096  # enough for the boot protocol header and a PE section table
_CHUNK = 1 << 20


class _Decompressor(Protocol):
    def decompress(self, data: bytes, max_length: int = -1, /) -> bytes: ...


def _decompressor(head: bytes) -> _Decompressor | None:
    if head.startswith(b"\x1f\x8b"):
        return zlib.decompressobj(wbits=47)  # gzip, multi-member handled per member
    if head.startswith((b"\xfd7zXZ\x00", b"\x5d\x00\x00")):
        return lzma.LZMADecompressor()
    if head.startswith(b"BZh"):
        return bz2.BZ2Decompressor()
    return None  # zstd: its push decoder cannot bound its output; read whole, like a zip


def kernel_image(head: bytes) -> str | None:
    """A kernel image by its header."""
    if head[0x202:0x206] == b"HdrS":
        return "an x86 kernel image (boot protocol header)"
    if head[0x38:0x3C] == b"ARM\x64":
        return "an arm64 kernel image"
    if head[:2] == b"MZ" and b".linux\0" in head[:HEAD]:
        return "a unified kernel image (PE with a .linux section)"
    return None


def named_module(path: str) -> bool:
    """A path the audit blocks by its name or place already (KMOD-001, KMOD-002): its
    content need not be read; a kernel package's thousands of modules are not."""
    return path.endswith((".ko", ".ko.gz", ".ko.xz", ".ko.zst")) or path.startswith(
        ("lib/modules/", "usr/lib/modules/")
    )


class Scanner:
    """One file's bytes, fed in order; `finish()` says what they hold. `done` says when the
    rest of the file cannot change the answer (the reader then skips it unread)."""

    def __init__(self, nested: bool = False) -> None:
        self.nested = nested
        self.head = b""
        self.tail = b""
        self.mark = False
        self.elf = False
        self.skip_raw = False  # an executable or shared library: it may name the section
        self.inner: Scanner | None = None
        self.decompressor: _Decompressor | None = None
        self.decompressed = 0
        self.over_limit = False
        self.zip: list[bytes] | None = None
        self.zip_size = 0

    @property
    def done(self) -> bool:
        if self.mark and self.elf:
            return True
        return self.skip_raw and self.decompressor is None and self.zip is None

    def feed(self, chunk: bytes) -> None:
        if len(self.head) < HEAD:
            self._start(chunk)
        if not self.skip_raw and not (self.mark and self.elf):
            window = self.tail + chunk
            self.mark = self.mark or MODULE_MARK in window
            self.elf = self.elf or ELF_MAGIC in window
            self.tail = window[-(len(MODULE_MARK) - 1) :]
        if self.decompressor is not None and not self.over_limit:
            self._decompress(chunk)
        if self.zip is not None:
            self.zip_size += len(chunk)
            if self.zip_size > ZIP_LIMIT:
                self.zip = None
                self.over_limit = True
            else:
                self.zip.append(chunk)

    def _start(self, chunk: bytes) -> None:
        first = not self.head
        self.head += chunk[: HEAD - len(self.head)]
        if not first:
            return
        if chunk[:4] == ELF_MAGIC and len(chunk) >= 18:
            kind = chunk[16:18] if chunk[5] == 1 else chunk[17:18] + chunk[16:17]
            self.skip_raw = kind in (b"\x02\x00", b"\x03\x00")  # ET_EXEC, ET_DYN
        if not self.nested:
            self.decompressor = _decompressor(chunk)
            if chunk.startswith((b"PK\x03\x04", ZSTD_MAGIC)):
                self.zip = []

    def _decompress(self, chunk: bytes) -> None:
        assert self.decompressor is not None
        if self.inner is None:
            self.inner = Scanner(nested=True)
        data = chunk
        while True:
            room = NESTED_LIMIT - self.decompressed
            try:
                out = self.decompressor.decompress(data, min(room, _CHUNK) or 1)
            except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error):
                self.decompressor = None  # not what its magic said: judged raw only
                return
            self.decompressed += len(out)
            self.inner.feed(out)
            if self.decompressed >= NESTED_LIMIT:
                self.over_limit = True
                return
            # zlib hands back what it did not consume; lzma and bz2 keep it themselves
            data = getattr(self.decompressor, "unconsumed_tail", b"")
            if len(out) < _CHUNK and not data:
                return

    def finish(self) -> tuple[str | None, str | None]:
        """(what kernel payload the bytes hold, why they could not be judged whole)."""
        image = None if self.nested else kernel_image(self.head)
        if image:
            return image, None
        if self.mark and self.elf:
            return "a kernel module", None
        if self.inner is not None:
            found, _ = self.inner.finish()
            if found:
                return f"{found}, compressed", None
        if self.zip is not None:
            data = b"".join(self.zip)
            found = _zstd_module(data) if data.startswith(ZSTD_MAGIC) else _zip_module(data)
            if found:
                return found, None
        if self.over_limit:
            limit = ZIP_LIMIT if self.decompressor is None else NESTED_LIMIT
            return None, f"its content past {limit >> 20} MiB is not searched for modules"
        return None, None


def _zstd_module(data: bytes) -> str | None:
    scanner = Scanner(nested=True)
    read = 0
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)) as reader:
            while read < NESTED_LIMIT and (chunk := reader.read(_CHUNK)):
                scanner.feed(chunk)
                read += len(chunk)
    except zstandard.ZstdError:
        return None
    found, _ = scanner.finish()
    return f"{found}, compressed" if found else None


def _zip_module(data: bytes) -> str | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                scanner = Scanner(nested=True)
                with archive.open(info) as member:
                    read = 0
                    while read < NESTED_LIMIT and (chunk := member.read(_CHUNK)):
                        scanner.feed(chunk)
                        read += len(chunk)
                if scanner.finish()[0]:
                    return f"a kernel module in the zip, {info.filename!r}"
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, zlib.error):
        return None
    return None
