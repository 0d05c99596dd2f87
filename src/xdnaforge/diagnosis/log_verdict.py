"""The verdict on a log: failure, unknown failure, healthy, or unknown.

Pure (scan_file reads the file it is given). Healthy only when nothing contradicts it:
positive evidence (validate passed, a device listed, flm validate clean, an example test
PASSED, the driver probed) and no error-level line that is left over. A failure-looking
line that no knowledge entry explains makes the verdict "unknown failure" and is shown
with its upstream source when the message catalogue knows it ("amdxdna aie2_pci.c:aie2_init:
<template>").

A machine's journal is mostly not about the NPU. A large file whose lines carry journal or
dmesg prefixes is read as a journal: only the lines that contain an anchor (the NPU stack's
names and the kernel's call-trace frames, diagnosis/anchors.py, which finds them) are
classified, so the other lines are never split or decoded one by one
(bench/bench_doctor.py); another program's failure in a journal is not the NPU's. A block
is searched where it was read, while a thread reads the next; the lines are not counted as
they go by, only up to the few a diagnosis shows (JournalHits): the verdict and its line
numbers are those of the anchored lines read one by one.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.diagnosis.anchors import SAMPLE, Search, searcher
from xdnaforge.diagnosis.classify import (
    Classifier,
    LineClass,
    Tally,
    kernel_prefix,
    prefix_length,
)
from xdnaforge.diagnosis.knowledge import ANNOTATION, NPU_RE, Diagnosis, Entry, load_knowledge
from xdnaforge.diagnosis.paste import QUOTE_RE, STAMP_RE, unpasted
from xdnaforge.diagnosis.readers import (
    BDF_RE,
    ProbeWatch,
    findings,
    healthy_evidence,
    skipped_messages,
)
from xdnaforge.diagnosis.upstream import Message
from xdnaforge.host import NPU_DEVICE_IDS
from xdnaforge.readahead import read_ahead

FAILURE, UNKNOWN_FAILURE, HEALTHY, UNKNOWN = "failure", "unknown failure", "healthy", "unknown"
# the PCI core enumerating a device of AMD's: "pci 0000:c5:00.1: [1022:17f0] type 00 ..."
_PCI_ID_RE = re.compile(
    r"\bpci (?:[0-9a-f]{4}:)?([0-9a-f]{2}:[0-9a-f]{2}\.[0-7]): \[1022:([0-9a-f]{4})\]"
)
_SHAPE_LINES = 20_000  # tool output kept for the readers (validate, examine, flm: short)
_UNEXPLAINED = 50
# a journal: a file this large whose first lines nearly all carry a journal/dmesg prefix
JOURNAL_MIN_BYTES = 16 * 1024 * 1024
_SNIFF_LINES = 2000
# the first characters of a timestamp paste.STAMP_RE reads: tried only on lines that start so
_STAMP_STARTS = frozenset({"19", "20", "[1", "[2"})
# output of the NPU stack's own tools: FastFlowLM's "[FLM]  " lines, xrt-smi/xbutil's
# reports, XRT's own messages ("[XRT] ERROR: ...") and exceptions ('xrt_core::system_error')
_NPU_TOOL_RE = re.compile(
    r"^\[FLM\]  |^(?:Validate Device|Device\(s\) Present)\b|\bxrt-smi \w|^\[XRT\] "
    r"|an instance of 'xrt_core::"
    # a program loading an xclbin, the container only XRT loads ("Loading XCLBIN: 4x4.xclbin")
    r"|\.xclbin\b"
    # the Windows NPU driver's calls failing as XRT's Windows shim reports them: what it did
    # and the NTSTATUS of an error ("Failed to invalidate cache (0xc000000d): The parameter
    # is incorrect.", "Failed to create context virtual (0xc01e0009): ...")
    r"|\bFailed to [a-z][\w ]{2,60} \(0x[cC][0-9a-fA-F]{7}\)"
    # a command line after a shell's prompt that runs the NPU stack ("# amdgpu_top --xdna")
    r"|^\S*[#$] (?:\w+=\S+ )*\S+ .*?(?i:xdna|\bnpu\b|/dev/accel)",
    re.M,
)
_LINE_LIMIT = 8192
_BLOCK = 1024 * 1024  # fits the cache the four anchor passes share (bench_doctor.py)


@dataclass(frozen=True, slots=True)
class Unexplained:
    line: str
    source: Message | None

    def describe(self) -> str:
        if self.source is None:
            return f"no known signature explains: {self.line}"
        return f"{self.source.describe()} (source {self.source.source()})\n    seen: {self.line}"


@dataclass(frozen=True, slots=True)
class Verdict:
    status: str
    diagnoses: tuple[Diagnosis, ...]
    unexplained: tuple[Unexplained, ...]
    evidence: str | None  # the positive evidence, when any

    @property
    def failing(self) -> bool:
        return self.status in (FAILURE, UNKNOWN_FAILURE)


def judge(text: str, entries: tuple[Entry, ...] | None = None) -> Verdict:
    return scan(text.splitlines(), entries)


def scan(lines: Iterable[str], entries: tuple[Entry, ...] | None = None) -> Verdict:
    """One pass over the lines (a file object streams): bounded memory whatever the size."""
    return _scan(unpasted(enumerate(lines)), entries)


def _spaced_out(line: str) -> str:
    """A line of UTF-16 text shown byte by byte, its NULs as spaces (PowerShell's output
    file pasted as bytes: "E r r o r :   N o"), as the program wrote it; any other line
    as it is."""
    if "   " not in line:  # a space of the text shows as three: "0 7   1 5"; "a a a a" is words
        return line
    for start in (0, 1):
        if not line[start + 1 :: 2].strip(" ") and line[start] != " ":
            text = line[start::2]
            if sum(c.isalnum() for c in text) >= 8:
                return text
    return line


def _encoding(path: Path) -> str:
    """The encoding of a log file: UTF-16 with its byte-order mark (what PowerShell 5's `>`
    writes: a Windows user's `xrt-smi validate > out.txt`) or without one (every other byte
    of ASCII text NUL), UTF-8 with or without its mark."""
    with path.open("rb") as stream:
        head = stream.read(4096)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    if len(head) >= 8 and head[1::2].count(0) >= 0.9 * (len(head) // 2):
        return "utf-16-le"
    if len(head) >= 8 and head[0::2].count(0) >= 0.9 * (len(head) // 2):
        return "utf-16-be"
    return "utf-8-sig"


def scan_file(
    path: Path,
    entries: tuple[Entry, ...] | None = None,
    *,
    journal_min_bytes: int = JOURNAL_MIN_BYTES,
    block_size: int = _BLOCK,
) -> Verdict:
    """The verdict on a file: a journal is read through its NPU lines only (see above)."""
    if is_journal(path, journal_min_bytes):
        hits = JournalHits(path, block_size)
        verdict = _scan(hits, entries, hits.remember)
        return hits.renumber(verdict)
    with path.open(encoding=_encoding(path), errors="replace") as stream:
        return _scan(unpasted(enumerate(stream)), entries)


def is_journal(path: Path, min_bytes: int = JOURNAL_MIN_BYTES) -> bool:
    """A large file whose first lines nearly all carry a journal or dmesg prefix."""
    if path.stat().st_size < min_bytes:
        return False
    with path.open(encoding="utf-8", errors="replace") as stream:
        head = [line for _, line in zip(range(_SNIFF_LINES), stream, strict=False) if line.strip()]
    prefixed = sum(1 for line in head if prefix_length(line))
    return bool(head) and prefixed >= 0.9 * len(head)


def _blocks(path: Path, block_size: int) -> Iterator[tuple[int, bytes, int, int]]:
    """(file offset of block[begin], block, begin, end): block[begin:end] is whole lines.

    A block is searched where it was read, never copied: the line cut by a block's end is
    joined to the head of the next one on its own (a short block of one line). A line
    longer than a block (no line end in a hostile file) is searched a block at a time. The
    next block is read on a thread while this one is searched (a read releases the GIL; on
    the bench journal the reads take about as long as Hyperscan's search)."""
    with path.open("rb") as stream:
        chunks, stop = read_ahead(iter(functools.partial(stream.read, block_size), b""), 1)
        try:
            yield from _whole_lines(chunks, block_size)
        finally:
            stop()


def _whole_lines(chunks: Iterator[bytes], block_size: int) -> Iterator[tuple[int, bytes, int, int]]:
    """The _blocks of a file's chunks, read in order."""
    offset = 0
    carry = b""
    for chunk in chunks:
        head = chunk.find(b"\n") + 1
        if head == 0:  # no line end in the whole block: one long line, keep reading
            carry += chunk
            if len(carry) >= block_size:  # searched in pieces: memory stays flat
                yield offset, carry, 0, len(carry)
                offset += len(carry)
                carry = b""
            continue
        if carry:
            joined = carry + chunk[:head]
            yield offset, joined, 0, len(joined)
            offset += len(joined)
        else:
            head = 0
        end = chunk.rfind(b"\n") + 1
        if end > head:
            yield offset, chunk, head, end
            offset += end - head
        carry = chunk[end:]
    if carry:  # the last line, without a line end
        yield offset, carry, 0, len(carry)


def _line(block: bytes, start: int, end: int) -> str:
    stop = block.find(b"\n", start, end)
    return block[start : stop if stop != -1 else end].decode("utf-8", errors="replace")


def journal_lines(path: Path, block_size: int = _BLOCK) -> Generator[tuple[int, str], None, None]:
    """(0-based line number, line) of the lines that contain a journal anchor, in order;
    the rest of the file is searched in blocks, never split into lines."""
    number = 0  # lines before the current block
    search: Search | None = None
    for _, block, begin, end in _blocks(path, block_size):
        search = search or searcher(block[begin : begin + SAMPLE])
        counted, line_no = begin, number
        for start in search(block, begin, end):
            line_no += block.count(b"\n", counted, start)
            counted = start
            yield line_no, _line(block, start, end)
        number += block.count(b"\n", begin, end)


def _newlines(block: bytes, start: int, stop: int, most: int) -> int:
    """Line ends in block[start:stop], counted up to `most` (a few memchr calls)."""
    found = 0
    while found < most:
        start = block.find(b"\n", start, stop) + 1
        if start == 0:
            break
        found += 1
    return found


class JournalHits:
    """The anchored lines of a journal for _scan, without counting every line of the file.

    Each line gets an ordinal that keeps the order of the lines and every distance of up to
    _NEAR lines exact (all the tally compares: errno chains span a few lines); a larger gap
    counts as _NEAR. The true line number is counted at the end for the few lines a
    diagnosis shows (renumber), in one pass up to the last of them."""

    _NEAR = 8  # > classify._CHAIN_LINES

    def __init__(self, path: Path, block_size: int = _BLOCK) -> None:
        self.path = path
        self.block_size = block_size
        self._offset = 0  # file offset of the line last yielded
        self._shown: dict[int, int] = {}  # ordinal -> file offset, of lines a diagnosis may show

    def __iter__(self) -> Iterator[tuple[int, str]]:
        near = self._NEAR
        ordinal = -1
        gap = near  # line ends since the line last yielded (capped)
        search: Search | None = None
        for offset, block, begin, end in _blocks(self.path, self.block_size):
            search = search or searcher(block[begin : begin + SAMPLE])
            since = begin
            for start in search(block, begin, end):
                if gap < near:
                    gap += _newlines(block, since, start, near - gap)
                ordinal += max(gap, 1)
                self._offset = offset + start - begin
                yield ordinal, _line(block, start, end)
                since, gap = start, 0
            if gap < near:
                gap += _newlines(block, since, end, near - gap)

    def remember(self, ordinal: int) -> None:
        """The line just yielded (`ordinal`) may be shown as a diagnosis' evidence."""
        self._shown.setdefault(ordinal, self._offset)

    def renumber(self, verdict: Verdict) -> Verdict:
        """`verdict` with the true 1-based line of each diagnosis' evidence."""
        wanted = sorted({self._shown[d.line - 1] for d in verdict.diagnoses if d.line})
        numbers: dict[int, int] = {}
        lines = 0  # line ends before `at`
        at = 0
        with self.path.open("rb") as stream:
            for offset in wanted:
                while at < offset:
                    chunk = stream.read(min(self.block_size, offset - at))
                    if not chunk:
                        break
                    lines += chunk.count(b"\n")
                    at += len(chunk)
                numbers[offset] = lines
        diagnoses = tuple(
            dataclasses.replace(d, line=numbers[self._shown[d.line - 1]] + 1) if d.line else d
            for d in verdict.diagnoses
        )
        return dataclasses.replace(verdict, diagnoses=diagnoses)


def _scan(
    numbered: Iterable[tuple[int, str]],
    entries: tuple[Entry, ...] | None = None,
    remember: Callable[[int], None] | None = None,
) -> Verdict:
    """`remember(number)` is told of each line that may become a diagnosis' evidence."""
    classifier = _classifier(load_knowledge() if entries is None else entries)
    tally = Tally(classifier)
    unexplained: list[Unexplained] = []
    where: dict[int, int] = {}  # id of an unexplained line -> its number in the log
    # tool output (validate, examine, flm) for the readers; journal lines never are
    shape: deque[str] = deque(maxlen=_SHAPE_LINES)
    probe = ProbeWatch()
    # kernel lines of other drivers; the NPU's PCI addresses the driver's lines show are the
    # probe watch's, those the PCI core enumerates with an NPU's id these
    aside: list[tuple[int, Unexplained, str]] = []
    enumerated: set[str] = set()
    number = 0
    # the loop runs once per journal line: names bound locally, the prefix matched once
    classify, add, keep = classifier.classify_message, tally.add, shape.append
    for number, raw in numbered:
        # a message is at a line's start: a hostile line is read to its first _LINE_LIMIT
        # characters only, so no regex ever sees more (bounded time per line)
        line = raw[:_LINE_LIMIT].rstrip("\r\n")
        if line.startswith(">"):  # quoted in a reply (markdown, mail): the log is inside
            line = QUOTE_RE.sub("", line, count=1)
        if not line or line.startswith(ANNOTATION) or line.isspace():
            continue
        if len(line) >= 16 and (line[1] == line[3] == line[5] == " " or line[2] == line[4] == " "):
            line = _spaced_out(line)
        cut = prefix_length(line)
        if not cut and line[:2] in _STAMP_STARTS:
            stamp = STAMP_RE.match(line)  # a program's own timestamp, or a CI log's
            if stamp:  # what follows may be a kernel line ("[ 12.3] amdxdna ...")
                line = line[stamp.end() :]
                # a CI's stamp before a program's own (GitHub Actions running Lemonade), not
                # before a journal's line, whose own prefix begins with its time
                again = STAMP_RE.match(line) if line[:2] in _STAMP_STARTS else None
                if again and not prefix_length(line):
                    line = line[again.end() :]
                if line.startswith(">"):  # a CI's stamp before a quoted reply's line
                    line = QUOTE_RE.sub("", line, count=1)
                cut = prefix_length(line)
        message = line[cut:] if cut else line
        # read as the program printed it: a paste's or a runner's indentation ("  FAILED: "
        # in a list item) is not part of the message
        line_class = classify(
            message.lstrip(" \t") if message[:1] in " \t" else message,
            bool(cut) and kernel_prefix(line[:cut]),
        )
        if "amdxdna" in message:
            probe.feed(message)
        elif "[1022:" in message:
            enumerated.update(_npu_devices(message))
        if line_class.explained:
            if remember is not None and tally.records(line_class):
                remember(number)
            add(number, line, line_class)
        elif line_class.failure and len(unexplained) < _UNEXPLAINED:
            item = Unexplained(line.strip(), line_class.located)
            if (
                cut
                and line_class.located is None
                and kernel_prefix(line[:cut])
                and not NPU_RE.search(message)
            ):
                # another driver's failure in the kernel's log ("cfg80211: failed to load
                # regulatory.db", amd-pmf's TEE) is not the NPU's: an NPU line names the
                # NPU, prints a template of its driver, or names its PCI device (below)
                if len(aside) < _UNEXPLAINED:
                    aside.append((number, item, message))
            else:
                unexplained.append(item)
                where[id(item)] = number
        if not cut:
            keep(line)
        elif " kernel: " not in line[:cut] and line[cut - 2 : cut] == ": ":
            keep(message)  # a service's output in the journal (lemonade-server, flm serve)
    npu_addresses = probe.addresses | enumerated
    for at, item, message in aside:  # the NPU's PCI device, named by its address only
        if len(unexplained) < _UNEXPLAINED and npu_addresses & set(BDF_RE.findall(message)):
            unexplained.append(item)
            where[id(item)] = at
    body = "\n".join(shape)
    for extra, finding in enumerate(findings(body), start=number + 1):
        found = classifier.classify(finding)
        if found.explained:
            tally.add(extra, finding, found)
        elif found.failure:  # a reader's finding no entry names is still a failure
            unexplained.append(Unexplained(finding, found.located))

    def read_again(read: Callable[[str], LineClass | None]) -> list[Unexplained]:
        """The unexplained lines `read` places go to the tally; the others stay."""
        still = []
        for item in unexplained:
            placed = read(item.line)
            if placed is None:
                still.append(item)
            else:
                tally.add(where.get(id(item), number), item.line, placed)
        return still

    def in_npu_tool(line: str) -> LineClass | None:
        cut = prefix_length(line)
        if cut and kernel_prefix(line[:cut]) and not NPU_RE.search(line[cut:]):
            return None  # another driver's line in the kernel's log, not the tool's
        return classifier.classify_in_npu_tool(line[cut:])

    def in_build(line: str) -> LineClass | None:
        from xdnaforge.diagnosis.build_errors import building

        if prefix_length(line) or not building(body, line):
            return None  # a kernel's or journal's line, or no build tool's line before it
        return classifier.classify_in_build(line)

    if unexplained and _NPU_TOOL_RE.search(body):
        # the lines of an NPU tool's own run are the NPU stack's, whatever they name
        unexplained = read_again(in_npu_tool)
    if unexplained and not any(d.severity == "error" for d in tally.diagnoses()):
        # an error after a build tool's own lines that no entry names: a step of that build
        # failed (a build script's message, a packaging step's)
        unexplained = read_again(in_build)
    diagnoses = tally.diagnoses()
    if any("{compiler}" in d.cause or "{compiler}" in d.fix for d in diagnoses):
        from xdnaforge.diagnosis.build_errors import complete  # build logs only

        diagnoses = complete(diagnoses, body)  # the compiler the build log names
    skipped = skipped_messages(body)
    if skipped:  # the tests validate skipped while the others passed: warnings
        diagnoses = [
            dataclasses.replace(d, severity="warning")
            if d.severity == "error" and any(m in d.evidence for m in skipped)
            else d
            for d in diagnoses
        ]
        unexplained = [u for u in unexplained if not any(m in u.line for m in skipped)]
    errors = [d for d in diagnoses if d.severity == "error"]
    # a known error usually drags follow-up lines along (probe failed, ...): those are not
    # a second, unknown failure
    left = () if errors else tuple(unexplained)
    evidence = healthy_evidence(body, probe)
    if errors:
        status = FAILURE
    elif left:
        status = UNKNOWN_FAILURE
    elif evidence:
        status = HEALTHY
    else:
        status = UNKNOWN
    return Verdict(status, tuple(diagnoses), left, evidence)


def _npu_devices(message: str) -> set[str]:
    """The PCI address (bus:device.function) the PCI core enumerates with an NPU's id."""
    listed = _PCI_ID_RE.search(message)
    if listed and listed.group(2) in NPU_DEVICE_IDS:
        return {listed.group(1)}
    return set()


@functools.lru_cache(maxsize=64)
def _classifier(entries: tuple[Entry, ...]) -> Classifier:
    return Classifier(entries)
