"""How doctor does on real logs it was not written from: a corpus of public logs, each with
its source thread and the expected answer, judged leave-one-source-out.

Pure. A corpus case is a text file: `key: value` header lines (source, thread, expect),
a line `---`, then the log as pasted. `expect` is a knowledge family id or `healthy`.
Leave-one-source-out: a case is judged with the knowledge minus every entry whose
evidence cites only cases of the same source thread, so a thread's logs never train
and test at once. The tuning/held-out split is fixed by a hash of the source URL, not
chosen by hand.

Time split (`time_split`): the cases whose thread was opened after a cut-off date
(header `opened:`) are judged with the knowledge minus every entry that cites a case
(corpus or field) opened after it: knowledge as it could have been written before those
threads existed. The generated catalogue depends on no log and is kept whole.

Fresh sets (`fresh`): logs collected from threads neither the corpus nor the field cases
cite, by someone who neither ran doctor on them nor read its knowledge, judged with the
whole knowledge; a case's set is the first digit of its id (f1NN, f2NN: README there).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.diagnosis import knowledge, log_verdict

HEALTHY = "healthy"
NOTES = "notes"  # the family of harmless messages often mistaken for problems
TARGET = 0.90


@dataclass(frozen=True, slots=True)
class Case:
    ident: str  # "c012" (corpus) or "006" (field)
    source: str  # the thread's URL
    thread: str  # the thread's conclusion
    expect: str  # a family id or "healthy"
    text: str
    opened: str = ""  # ISO date the thread was opened (estimated), "" when unknown

    @property
    def split(self) -> str:
        """'tune' or 'held-out', by the source URL's hash (a thread is never split)."""
        digest = hashlib.sha256(self.source.encode()).digest()
        return "tune" if digest[0] % 2 == 0 else "held-out"


@dataclass(frozen=True, slots=True)
class Outcome:
    case: Case
    found: str  # family of the first error diagnosis, "healthy", or the verdict status

    @property
    def right(self) -> bool:
        # a log labelled notes is a working run whose harmless messages were taken for
        # problems: "healthy" is the right verdict on it (notes diagnoses are warnings,
        # which `found` does not count, so "notes" itself is never found)
        return self.found == self.case.expect or (
            self.case.expect == NOTES and self.found == HEALTHY
        )

    @property
    def false_healthy(self) -> bool:
        return self.found == HEALTHY and self.case.expect not in (HEALTHY, NOTES)


def parse_case(text: str, ident: str) -> Case:
    head, sep, body = text.partition("\n---\n")
    if not sep:
        raise ValueError(f"{ident}: no '---' line between the header and the log")
    fields = {}
    for line in head.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    missing = {"source", "thread", "expect"} - set(fields)
    if missing:
        raise ValueError(f"{ident}: header lacks {', '.join(sorted(missing))}")
    opened = fields.get("opened", "").split(" ", 1)[0]
    return Case(ident, fields["source"], fields["thread"], fields["expect"], body, opened)


def load_corpus(folder: Path, pattern: str = "c*.txt") -> list[Case]:
    """The cases of a corpus folder (cNNN-*.txt, or fNNN-*.txt for the fresh sets), in
    name order."""
    return [
        parse_case(path.read_text(encoding="utf-8"), path.name.split("-", 1)[0])
        for path in sorted(folder.glob(pattern))
    ]


def fresh(cases: Iterable[Case]) -> dict[str, list[Outcome]]:
    """The fresh sets, judged with the knowledge, in the sets' order. An id is f, the set's
    mark and a two-digit number: the mark is 1-9, then a for set 10, b for 11, ... y for
    34, then the set's number in decimal (f3501 is set 35's first log)."""
    entries = knowledge.load_knowledge()
    sets: dict[int, list[Outcome]] = {}
    for case in cases:
        sets.setdefault(fresh_set(case.ident), []).append(judge_case(case, entries))
    return {str(number): outcomes for number, outcomes in sorted(sets.items())}


