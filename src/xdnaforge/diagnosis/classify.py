"""Which knowledge entries a log line belongs to, and the diagnoses a stream of lines adds up
to. Pure.

Journals repeat the same messages with new timestamps, so a line is classified once per
message (the line without its dmesg/journal prefix) and the answer is cached: doctor reads
a 200 MB journal in one pass with flat memory (bench/bench_doctor.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdnaforge.diagnosis.knowledge import (
    ANNOTATION,
    FAILURE_RE,
    NPU_RE,
    Diagnosis,
    Entry,
    load_families,
    load_knowledge,
    make_diagnosis,
)
from xdnaforge.diagnosis.upstream import Message, catalogue

# "[  5.57]", "[Tue Feb 10 10:42:10 2026]", "nov 04 13:18:03 host kernel: [  1.6]"
_PREFIX_RE = re.compile(
    r"(?:[A-Za-z]{3} +\d+ [\d:]+ \S+ [^:\s]+: )?"
    r"(?:(?:\[\s*\d+\.\d+\]|\[[A-Z][a-z]{2} [^\]]*\]) *)?"
)
_CACHE_LIMIT = 100_000


def prefix_length(line: str) -> int:
    """Length of the dmesg/journal prefix of `line` (0 when it has none)."""
    match = _PREFIX_RE.match(line)
    return match.end() if match else 0


def message_of(line: str) -> str:
    """The line without its dmesg/journal prefix."""
    match = _PREFIX_RE.match(line)
    return line[match.end() :] if match and match.end() else line


def _driver_line(line: str) -> bool:
    return "amdxdna" in line or "[drm]" in line


@dataclass(frozen=True, slots=True)
class LineClass:
    specific: tuple[Entry, ...]
    generic: Entry | None
    located: Message | None  # the upstream template the line prints, when known
    failure: bool  # error-level: left unexplained, it makes the verdict "unknown failure"
    explained: bool = False


class Classifier:
    def __init__(self, entries: tuple[Entry, ...]) -> None:
        self.specific = tuple(e for e in entries if not e.generic)
        self.generic = tuple(e for e in entries if e.generic)
        families = load_families()
        self.rank = {family.id: index for index, family in enumerate(families)}
        self.by_file = {name: f.id for f in families for name in f.files}
        # for lines that do not name the NPU stack: only families that are not NPU-only
        npu_only = {f.id for f in families if f.npu_only}
        self.generic_anywhere = tuple(e for e in self.generic if e.family not in npu_only)
        self._cache: dict[str, LineClass] = {}

    def classify(self, line: str) -> LineClass:
        return self.classify_message(message_of(line))

    def classify_message(self, key: str) -> LineClass:
        """Classify a line already stripped of its journal prefix (message_of)."""
        found = self._cache.get(key)
        if found is None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()  # bounded memory on journals of ever-new messages
            found = self._cache[key] = self._classify(key)
        return found

    def _classify(self, line: str) -> LineClass:
        specific = tuple(e for e in self.specific if any(p.search(line) for p in e.signatures))
        failure = FAILURE_RE.search(line) is not None
        located = catalogue().locate(line) if failure or _driver_line(line) else None
        driver_problem = located is not None and located.component == "amdxdna"
        if located is not None and located.level == "error" and driver_problem:
            failure = True  # an error message without a failure word ("Bad time quantum 5")
        if specific or not self.generic or not (failure or driver_problem):
            # a driver problem at warning level ("Device isn't making progress") still names
            # its family; other lines must look like a failure to reach a generic entry
            return LineClass(specific, None, located, failure, bool(specific))
        # another driver's "failed to load firmware" is not the NPU's
        candidates = self.generic if NPU_RE.search(line) else self.generic_anywhere
        catch = next((e for e in candidates if any(p.search(line) for p in e.signatures)), None)
        if catch is None and located is not None:
            family = self.by_file.get(located.file.rsplit("/", 1)[-1])
            catch = next((e for e in self.generic if e.family == family), None)
        return LineClass(specific, catch, located, failure, catch is not None)


class Tally:
    """Diagnoses of the lines fed so far: once per code, root-most family first."""

    def __init__(self, classifier: Classifier) -> None:
        self.classifier = classifier
        self._found: dict[str, tuple[int, int, Diagnosis]] = {}
        self._specific_codes = {e.code for e in classifier.specific}

    def add(self, number: int, line: str, line_class: LineClass) -> None:
        if not line_class.explained:
            return
        for entry in line_class.specific:
            self._record(entry, number, line, line_class)
        if line_class.generic is not None:
            self._record(line_class.generic, number, line, line_class)

    def _record(self, entry: Entry, number: int, line: str, line_class: LineClass) -> None:
        if entry.code in self._found:
            return
        source = line_class.located.describe() if line_class.located else ""
        place = (self.classifier.rank.get(entry.family, len(self.classifier.rank)), number)
        self._found[entry.code] = (*place, make_diagnosis(entry, line.strip(), source))

    def diagnoses(self) -> list[Diagnosis]:
        found = self._found.values()
        specific = {d.family for _, _, d in found if d.code in self._specific_codes}
        # a generic entry only speaks for a family no specific entry has named
        kept = [
            i for i in found if i[2].code in self._specific_codes or i[2].family not in specific
        ]
        return [diagnosis for _, _, diagnosis in sorted(kept, key=lambda item: item[:2])]


def diagnose(text: str, entries: tuple[Entry, ...] | None = None) -> list[Diagnosis]:
    """Every known failure in `text` once per code: root-most family first, then by line."""
    classifier = Classifier(load_knowledge() if entries is None else entries)
    tally = Tally(classifier)
    for number, line in enumerate(text.splitlines()):
        if not line.startswith(ANNOTATION):
            tally.add(number, line, classifier.classify(line))
    return tally.diagnoses()
