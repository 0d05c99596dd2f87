"""The verdict on a log: failure, unknown failure, healthy, or unknown.

Pure. Healthy only when nothing contradicts it: positive evidence (validate passed, a
device listed, flm validate clean, an example test PASSED) and no error-level line that
is left over. A failure-looking line that no knowledge entry explains makes the verdict
"unknown failure" and is shown with its upstream source when the message catalogue knows
it ("amdxdna aie2_pci.c:aie2_init: <template>").
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from .classify import Classifier, Tally, prefix_length
from .knowledge import ANNOTATION, Diagnosis, Entry, load_knowledge
from .readers import ProbeWatch, findings, healthy_evidence
from .upstream import Message

FAILURE, UNKNOWN_FAILURE, HEALTHY, UNKNOWN = "failure", "unknown failure", "healthy", "unknown"
_SHAPE_LINES = 20_000  # tool output kept for the readers (validate, examine, flm: short)
_UNEXPLAINED = 50


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
    classifier = _classifier(load_knowledge() if entries is None else entries)
    tally = Tally(classifier)
    unexplained: list[Unexplained] = []
    # tool output (validate, examine, flm) for the readers; journal lines never are
    shape: deque[str] = deque(maxlen=_SHAPE_LINES)
    probe = ProbeWatch()
    number = 0
    # the loop runs once per journal line: names bound locally, the prefix matched once
    classify, add, keep = classifier.classify_message, tally.add, shape.append
    for number, raw in enumerate(lines):
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