def fresh_set(ident: str) -> int:
    """The set a fresh log's id names (``fresh``'s rule)."""
    mark = ident[1:-2]
    if mark.isdigit() and ((len(mark) == 1 and mark != "0") or int(mark) >= 35):
        return int(mark)
    if len(mark) == 1 and "a" <= mark <= "y":
        return 10 + ord(mark) - ord("a")
    raise ValueError(
        f"{ident}: a fresh id is f, a set's mark (1-9, a-y or a number from 35) and two digits"
    )


def judge_case(case: Case, entries: tuple[knowledge.Entry, ...]) -> Outcome:
    verdict = log_verdict.judge(case.text, entries)
    errors = [d for d in verdict.diagnoses if d.severity == "error"]
    if verdict.status == log_verdict.HEALTHY:
        found = HEALTHY
    elif errors:
        found = errors[0].family
    else:
        found = verdict.status
    return Outcome(case, found)


def thread_of(url: str) -> str:
    """The thread a source URL names, as the fresh sets count threads: its anchor and a
    trailing slash left out, FastFlowLM's old home (ROCm/FastFlowLM) read as its new one, a
    file of the library's index by its id alone."""
    if url.startswith("library-file:"):
        return url.split()[0]
    return url.split("#", 1)[0].rstrip("/").replace("ROCm/FastFlowLM", "FastFlowLM/FastFlowLM")


def cited_threads(corpus: Path, field: Path, fresh_folder: Path) -> set[str]:
    """Every thread the corpus, the field cases (their case.yaml's URLs) and the fresh sets
    cite: what a new fresh set's collector must not take (`scripts/cited_threads.py`)."""
    cited = {thread_of(case.source) for case in load_corpus(corpus)}
    cited |= {thread_of(case.source) for case in load_corpus(fresh_folder, "f*.txt")}
    for path in sorted(field.glob("*/case.yaml")):
        words = path.read_text(encoding="utf-8").split()
        cited |= {thread_of(word) for word in words if word.startswith("https://")}
    return cited


def leave_one_source_out(cases: Iterable[Case]) -> list[Outcome]:
    cases = list(cases)
    by_source: dict[str, set[str]] = {}
    for case in cases:
        by_source.setdefault(case.source, set()).add(case.ident)
    entries = knowledge.load_knowledge()
    outcomes = []
    for case in cases:
        same = by_source[case.source]
        kept = tuple(e for e in entries if not e.evidence or not set(e.evidence) <= same)
        outcomes.append(judge_case(case, kept))
    return outcomes


CUTOFF = "2025-10-01"


def field_dates(folder: Path) -> dict[str, str]:
    """Field case id -> the date of its thread (case.yaml `date:`), for the time split."""
    dates = {}
    for case in sorted(folder.glob("*/case.yaml")):
        for line in case.read_text(encoding="utf-8").splitlines():
            if line.startswith("date:"):
                dates[case.parent.name[:3]] = line.partition(":")[2].strip().strip("'\"")
    return dates


def later(case: Case, cutoff: str) -> bool:
    """The case's thread was opened after the cut-off (undated threads count as earlier)."""
    return bool(case.opened) and case.opened >= cutoff


def time_split(cases: Iterable[Case], dates: dict[str, str], cutoff: str = CUTOFF) -> list[Outcome]:
    """The cases opened on or after `cutoff`, judged as unseen: every entry citing a corpus
    or field case of a thread opened on or after it is left out of the knowledge."""
    cases = list(cases)
    when = dict(dates) | {c.ident: c.opened for c in cases if c.opened}
    kept = written_before(knowledge.load_knowledge(), when, cutoff)
    return [judge_case(case, kept) for case in cases if later(case, cutoff)]


def written_before(
    entries: Iterable[knowledge.Entry], when: dict[str, str], cutoff: str
) -> tuple[knowledge.Entry, ...]:
    """The entries none of whose evidence (case ids, dated by `when`) is from `cutoff` on."""
    return tuple(
        e for e in entries if not any(when.get(ident, "") >= cutoff for ident in e.evidence)
    )


# what doctor says when it names no answer: no evidence either way, or a failure no family
# explains
ABSTAINED = frozenset({log_verdict.UNKNOWN, log_verdict.UNKNOWN_FAILURE})


