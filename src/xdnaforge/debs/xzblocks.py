"""Decoding an xz stream read front to back, its independent blocks on several threads.

Multi-threaded xz encoders (xz -T, and dpkg-deb, which compresses with liblzma's threaded
encoder) cut the data into blocks of a few tens of MiB and store each block's compressed and
uncompressed size in its header, so a block can be decoded without the ones before it. Each
such block is wrapped into a one-block xz stream (the original stream header, the block, an
index and footer made for it) and decoded by liblzma on a worker thread; liblzma releases the
GIL, so the blocks decode in parallel and liblzma still verifies every header CRC, the block's
check and its sizes. A block is handed to its worker before its data is read, and decodes
from its first MiB while the reader reads the rest. Output is yielded in order; memory is
bounded by the read-ahead budget, not by the stream's size. Streams without sizes in their
headers (single-threaded xz), blocks too large for the budget, and blocks too small to be
worth a thread (a control member) are decoded on the reader's thread with bounded output.
This module only decodes bytes: it does not read files, start processes or know tar.
"""

from __future__ import annotations

import lzma
import os
import queue
import struct
import threading
import zlib
from collections import deque
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass

MAGIC = b"\xfd7zXZ\x00"
FOOTER_MAGIC = b"YZ"
BLOCK_LIMIT = 64 << 20  # a block decoded in one piece: xz -6..-8 blocks are 24..96 MiB
# a block this small decodes on the reader's thread: starting workers costs more (a control
# member is one block of a few kB)
INLINE_LIMIT = 1 << 20
READ_AHEAD_BUDGET = 96 << 20  # decoded bytes ahead of the reader: four of dpkg-deb's 24 MiB blocks
_OUTPUT = 1 << 20  # output piece of the sequential decoder
_BLOCK_READ = 1 << 20  # a block's data goes to its worker in pieces of this size
_INPUT = 1 << 18

Read = Callable[[int], bytes]


def workers() -> int:
    """The decoding threads: the CPUs this process may run on, at most four."""
    return max(1, min(4, len(os.sched_getaffinity(0))))


def _check_size(check_id: int) -> int:
    # xz file format 1.2.0, 3.4: sizes by groups of three check IDs
    return (0, 4, 4, 4, 8, 8, 8, 16, 16, 16, 32, 32, 32, 64, 64, 64)[check_id]


