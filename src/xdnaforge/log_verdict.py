"""The verdict on a log: failure, unknown failure, healthy, or unknown.

Pure. Healthy only when nothing contradicts it: positive evidence (validate passed, a
device listed, flm validate clean, an example test PASSED) and no error-level line that
is left over. A failure-looking line that no knowledge entry explains makes the verdict
"unknown failure" and is shown with its upstream source when the message catalogue knows
it ("amdxdna aie2_pci.c:aie2_init: <template>").
"""

from __future__ import annotations

from dataclasses import dataclass

from .knowledge import ANNOTATION, Diagnosis, Entry, diagnose, is_failure_line, load_knowledge
from .readers import findings, healthy_evidence
from .upstream import Message, catalogue

FAILURE, UNKNOWN_FAILURE, HEALTHY, UNKNOWN = "failure", "unknown failure", "healthy", "unknown"


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
    entries = load_knowledge() if entries is None else entries
    derived = findings(text)
    full = "\n".join([text, *derived]) if derived else text
    diagnoses = diagnose(full, entries)
    errors = [d for d in diagnoses if d.severity == "error"]
    unexplained = () if errors else tuple(_unexplained(full, entries))
    evidence = healthy_evidence(text)
    if errors:
        status = FAILURE
    elif unexplained:
        status = UNKNOWN_FAILURE
    elif evidence:
        status = HEALTHY
    else:
        status = UNKNOWN
    return Verdict(status, tuple(diagnoses), unexplained, evidence)


def _unexplained(text: str, entries: tuple[Entry, ...]) -> list[Unexplained]:
    """Error-level lines that no entry's signature matches (a known error usually drags
    follow-up lines along, so this is asked only when nothing error-level was found)."""
    found = []
    for line in text.splitlines():
        if line.startswith(ANNOTATION) or not line.strip():
            continue
        message = None
        if not is_failure_line(line):
            message = catalogue().locate(line) if _maybe_message(line) else None
            if message is None or message.level != "error":
                continue
        if any(p.search(line) for e in entries for p in e.signatures):
            continue
        found.append(Unexplained(line.strip(), message or catalogue().locate(line)))
    return found


def _maybe_message(line: str) -> bool:
    # an error message without a failure word ("Invalid mbox magic"-like texts are caught by
    # FAILURE_RE; this finds e.g. "aie2_foo: Bad time quantum 5") only on driver lines
    return "amdxdna" in line or "[drm]" in line
