"""The decompressed member view: reads across pieces, cheap seeks, read-ahead that stops."""

from __future__ import annotations

import gzip
import io
import threading
import zlib

import pytest

from xdnaforge.debs import streams
from xdnaforge.debs.streams import DECOMPRESS_ERRORS, PieceReader, open_member


def reader(*pieces: bytes) -> PieceReader:
    return PieceReader(iter(pieces))


def test_reads_span_pieces_and_stop_at_the_end() -> None:
    stream = reader(b"abc", b"", b"defg", b"h")
    assert stream.read(5) == b"abcde"
    assert stream.read(10) == b"fgh"
    assert stream.read(1) == b""


def test_seeks_forward_over_pieces_and_back_into_recent_history() -> None:
    stream = reader(b"a" * 5000, b"b" * 5000, b"c" * 5000)
    assert stream.seek(9999) == 9999
    assert stream.read(2) == b"bc"
    stream.seek(10_000 - 1)  # tarfile steps back one byte to check a member's last byte
    assert stream.read(1) == b"b"
    with pytest.raises(io.UnsupportedOperation):
        stream.seek(10)


def test_a_seek_past_the_end_reads_nothing() -> None:
    stream = reader(b"abc")
    stream.seek(100)
    assert stream.read(1) == b""


def test_gzip_members_are_read_ahead_on_a_thread_and_errors_reach_the_reader() -> None:
    data = bytes(range(256)) * 10_000
    stream = open_member(io.BytesIO(gzip.compress(data)), ".gz")
    with stream:
        assert stream.read() == data
    broken = open_member(io.BytesIO(gzip.compress(data)[:-30]), ".gz")
    with broken, pytest.raises(EOFError):
        broken.read()


def test_closing_early_stops_the_read_ahead_thread() -> None:
    data = gzip.compress(bytes(4 << 20))
    before = threading.active_count()
    stream = open_member(io.BytesIO(data), ".gz")
    stream.read(10)
    stream.close()
    assert threading.active_count() == before


@pytest.mark.parametrize("decoder", ["installed", "zlib"])
def test_concatenated_gzip_members_with_zero_padding_read_as_one(
    decoder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if decoder == "zlib":  # where python-isal is not installed
        monkeypatch.setattr(streams, "inflate", zlib)
    data = gzip.compress(b"first ") + gzip.compress(b"second") + b"\0" * 512
    with open_member(io.BytesIO(data), ".gz") as stream:
        assert stream.read() == b"first second"


def test_damaged_gzip_data_is_an_error_on_the_reader() -> None:
    data = bytearray(gzip.compress(bytes(range(256)) * 400))
    data[len(data) // 2] ^= 0xFF
    with open_member(io.BytesIO(bytes(data)), ".gz") as stream, pytest.raises(DECOMPRESS_ERRORS):
        stream.read()
