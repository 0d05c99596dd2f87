"""Kernel payload recognised by content, whatever the file is called.

A module renamed `*.bin` or `*.KO`, a module inside a tar, cpio (initramfs) or zip, or a
compressed one, a kernel image or a unified kernel image (UKI) under `boot/efi/`: file
names cannot find these. A Scanner is fed one file's bytes in order, once, as the streaming
reader hands them over, and says what it found:

- a kernel module: the section name `.gnu.linkonce.this_module` (every module has that
  section; modpost creates it) in a stream that also holds an ELF header, the file not
  being an executable or shared library itself (libkmod names the section too);
- inside a gzip, xz, lzma or bzip2 file: the same test on what it decompresses to, and on
  what that decompresses to, up to MAX_DEPTH levels (a gzip of an xz of a module), at most
  NESTED_LIMIT bytes in all levels together (a bomb costs at most that much work),
  across every gzip member or xz, lzma or bzip2 stream in turn, as libkmod, gzip and xz
  read them (a module's ELF header in the first member and its section in the second is
  one module); null bytes between streams are skipped (xz's stream padding, any length
  here), and what follows a stream that starts no other is ignored, as the tools do; a
  zstd file (every frame, skippable ones skipped) or a zip (up to ZIP_LIMIT, read whole:
  zstd's push decoder cannot bound its output, a zip's directory is at its end) the same
  way, a zip member by member;
- a kernel image: the x86 boot protocol's "HdrS" at 0x202, the arm64 Image magic at 0x38,
  or a PE file with a `.linux` section (a UKI).

What it does not find is written in docs/audit.md: a module compressed more than MAX_DEPTH
times, or in an archive format not listed here. Pure: bytes in, evidence out.
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
NESTED_LIMIT = 256 << 20  # bytes decompressed from one file, all levels together
MAX_DEPTH = 3  # compression levels undone: libkmod undoes one, a tar.gz of a .ko.xz is two
ZIP_LIMIT = 64 << 20  # a zip is read whole (its directory is at its end)
HEAD = 4096  # enough for the boot protocol header and a PE section table
_CHUNK = 1 << 20


class _Decompressor(Protocol):
    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    def decompress(self, data: bytes, max_length: int = -1, /) -> bytes: ...


# the magic numbers that start another member or stream of each family
_GZIP = (b"\x1f\x8b",)
_LZMA = (b"\xfd7zXZ\x00", b"\x5d\x00\x00")  # xz; lzma-alone (the usual properties)
_BZIP2 = (b"BZh",)


def _new_decompressor(head: bytes) -> _Decompressor:
    if head.startswith(_GZIP):
        return zlib.decompressobj(wbits=31)  # one gzip member; _Concatenated starts the next
    if head.startswith(_LZMA):
        return lzma.LZMADecompressor()
    return bz2.BZ2Decompressor()


class _Concatenated:
    """A compressed file's content across all its members or streams, as one output.

    zlib's decompressor stops at the end of a gzip member (the rest goes to unused_data),
    and lzma's and bz2's at the end of a stream (EOFError after it); gzip, xz and libkmod
    read on into the next. Input the current decompressor did not consume is kept here
    (zlib's unconsumed_tail) or in it (lzma, bz2): `decompress(b"", n)` continues.
    """

    def __init__(self, magics: tuple[bytes, ...]) -> None:
        self.magics = magics
        self.current: _Decompressor | None = None
        self.between = b""  # after a stream's end: not yet known to start another
        self.ended = False  # what followed a stream's end starts no other: ignored
        self.tail = b""  # zlib's unconsumed input

    def _next(self, data: bytes) -> bytes:
        """Starts the next stream if `data` (after the last one's end) begins one; returns
        the input for it."""
        data = (self.between + data).lstrip(b"\0")
        self.between = b""
        if data.startswith(self.magics):
            self.current = _new_decompressor(data)
            return data
        if any(magic.startswith(data) for magic in self.magics):
            self.between = data  # a magic cut by the read: wait for the rest
        elif data:
            self.ended = True
        return b""

    def decompress(self, data: bytes, max_length: int) -> bytes:
        """At most max_length bytes; fewer only when it needs more input (or has ended)."""
        out: list[bytes] = []
        want = max_length
        data = self.tail + data
        while want > 0 and not self.ended:
            if self.current is None:
                data = self._next(data)
                if self.current is None:
                    break  # it needs input, or has ended
            piece = self.current.decompress(data, want)
            out.append(piece)
            want -= len(piece)
            if self.current.eof:
                data = self.current.unused_data  # zlib's unconsumed_tail repeats it: not that
                self.current = None
                continue
            data = getattr(self.current, "unconsumed_tail", b"")
            if want > 0:
                break  # it needs input
        self.tail = data if want == 0 else b""  # cut short by max_length: for the next call
        return b"".join(out)


def _decompressor(head: bytes) -> _Concatenated | None:
    for magics in (_GZIP, _LZMA, _BZIP2):
        if head.startswith(magics):
            return _Concatenated(magics)
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

    def __init__(self, depth: int = 0, budget: list[int] | None = None) -> None:
        self.depth = depth
        self.nested = depth > 0
        # bytes every level of this file may still decompress, shared by the levels
        self.budget = budget if budget is not None else [NESTED_LIMIT]
        self.head = b""
        self.tail = b""
        self.mark = False
        self.elf = False
        self.skip_raw = False  # an executable or shared library: it may name the section
        self.inner: Scanner | None = None
        self.decompressor: _Concatenated | None = None
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
        if self.depth < MAX_DEPTH:
            self.decompressor = _decompressor(chunk)
        if not self.nested and chunk.startswith((b"PK\x03\x04", ZSTD_MAGIC)):
            self.zip = []

    def _decompress(self, chunk: bytes) -> None:
        assert self.decompressor is not None
        if self.inner is None:
            self.inner = Scanner(self.depth + 1, self.budget)
        data = chunk
        while True:
            room = self.budget[0]
            if room <= 0:
                self.over_limit = True
                return
            try:
                out = self.decompressor.decompress(data, min(room, _CHUNK))
            except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error):
                self.decompressor = None  # not what its magic said: judged raw only
                return
            self.decompressed += len(out)
            self.budget[0] -= len(out)
            self.inner.feed(out)
            if self.budget[0] <= 0 or self.inner.over_limit:
                self.over_limit = True
                return
            data = b""  # what it did not consume it keeps
            if len(out) < min(room, _CHUNK):
                return  # it needs more input

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
    """Every frame in turn (skippable frames skipped), as zstd and libkmod read them; what
    was found before damaged data still counts."""
    scanner = Scanner(depth=1)
    read = 0
    decompressor = zstandard.ZstdDecompressor()
    try:
        with decompressor.stream_reader(io.BytesIO(data), read_across_frames=True) as reader:
            while read < NESTED_LIMIT and (chunk := reader.read(_CHUNK)):
                scanner.feed(chunk)
                read += len(chunk)
    except zstandard.ZstdError:
        pass
    found, _ = scanner.finish()
    return f"{found}, compressed" if found else None


def _zip_module(data: bytes) -> str | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                scanner = Scanner(depth=1)
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
