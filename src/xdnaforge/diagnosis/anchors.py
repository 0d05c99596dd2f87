"""Which lines of a journal block name the NPU stack: the search of doctor's journal mode.

Pure. A journal line is read when it contains an anchor: `xdna` (every line of the amdxdna
driver, its IOMMU faults and its IRQ names included), `XDNA` (the shim's ioctls,
`DRM_IOCTL_AMDXDNA_*`, which name neither `xdna` nor `NPU`), `NPU` (FastFlowLM, Lemonade,
xrt-smi) or `+0x` (the frames of every kernel WARNING, BUG or Oops). Two engines give the same
lines (tests/unit/diagnosis/test_log_verdict.py runs the journal tests with both):

- Hyperscan (python-hyperscan, installed where it has wheels: x86_64 Linux), one pass for
  the four literals at memory speed, as isal is for the audit's gzip;
- without it, each anchor through its rarest byte (memchr, then a look at the anchor around
  it) where that byte is rare in the journal, by its literal regex otherwise, whose scan for
  the first byte beats bytes.find's on words this short.

bench/bench_doctor.py measures both against `grep -c amdxdna`.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import hyperscan

# imported by the first journal's search (17 ms): a log that is not a journal never needs it;
# where it has no wheel for this machine, the search in Python, slower
HYPERSCAN = importlib.util.find_spec("hyperscan") is not None

# what a journal line must contain for doctor to read it (case as the stack prints it)
JOURNAL_ANCHORS = (b"xdna", b"XDNA", b"NPU", b"+0x")
SAMPLE = 256 * 1024  # of the first block: how often each byte of an anchor occurs
_LITERAL = {anchor: re.compile(re.escape(anchor)) for anchor in JOURNAL_ANCHORS}
# a pivot is worth it when it is rarer than one byte in _PIVOT_RATE: looking at one costs
# about what the literal regex spends scanning 1,500 bytes of a block (bench_doctor.py's
# journal: pivots one in 1,600 bytes search its blocks in 0.22 s, the regexes in 0.30 s)
_PIVOT_RATE = 1500

# (block, begin, end) -> start offsets, in order, of the lines of block[begin:end] that
# contain an anchor (block[begin:end] is whole lines)
Search = Callable[[bytes, int, int], list[int]]


def searcher(sample: bytes) -> Search:
    """The search for a journal whose first block begins with `sample`: by Hyperscan where
    it is installed and runs on this CPU."""
    if HYPERSCAN:
        database = _database()
        if database is not None:
            return functools.partial(_scanned, database, _scratch(database))
    return functools.partial(anchored, pivots=_pivots(sample))


@functools.cache
def _database() -> hyperscan.Database | None:
    try:
        import hyperscan
    except ImportError:  # installed, but its library does not load here
        return None
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        database.compile(
            expressions=list(JOURNAL_ANCHORS),
            ids=list(range(len(JOURNAL_ANCHORS))),
            elements=len(JOURNAL_ANCHORS),
            flags=0,
            literal=True,
        )
    except hyperscan.error:  # a CPU without the instructions it was built for
        return None
    return database


def _scratch(database: hyperscan.Database) -> hyperscan.Scratch:
    """A search's own scratch space: two searches at once do not share one."""
    import hyperscan

    return hyperscan.Scratch(database)


def _scanned(
    database: hyperscan.Database, scratch: hyperscan.Scratch, block: bytes, begin: int, end: int
) -> list[int]:
    starts: set[int] = set()
    add, rfind = starts.add, block.rfind

    def found(_ident: int, _start: int, to: int, _flags: int, _context: object) -> None:
        add(rfind(b"\n", begin, begin + to) + 1)

    # the extension scans any buffer (a view: the block is not copied); its stub says bytes
    view = memoryview(block)[begin:end]
    database.scan(view, match_event_handler=found, scratch=scratch)  # type: ignore[type-var]
    return sorted(max(start, begin) for start in starts)


def _pivots(sample: bytes) -> tuple[tuple[bytes, int], ...]:
    """(anchor, index) of each anchor's byte that is rarest in `sample` (index -1: none is
    rare, search for the anchor): memchr finds one byte an order of magnitude faster than
    a search finds a short word, and a line is only looked at where that byte is."""
    found = []
    for anchor in JOURNAL_ANCHORS:
        counts = [sample.count(anchor[i : i + 1]) for i in range(len(anchor))]
        index = min(range(len(anchor)), key=counts.__getitem__)
        rare = counts[index] * _PIVOT_RATE < max(len(sample), 1)
        found.append((anchor, index if rare else -1))
    return tuple(found)


def anchored(
    block: bytes, begin: int, end: int, pivots: tuple[tuple[bytes, int], ...] | None = None
) -> list[int]:
    """The search in Python (see the module's docstring); without pivots, by the regexes."""
    starts: set[int] = set()
    add, rfind = starts.add, block.rfind
    for anchor, index in pivots or tuple((a, -1) for a in JOURNAL_ANCHORS):
        at = begin
        if index >= 0:
            find, startswith = block.find, block.startswith
            pivot = anchor[index : index + 1]
            budget = (end - begin) // _PIVOT_RATE
            at = find(pivot, begin + index, end)
            while at != -1 and budget:
                budget -= 1
                if startswith(anchor, at - index, end):
                    add(rfind(b"\n", begin, at) + 1)
                at = find(pivot, at + 1, end)
            if at == -1:
                continue
            at -= index  # the byte is common here after all: the rest by the regex
        for match in _LITERAL[anchor].finditer(block, at, end):
            add(rfind(b"\n", begin, match.start()) + 1)
    return sorted(max(start, begin) for start in starts)
