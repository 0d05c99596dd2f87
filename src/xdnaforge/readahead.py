"""Pieces produced on a thread a few pieces ahead of their reader.

Pure plumbing below every layer: the .deb audit decodes gzip, bzip2 and xz members ahead of
the tar parser (debs/streams.py), and doctor reads a journal's next block while it searches
the last (diagnosis/log_verdict.py). A read or a decompressor releases the GIL, so the two
overlap on two cores. Memory stays bounded by `depth` pieces; anything the producer raises,
bugs included, is raised on the reader's thread; closing early stops the thread.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator

_DONE = object()


def read_ahead(pieces: Iterator[bytes], depth: int) -> tuple[Iterator[bytes], Callable[[], None]]:
    """The same pieces, produced on a thread up to `depth` pieces ahead; and how to stop it."""
    slots: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for piece in pieces:
                while not stop.is_set():
                    try:
                        slots.put(piece, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            slots.put(_DONE)
        # anything, bugs included, is handed to the reader, which raises it on its thread
        except BaseException as error:  # noqa: BLE001
            slots.put(error)

    thread = threading.Thread(target=produce, name="xdnaforge-read-ahead", daemon=True)
    thread.start()

    def consume() -> Iterator[bytes]:
        while True:
            item = slots.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, bytes)
            yield item

    def close() -> None:
        stop.set()
        while thread.is_alive():
            try:
                slots.get(timeout=0.1)
            except queue.Empty:
                continue
        thread.join()

    return consume(), close
