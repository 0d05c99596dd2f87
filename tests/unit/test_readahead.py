"""readahead: pieces produced on a thread ahead of their reader; what the producer raises
reaches the reader, and closing early stops the thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from xdnaforge.readahead import read_ahead


def _pieces(error: BaseException | None = None, count: int = 50) -> Iterator[bytes]:
    for number in range(count):
        if error is not None and number == 1:
            raise error
        yield b"piece %d\n" % number


def test_the_pieces_come_in_order() -> None:
    pieces, stop = read_ahead(_pieces(), 2)
    assert list(pieces) == list(_pieces())
    stop()


@pytest.mark.parametrize(
    "error",
    [OSError(5, "Input/output error"), ValueError("I/O operation on closed file")],
)
def test_what_the_producer_raises_reaches_the_reader(error: BaseException) -> None:
    pieces, stop = read_ahead(_pieces(error), 1)
    assert next(pieces) == b"piece 0\n"
    with pytest.raises(type(error), match=str(error.args[-1])):
        next(pieces)  # never a wait for a piece that will not come
    stop()


def test_closing_early_stops_the_thread() -> None:
    before = threading.active_count()
    pieces, stop = read_ahead(_pieces(count=10_000), 1)
    next(pieces)
    assert threading.active_count() == before + 1  # waiting with the next piece
    stop()
    assert threading.active_count() == before
