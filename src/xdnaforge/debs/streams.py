"""Decompressed views of a .deb member for the tar reader: read ahead on threads, skip cheaply.

A member is decompressed into pieces (xz by blocks in parallel, see xzblocks; gzip, zstd,
bzip2 and lzma on one reader thread, a bounded queue ahead of the tar parser, since zlib,
libzstd, libbz2 and liblzma all release the GIL), and `PieceReader` presents the pieces as a
file that tarfile can read in its seeking mode: skipping a file's data is a position change
over pieces already in memory, never a copy. Memory stays bounded by the queue and the
xz read-ahead budget. This module decompresses only: no tar, no files, no processes.
"""

from __future__ import annotations

import bz2
import io
import lzma
import zlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import IO, Any, cast

from xdnaforge.readahead import read_ahead

inflate: ModuleType = zlib
# the same interface as zlib's; its errors are not zlib.error: DECOMPRESS_ERRORS lists both
DECOMPRESS_ERRORS: tuple[type[Exception], ...] = (zlib.error,)
try:
    from isal import isal_zlib

    inflate = isal_zlib
    # its stub declares `error` as an instance; it is the class the module raises
    DECOMPRESS_ERRORS = (zlib.error, cast(type[Exception], isal_zlib.error))
except ImportError:  # not built for every architecture; zlib is the same, slower
    pass


class ZstdDamage(ValueError):
    """A zstd member is damaged (zstandard's own error, without importing it up front)."""


_PIECE = 1 << 20
# zstd decodes at ~1 GB/s: in 1 MiB steps its thread takes the GIL back from the tar parser
# hundreds of times and waits up to the switch interval (5 ms) each time, which made it
# several times slower; in 4 MiB steps (input and output) it is a few dozen times
_ZSTD_STEP = 4 << 20
_QUEUE = 4  # pieces decoded ahead of the tar parser (4 MiB; 16 MiB for zstd)
_HISTORY = 4096  # bytes kept behind the position: tarfile steps back one byte between members


class PieceReader(io.RawIOBase):
    """A read-only file over an iterator of byte pieces; seeks forward, and a little back."""

    def __init__(self, pieces: Iterator[bytes], close: Callable[[], None] = lambda: None) -> None:
        super().__init__()
        self._pieces = pieces
        self._on_close = close
        self._piece = memoryview(b"")
        self._start = 0  # stream position of self._piece[0]
        self._position = 0
        self._history = b""  # the bytes just before self._start

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def _advance(self) -> bool:
        """Moves to the next piece; False at the end of the data."""
        for piece in self._pieces:
            if piece:
                self._history = (self._history + bytes(self._piece[-_HISTORY:]))[-_HISTORY:]
                self._start += len(self._piece)
                self._piece = memoryview(piece)
                return True
        return False

    def read(self, size: int | None = -1) -> bytes:
        parts = []
        wanted = size if size is not None and size >= 0 else 1 << 62
        while wanted:
            offset = self._position - self._start
            if offset < 0:  # inside the history
                part = self._history[len(self._history) + offset :][:wanted]
            elif offset < len(self._piece):
                part = bytes(self._piece[offset : offset + wanted])
            elif self._advance():
                continue
            else:
                break
            parts.append(part)
            self._position += len(part)
            wanted -= len(part)
        return b"".join(parts)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        target = offset if whence == io.SEEK_SET else self._position + offset
        if whence not in (io.SEEK_SET, io.SEEK_CUR) or target < self._start - len(self._history):
            raise io.UnsupportedOperation("a decompressed stream seeks forward only")
        while target > self._start + len(self._piece) and self._advance():
            pass
        # past the end: the position stays at the end, and the next read finds no data
        self._position = min(target, self._start + len(self._piece))
        return self._position

    def drain(self) -> None:
        """Decodes the rest: a damaged tail is an error even after the last tar member."""
        while self._advance():
            pass
        self._position = self._start + len(self._piece)

    def close(self) -> None:
        if not self.closed:
            self._on_close()
        super().close()


def _chunks(stream: IO[bytes] | Any, size: int = _PIECE) -> Iterator[bytes]:
    with stream:
        while piece := stream.read(size):
            yield piece


def open_member(member: IO[bytes], compression: str) -> PieceReader:
    """The decompressed content of a member compressed with `compression` ("" or ".gz" ...)."""
    if compression == ".xz":
        # decoding runs on xzblocks' own worker threads; reading stays on this thread.
        # Imported here: its thread pool (concurrent.futures) costs ~9 ms of start-up
        from xdnaforge.debs import xzblocks

        pieces = xzblocks.decode(member.read)
        return PieceReader(pieces, close=pieces.close)
    if compression == "":
        return PieceReader(_chunks_of(member))
    if compression == ".gz":
        decoded = _gunzip(member)
    elif compression == ".zst":
        decoded = _unzstd(member)
    else:
        decoded = _chunks(_decompressor(member, compression))
    produced, stop = read_ahead(decoded, _QUEUE)
    return PieceReader(produced, close=stop)


def _gunzip(member: IO[bytes]) -> Iterator[bytes]:
    """gzip members one after the other, as gzip -d reads them; the decoder checks each CRC
    and size. ISA-L's inflate (python-isal) where it is installed: it decodes gzip at about
    twice zlib's speed, and gzip is a single stream that no thread can split."""
    data = member.read(_PIECE)
    if not data:
        raise EOFError("empty gzip stream")
    while data:
        decoder = inflate.decompressobj(wbits=31)  # 31: a gzip header and trailer
        while not decoder.eof:
            if not data:
                data = member.read(_PIECE)
                if not data:
                    raise EOFError("compressed file ended before the end-of-stream marker")
            piece = decoder.decompress(data, _PIECE)
            data = decoder.unconsumed_tail
            if piece:
                yield piece
        # what follows a member: zero padding (ignored, as gzip does) or the next member
        data = decoder.unused_data.lstrip(b"\0")
        while not data:
            more = member.read(_PIECE)
            if not more:
                return
            data = more.lstrip(b"\0")


def _unzstd(member: IO[bytes]) -> Iterator[bytes]:
    """Frames one after the other are one stream, as zstd -d reads them."""
    import zstandard  # here: ~5 ms of start-up that only zstd members need

    reader = zstandard.ZstdDecompressor().stream_reader(
        member, read_size=_ZSTD_STEP, read_across_frames=True
    )
    try:
        yield from _chunks(reader, _ZSTD_STEP)
    except zstandard.ZstdError as error:
        raise ZstdDamage(str(error)) from None


def _decompressor(member: IO[bytes], compression: str) -> IO[bytes] | Any:
    if compression == ".bz2":
        return bz2.BZ2File(member)
    return lzma.LZMAFile(member, format=lzma.FORMAT_ALONE)


def _chunks_of(member: IO[bytes]) -> Iterator[bytes]:
    while piece := member.read(_PIECE):
        yield piece
