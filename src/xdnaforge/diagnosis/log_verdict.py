"""The verdict on a log: failure, unknown failure, healthy, or unknown.

Pure (scan_file reads the file it is given). Healthy only when nothing contradicts it:
positive evidence (validate passed, a device listed, flm validate clean, an example test
PASSED, the driver probed) and no error-level line that is left over. A failure-looking
line that no knowledge entry explains makes the verdict "unknown failure" and is shown
with its upstream source when the message catalogue knows it ("amdxdna aie2_pci.c:aie2_init:
<template>").

A machine's journal is mostly not about the NPU. A large file whose lines carry journal or
dmesg prefixes is read as a journal: only lines that name the NPU stack (`xdna`: every
line of the amdxdna driver, its IOMMU faults included; `XDNA`: the shim's ioctls; `NPU`:
FastFlowLM, Lemonade, xrt-smi) and kernel call-trace frames (`+0x`: every WARNING, BUG or
Oops report has them) are classified. They are found by a search over large blocks, so
the other lines are never split or decoded one by one (bench/bench_doctor.py); another
program's failure in a journal is not the NPU's.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.diagnosis.classify import Classifier, Tally, prefix_length
from xdnaforge.diagnosis.knowledge import ANNOTATION, Diagnosis, Entry, load_knowledge
from xdnaforge.diagnosis.readers import ProbeWatch, findings, healthy_evidence, skipped_messages
from xdnaforge.diagnosis.upstream import Message

FAILURE, UNKNOWN_FAILURE, HEALTHY, UNKNOWN = "failure", "unknown failure", "healthy", "unknown"
_SHAPE_LINES = 20_000  # tool output kept for the readers (validate, examine, flm: short)
_UNEXPLAINED = 50
# a journal: a file this large whose first lines nearly all carry a journal/dmesg prefix
JOURNAL_MIN_BYTES = 16 * 1024 * 1024
_SNIFF_LINES = 2000
_BLOCK = 4 * 1024 * 1024
# what a journal line must contain for doctor to read it (case as the stack prints it)
JOURNAL_ANCHORS = (b"xdna", b"NPU", b"+0x")


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
    return _scan(enumerate(lines), entries)


def scan_file(
    path: Path,
    entries: tuple[Entry, ...] | None = None,
    *,
    journal_min_bytes: int = JOURNAL_MIN_BYTES,
) -> Verdict:
    """The verdict on a file: a journal is read through its NPU lines only (see above)."""
    if is_journal(path, journal_min_bytes):
        return _scan(journal_lines(path), entries)
    with path.open(encoding="utf-8", errors="replace") as stream:
        return _scan(enumerate(stream), entries)


def is_journal(path: Path, min_bytes: int = JOURNAL_MIN_BYTES) -> bool:
    """A large file whose first lines nearly all carry a journal or dmesg prefix."""
    if path.stat().st_size < min_bytes:
        return False
    with path.open(encoding="utf-8", errors="replace") as stream:
        head = [line for _, line in zip(range(_SNIFF_LINES), stream, strict=False) if line.strip()]
    prefixed = sum(1 for line in head if prefix_length(line))
    return bool(head) and prefixed >= 0.9 * len(head)


def journal_lines(path: Path, block_size: int = _BLOCK) -> Iterator[tuple[int, str]]:
    """(0-based line number, line) of the lines that contain a journal anchor, in order;
    the rest of the file is searched in blocks, never split into lines."""
    number = 0  # lines before the current block
    carry = b""
    with path.open("rb") as stream:
        while True:
            chunk = stream.read(block_size)
            block = carry + chunk
            if not chunk:
                end = len(block)
            else:
                end = block.rfind(b"\n") + 1
                if end == 0:  # one line longer than a block: keep reading
                    carry = block
                    continue
            starts: set[int] = set()
            for anchor in JOURNAL_ANCHORS:
                at = block.find(anchor, 0, end)
                while at != -1:
                    start = block.rfind(b"\n", 0, at) + 1
                    starts.add(start)
                    stop = block.find(b"\n", at, end)
                    at = block.find(anchor, stop, end) if stop != -1 else -1
            counted, line_no = 0, number
            for start in sorted(starts):
                line_no += block.count(b"\n", counted, start)
                counted = start
                stop = block.find(b"\n", start, end)
                text = block[start : stop if stop != -1 else end]
                yield line_no, text.decode("utf-8", errors="replace")
            number += block.count(b"\n", 0, end)
            carry = block[end:]
            if not chunk:
                return


def _scan(numbered: Iterable[tuple[int, str]], entries: tuple[Entry, ...] | None = None) -> Verdict:
    classifier = _classifier(load_knowledge() if entries is None else entries)
    tally = Tally(classifier)
    unexplained: list[Unexplained] = []
    # tool output (validate, examine, flm) for the readers; journal lines never are
    shape: deque[str] = deque(maxlen=_SHAPE_LINES)
    probe = ProbeWatch()
    number = 0
    # the loop runs once per journal line: names bound locally, the prefix matched once
    classify, add, keep = classifier.classify_message, tally.add, shape.append
    for number, raw in numbered:
        line = raw.rstrip("\r\n")
        if not line or line.startswith(ANNOTATION) or line.isspace():
            continue
        cut = prefix_length(line)
        message = line[cut:] if cut else line
        line_class = classify(message)
        if "amdxdna" in message:
            probe.feed(message)
        if line_class.explained:
            add(number, line, line_class)
        elif line_class.failure and len(unexplained) < _UNEXPLAINED:
            unexplained.append(Unexplained(line.strip(), line_class.located))
        if not cut:
            keep(line)
    body = "\n".join(shape)
    for extra, finding in enumerate(findings(body), start=number + 1):
        tally.add(extra, finding, classifier.classify(finding))
    diagnoses = tally.diagnoses()
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


@functools.lru_cache(maxsize=64)
def _classifier(entries: tuple[Entry, ...]) -> Classifier:
    return Classifier(entries)