def _varint(data: bytes, offset: int) -> tuple[int, int]:
    value = 0
    for index in range(9):
        if offset + index >= len(data):
            break
        byte = data[offset + index]
        value |= (byte & 0x7F) << (7 * index)
        if not byte & 0x80:
            return value, offset + index + 1
    raise lzma.LZMAError("xz: damaged size field")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _index_and_footer(records: list[tuple[int, int]], flags: bytes) -> bytes:
    """The index and stream footer that close a stream of the given (unpadded, size) blocks."""
    body = b"\x00" + _encode_varint(len(records))
    for unpadded, size in records:
        body += _encode_varint(unpadded) + _encode_varint(size)
    body += b"\x00" * (-len(body) % 4)
    index = body + struct.pack("<I", zlib.crc32(body))
    backward = struct.pack("<I", len(index) // 4 - 1) + flags
    return index + struct.pack("<I", zlib.crc32(backward)) + backward + FOOTER_MAGIC


@dataclass(frozen=True, slots=True)
class _Block:
    header: bytes
    compressed: int | None
    uncompressed: int | None
    check: int

    @property
    def total(self) -> int:
        """Header, data, padding and check: the block's bytes in the stream."""
        assert self.compressed is not None
        return len(self.header) + self.compressed + (-self.compressed % 4) + self.check

    @property
    def unpadded(self) -> int:
        assert self.compressed is not None
        return len(self.header) + self.compressed + self.check


def _parse_block_header(header: bytes, check: int) -> _Block:
    if zlib.crc32(header[:-4]) != struct.unpack("<I", header[-4:])[0]:
        raise lzma.LZMAError("xz: damaged block header (CRC32 mismatch)")
    flags = header[1]
    if flags & 0x3C:
        raise lzma.LZMAError("xz: unsupported block header options")
    offset = 2
    compressed = uncompressed = None
    if flags & 0x40:
        compressed, offset = _varint(header, offset)
    if flags & 0x80:
        uncompressed, offset = _varint(header, offset)
    return _Block(header=header, compressed=compressed, uncompressed=uncompressed, check=check)


def _decode_block(
    stream_header: bytes,
    block: _Block,
    data: Iterator[bytes],
    out: queue.SimpleQueue[bytes | None],
) -> None:
    """One block, wrapped into its own stream so that liblzma checks all of it: `data` is
    what follows its header, in pieces as the reader reads them (the first piece decodes
    while the next is read). Its output goes to `out` as it is decoded (then None, also on
    an error: the job holds it), so the tar parser reads a block while it decodes, as
    liblzma's threaded decoder lets dpkg. Each piece is decoded whole: a bounded output
    would make the decoder copy the input it has not consumed yet on every call.
    """
    try:
        assert block.uncompressed is not None
        closing = _index_and_footer([(block.unpadded, block.uncompressed)], stream_header[6:8])
        decoder = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
        size = 0
        for part in _chain(stream_header + block.header, data, closing):
            if decoder.eof:
                break
            piece = decoder.decompress(part)
            if piece:
                size += len(piece)
                if size > block.uncompressed:
                    break
                out.put(piece)
        if not decoder.eof or size != block.uncompressed:
            raise lzma.LZMAError("xz: damaged block (size differs from its header)")
    finally:
        out.put(None)


class _Input:
    """Exact reads from the compressed source, with push-back for a decoder's leftovers."""

    def __init__(self, read: Read) -> None:
        self._read = read
        self._back = b""

    def some(self, size: int) -> bytes:
        if self._back:
            data, self._back = self._back[:size], self._back[size:]
            return data
        return self._read(size)

    def exact(self, size: int, what: str) -> bytes:
        parts, wanted = [], size
        while wanted:
            data = self.some(wanted)
            if not data:
                raise lzma.LZMAError(f"xz: truncated inside {what}")
            parts.append(data)
            wanted -= len(data)
        return b"".join(parts)

    def unread(self, data: bytes) -> None:
        self._back = data + self._back


def _sequential(source: _Input, feed: Iterator[bytes]) -> Iterator[bytes]:
    """A stream through one decoder with bounded output; its leftovers go back to source."""
    decoder = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    data = next(feed, b"")
    while True:
        out = decoder.decompress(data, max_length=_OUTPUT)
        if out:
            yield out
        if decoder.eof:
            source.unread(decoder.unused_data)
            return
        data = b""
        if decoder.needs_input:
            data = next(feed, b"")
            if not data:
                raise lzma.LZMAError("xz: truncated: the stream ends before its end marker")


def _rest_of(source: _Input, first: bytes) -> Iterator[bytes]:
    yield first
    while data := source.some(_INPUT):
        yield data


def _exactly(source: _Input, size: int, what: str, step: int = _INPUT) -> Iterator[bytes]:
    while size:
        data = source.exact(min(size, step), what)
        size -= len(data)
        yield data


def _stream_header(header: bytes) -> int:
    """The stream's check size; raises on a header that is not xz."""
    if header[:6] != MAGIC:
        raise lzma.LZMAError("xz: not an xz stream (no stream header magic)")
    flags = header[6:8]
    if zlib.crc32(flags) != struct.unpack("<I", header[8:12])[0]:
        raise lzma.LZMAError("xz: damaged stream header (CRC32 mismatch)")
    if flags[0] or flags[1] & 0xF0:
        raise lzma.LZMAError("xz: unsupported stream flags")
    return _check_size(flags[1] & 0x0F)


class _BlockJob:
    """One block for a worker: its input arrives in `data` as it is read (then None), its
    output pieces leave in `out`, its error in `error`."""

    __slots__ = ("block", "cancelled", "data", "error", "header", "out")

    def __init__(self, header: bytes, block: _Block) -> None:
        self.header = header
        self.block = block
        self.data: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.out: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.error: BaseException | None = None
        self.cancelled = False

    @property
    def size(self) -> int:
        assert self.block.uncompressed is not None
        return self.block.uncompressed

    def run(self) -> None:
        if self.cancelled:
            self.out.put(None)
            return
        try:
            _decode_block(self.header, self.block, self._input(), self.out)
        except BaseException as error:  # noqa: BLE001 - raised again on the reader's thread
            self.error = error

    def _input(self) -> Iterator[bytes]:
        """The block's data until its end, or until the job is cancelled: a damaged block
        or a stopped audit then waits for at most one piece, not for the whole block."""
        while not self.cancelled and (piece := self.data.get()) is not None:
            yield piece


class _Pool:
    """Worker threads taking block jobs in order. Plain threads and a queue: importing
    concurrent.futures (logging) took ~6 ms before the first block could start."""

    def __init__(self, threads: int) -> None:
        self._jobs: queue.SimpleQueue[_BlockJob | None] = queue.SimpleQueue()
        self._count = threads
        self._threads: list[threading.Thread] = []  # started with the first job

    def _start(self) -> None:
        for number in range(self._count):
            thread = threading.Thread(target=self._work, name=f"xz_{number}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            job.run()

    def submit(self, job: _BlockJob) -> _BlockJob:
        self._jobs.put(job)
        if not self._threads:
            self._start()
        return job

    def close(self) -> None:
        """Waits for the running jobs; cancelled ones do not start."""
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            thread.join()


# a job is decoded output: a block decoding on a worker, or a stream decoded as it is read
_Job = _BlockJob | Iterator[bytes]


def _jobs(source: _Input, pool: _Pool) -> Iterator[_Job]:
    """Reads the streams front to back and yields their blocks' decoding, in order."""
    first = True
    while True:
        header = source.some(12)
        if not header and not first:
            return
        header += source.exact(12 - len(header), "the stream header") if len(header) < 12 else b""
        check = _stream_header(header)
        first = False
        records: list[tuple[int, int]] = []
        while True:
            size_byte = source.exact(1, "a block header")
            if size_byte == b"\x00":
                _read_index(source, records, header[6:8])
                break
            raw = size_byte + source.exact((size_byte[0] + 1) * 4 - 1, "a block header")
            block = _parse_block_header(raw, check)
            if block.compressed is None or block.uncompressed is None:
                if records:
                    raise lzma.LZMAError("xz: a block without sizes after blocks with sizes")
                # single-threaded xz: the stream is decoded in one piece, index included
                yield _sequential(source, _rest_of(source, header + raw))
                break
            records.append((block.unpadded, block.uncompressed))
            if INLINE_LIMIT < block.uncompressed <= BLOCK_LIMIT and block.total <= BLOCK_LIMIT:
                # submitted before its data is read: a worker decodes the first MiB while
                # the reader reads the next (a 12 MiB block took 7 ms to read whole)
                job = pool.submit(_BlockJob(header, block))
                try:
                    for piece in _exactly(source, block.total - len(raw), "a block", _BLOCK_READ):
                        job.data.put(piece)
                except BaseException:
                    job.cancelled = True  # truncated: the error is the reader's, not the block's
                    raise
                finally:
                    job.data.put(None)
                yield job
            else:
                closing = _index_and_footer([(block.unpadded, block.uncompressed)], header[6:8])
                feed = _exactly(source, block.total - len(raw), "a block")
                yield _sequential(_Input(lambda _: b""), _chain(header + raw, feed, closing))
        _skip_padding(source)


def _chain(first: bytes, middle: Iterator[bytes], last: bytes) -> Iterator[bytes]:
    yield first
    yield from middle
    yield last


def _read_index(source: _Input, records: list[tuple[int, int]], flags: bytes) -> None:
    """The index must list exactly the blocks read, and the footer must match it."""
    count_bytes = b"\x00"
    while True:  # the record count, then each record: variable-length integers
        count_bytes += source.exact(1, "the index")
        if not count_bytes[-1] & 0x80:
            break
    count, _ = _varint(count_bytes, 1)
    if count != len(records):
        raise lzma.LZMAError(f"xz: the index lists {count} blocks, the stream has {len(records)}")
    expected = _index_and_footer(records, flags)
    rest = source.exact(len(expected) - len(count_bytes), "the index and stream footer")
    if count_bytes + rest != expected:
        raise lzma.LZMAError("xz: the index or stream footer does not match the blocks")


def _skip_padding(source: _Input) -> None:
    """Stream padding: zero bytes in fours, then the end or another stream."""
    while True:
        data = source.some(4)
        if not data:
            return
        if data != b"\x00" * len(data):
            source.unread(data)
            return
        if len(data) < 4:
            raise lzma.LZMAError("xz: stream padding is not a multiple of four bytes")


def decode(read: Read, threads: int | None = None) -> Generator[bytes, None, None]:
    """The decompressed pieces of the xz data that `read(n)` returns, in order."""
    source = _Input(read)
    threads = threads or workers()
    pool = _Pool(threads)
    pending: deque[_Job] = deque()
    try:
        for job in _jobs(source, pool):
            pending.append(job)
            # an in-line job reads the input as it goes: finish it before reading on
            while pending and (not isinstance(pending[-1], _BlockJob) or _over(pending, threads)):
                yield from _output(pending[0])
                pending.popleft()  # only now: a job still being read is cancelled below
        while pending:
            yield from _output(pending[0])
            pending.popleft()
    finally:
        for job in pending:
            if isinstance(job, _BlockJob):
                job.cancelled = True
        pool.close()


def _over(pending: deque[_Job], threads: int) -> bool:
    ahead = sum(job.size for job in pending if isinstance(job, _BlockJob))
    # blocks ahead of the one the reader waits for: a thread that finished a small block
    # starts the next one instead of idling behind a large one (measured on the kernel image:
    # its 11 MiB block decodes for twice as long as the next ones); the budget bounds memory
    return len(pending) > 2 * threads or ahead > READ_AHEAD_BUDGET


def _output(job: _Job) -> Iterator[bytes]:
    if isinstance(job, _BlockJob):
        while (piece := job.out.get()) is not None:
            yield piece
        if job.error is not None:
            raise job.error
    else:
        yield from job
