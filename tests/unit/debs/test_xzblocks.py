"""Parallel decoding of multi-block xz: same bytes as liblzma, bounded read-ahead, clear errors."""

from __future__ import annotations

import io
import lzma
import random
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.debs import xz_blocks
from xdnaforge.debs import xzblocks

DATA = random.Random(7).randbytes(40_000) * 3 + b"module text " * 20_000  # 360 kB


def decode(data: bytes, threads: int = 2) -> list[bytes]:
    return list(xzblocks.decode(io.BytesIO(data).read, threads))


@pytest.fixture(autouse=True)
def small_blocks_on_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """These blocks are tens of kB: on workers, as real blocks of tens of MiB are."""
    monkeypatch.setattr(xzblocks, "INLINE_LIMIT", 0)


def xz_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name.startswith("xz_")]


def test_small_blocks_decode_on_the_reader_thread_without_starting_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(xzblocks, "INLINE_LIMIT", 100_000)  # a control member's size
    small = xzblocks.decode(io.BytesIO(xz_blocks(DATA[:90_000], 30_000)).read, threads=2)
    assert next(small) == DATA[:30_000]
    assert xz_threads() == []
    assert b"".join(small) == DATA[30_000:90_000]
    large = xzblocks.decode(io.BytesIO(xz_blocks(DATA, 150_000)).read, threads=2)
    assert next(large) == DATA[:150_000]
    assert len(xz_threads()) == 2
    assert b"".join(large) == DATA[150_000:]
    assert xz_threads() == []  # stopped when the stream ends


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_blocks_with_sizes_decode_to_the_original_one_piece_per_block(threads: int) -> None:
    pieces = decode(xz_blocks(DATA, 50_000), threads)
    assert b"".join(pieces) == DATA
    assert [len(p) for p in pieces] == [50_000] * 7 + [len(DATA) - 350_000]


def test_a_stream_without_sizes_is_decoded_in_order_in_bounded_pieces() -> None:
    pieces = decode(lzma.compress(DATA))
    assert b"".join(pieces) == DATA
    assert max(len(p) for p in pieces) <= 1 << 20
    assert b"".join(decode(xz_blocks(DATA, 50_000, sizes=False))) == DATA


def test_concatenated_streams_with_padding_decode_as_one() -> None:
    data = xz_blocks(DATA[:100_000], 30_000) + b"\0" * 8 + lzma.compress(DATA[100_000:])
    assert b"".join(decode(data)) == DATA


def test_a_block_over_the_limit_is_decoded_sequentially(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xzblocks, "BLOCK_LIMIT", 10_000)
    pieces = decode(xz_blocks(DATA, 150_000))
    assert b"".join(pieces) == DATA


def test_read_ahead_is_bounded_by_the_threads() -> None:
    source = io.BytesIO(xz_blocks(DATA, 20_000))
    pieces = xzblocks.decode(source.read, threads=2)
    next(pieces)
    # two blocks per thread and the one being submitted, no more (the budget is not reached:
    # the first blocks are random bytes, a block takes a little more than 20,000 bytes)
    assert source.tell() <= 12 + 5 * 20_200
    pieces.close()


def test_the_budget_bounds_read_ahead_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xzblocks, "READ_AHEAD_BUDGET", 20_000)
    source = io.BytesIO(xz_blocks(DATA, 20_000))
    pieces = xzblocks.decode(source.read, threads=4)
    next(pieces)
    assert source.tell() <= 12 + 2 * 20_200  # four threads alone would have read nine blocks
    assert b"".join(pieces) == DATA[20_000:]


@pytest.mark.parametrize("cut", [0, 5, 12, 13, 40, 30_000, -60, -20, -12, -1])
def test_truncated_streams_are_errors(cut: int) -> None:
    data = xz_blocks(DATA, 50_000)
    with pytest.raises(lzma.LZMAError):
        decode(data[:cut])


def test_a_damaged_block_is_an_error_even_when_its_header_is_intact() -> None:
    data = bytearray(xz_blocks(DATA, 50_000))
    data[200] ^= 0x55
    with pytest.raises(lzma.LZMAError):
        decode(bytes(data))


def test_an_index_that_disagrees_with_the_blocks_is_an_error() -> None:
    whole = xz_blocks(DATA, 50_000)
    other = xz_blocks(DATA[:-1], 50_000)  # same blocks except the last one's size
    index_at = len(whole) - 12 - 40
    with pytest.raises(lzma.LZMAError):
        decode(whole[:index_at] + other[len(other) - 52 :])


def test_garbage_after_the_stream_is_an_error() -> None:
    with pytest.raises(lzma.LZMAError):
        decode(xz_blocks(DATA, 50_000) + b"junk")


SEED = xz_blocks(DATA[:60_000], 16_000)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cuts=st.lists(
        st.tuples(st.integers(0, len(SEED) - 1), st.binary(min_size=1, max_size=6)),
        min_size=1,
        max_size=3,
    ),
    truncate=st.integers(0, len(SEED)),
)
def test_fuzzed_streams_decode_right_or_raise_lzma_error(
    cuts: list[tuple[int, bytes]], truncate: int
) -> None:
    data = bytearray(SEED)
    for offset, replacement in cuts:
        data[offset : offset + len(replacement)] = replacement
    try:
        out = b"".join(decode(bytes(data[:truncate])))
    except lzma.LZMAError:
        return
    assert out == DATA[:60_000]  # what decodes at all is the original (every part is checked)


def test_a_cancelled_block_stops_reading_its_data_at_the_next_piece() -> None:
    stream = xz_blocks(DATA, len(DATA))  # one block
    header = stream[:12]
    size = (stream[12] + 1) * 4
    block = xzblocks._parse_block_header(stream[12 : 12 + size], xzblocks._stream_header(header))
    body = stream[12 + size : 12 + block.total]
    job = xzblocks._BlockJob(header, block)
    worker = threading.Thread(target=job.run)
    worker.start()
    job.data.put(body[:1000])
    while not job.data.empty():  # the worker takes the first piece
        threading.Event().wait(0.01)
    job.cancelled = True  # the audit stopped: a damaged block later on, or Ctrl-C
    for start in range(1000, len(body), 1000):
        job.data.put(body[start : start + 1000])
    job.data.put(None)
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert isinstance(job.error, lzma.LZMAError)  # ended early; nobody reads it
    assert not job.data.empty()  # the rest of the block was never decoded


@pytest.fixture
def submitted(monkeypatch: pytest.MonkeyPatch) -> list[xzblocks._BlockJob]:
    """The block jobs handed to workers, in order."""
    jobs: list[xzblocks._BlockJob] = []
    submit = xzblocks._Pool.submit

    def recording(pool: xzblocks._Pool, job: xzblocks._BlockJob) -> xzblocks._BlockJob:
        jobs.append(job)
        return submit(pool, job)

    monkeypatch.setattr(xzblocks._Pool, "submit", recording)
    return jobs


def test_a_block_cut_short_is_cancelled_not_decoded_to_its_end(
    submitted: list[xzblocks._BlockJob],
) -> None:
    data = xz_blocks(DATA, len(DATA))
    with pytest.raises(lzma.LZMAError, match="truncated"):
        decode(data[: len(data) // 2])
    assert [job.cancelled for job in submitted] == [True]


def test_stopping_the_reader_cancels_the_block_it_was_reading(
    submitted: list[xzblocks._BlockJob],
) -> None:
    pieces = xzblocks.decode(io.BytesIO(xz_blocks(DATA, 150_000)).read, threads=2)
    next(pieces)
    pieces.close()  # a tar error or Ctrl-C in the audit
    assert submitted[0].cancelled