@dataclass(frozen=True, slots=True)
class Score:
    right: int
    total: int
    false_healthy: int
    answered: int  # logs called healthy or given a family (not unknown)
    right_answered: int  # ... and right

    @property
    def accuracy(self) -> float:
        return self.right / self.total if self.total else 0.0

    def describe(self) -> str:
        answers = (
            f", right in {self.right_answered}/{self.answered} answers "
            f"({self.right_answered / self.answered:.0%})"
            if self.answered
            else ""
        )
        return (
            f"{self.right}/{self.total} right ({self.accuracy:.0%}){answers}, "
            f"failing logs called healthy: {self.false_healthy}"
        )


def score(outcomes: Iterable[Outcome]) -> Score:
    outcomes = list(outcomes)
    answers = [o for o in outcomes if o.found not in ABSTAINED]
    return Score(
        sum(o.right for o in outcomes),
        len(outcomes),
        sum(o.false_healthy for o in outcomes),
        len(answers),
        sum(o.right for o in answers),
    )


def blind_commits(text: str, where: str = "blind.txt") -> dict[int, str]:
    """The commit each fresh set was measured with, once, before it was read: lines
    `<set> <commit>` (sets `75-80` for a range), `#` comments. The record the README's
    blind figures can be recomputed from (bench/bench_blind.py)."""
    commits: dict[int, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        first, _, last = parts[0].partition("-")
        if (
            len(parts) != 2
            or not first.isdigit()
            or not (last or first).isdigit()
            or not (7 <= len(parts[1]) <= 40)
            or any(c not in "0123456789abcdef" for c in parts[1])
        ):
            raise ValueError(f"{where}:{number}: expected '<set>[-<set>] <commit>', got {raw!r}")
        for mark in range(int(first), int(last or first) + 1):
            if mark in commits:
                raise ValueError(f"{where}:{number}: set {mark} is recorded twice")
            commits[mark] = parts[1]
    return commits


# How a log's text stands to its label, as a reader of the log alone (a helper session that
# saw neither doctor's knowledge nor the thread) judged it: A the text carries the label, B
# it does not (no evidence of success in a healthy log, nothing that names the failure in a
# failing one), C the label looks doubtful beside the text
READINGS = frozenset("ABC")


def text_readings(text: str, where: str = "text_carries.tsv") -> dict[str, tuple[str, str]]:
    """ident -> (expected, reading) of a table of tab-separated `ident expected reading
    reason` rows under a header line (tests/fixtures/fresh/text_carries.tsv)."""
    readings: dict[str, tuple[str, str]] = {}
    for number, raw in enumerate(text.splitlines()[1:], start=2):
        if not raw.strip():
            continue
        parts = raw.split("\t")
        if len(parts) != 4 or parts[2] not in READINGS or not parts[3].strip():
            raise ValueError(
                f"{where}:{number}: expected 'ident<TAB>expected<TAB>A|B|C<TAB>reason', got {raw!r}"
            )
        if parts[0] in readings:
            raise ValueError(f"{where}:{number}: {parts[0]} is read twice")
        readings[parts[0]] = (parts[1], parts[2])
    return readings


def carries(readings: dict[str, tuple[str, str]], ident: str) -> bool:
    """Whether the log's text carries its label, as far as the readings say (a log they do
    not list counts as carrying it)."""
    return readings.get(ident, ("", "A"))[1] == "A"


def ceiling(outcomes: Iterable[Outcome], readings: dict[str, tuple[str, str]]) -> tuple[int, int]:
    """(at most right, of how many): the logs whose text carries their label (`carries`)."""
    outcomes = list(outcomes)
    return sum(carries(readings, o.case.ident) for o in outcomes), len(outcomes)


def confusion_table(outcomes: Iterable[Outcome]) -> str:
    """Per expected family: how many, how many right, and what the misses were called."""
    outcomes = list(outcomes)
    rows = []
    for expect in sorted({o.case.expect for o in outcomes}):
        mine = [o for o in outcomes if o.case.expect == expect]
        right = sum(o.right for o in mine)
        misses = Counter(o.found for o in mine if not o.right)
        called = ", ".join(f"{name} {count}" for name, count in misses.most_common())
        rows.append(f"  {expect:15} {right:3}/{len(mine):<3} {called}")
    return "\n".join([f"  {'expected':15} right     misses called", *rows])
