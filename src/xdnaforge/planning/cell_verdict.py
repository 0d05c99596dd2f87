"""Judging what a matrix cell did against what its expectation says; pure.

Four verdicts and two notes: as expected; fails differently (another stage, gate or
diagnosis code than expected: news); passes unexpectedly (news); not judged here (this host
is not in the cell, or the stage that would judge it did not run); "unverified"; and not
attempted (sources): the cell's sources could not be fetched (a stale mirror, no network),
so nothing about the cell is known and it is never news. Nothing here
reads a record or runs a stage: stages/matrix.py gathers what happened into an `Outcome`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdnaforge.config.matrix import Cell, PartialSupport

AS_EXPECTED = "as expected"
FAILS_DIFFERENTLY = "fails differently"
PASSES_UNEXPECTEDLY = "passes unexpectedly"
NOT_JUDGED = "not judged here"
UNVERIFIED = "unverified"
NOT_ATTEMPTED = "not attempted (sources)"


@dataclass(frozen=True, slots=True, kw_only=True)
class GateSeen:
    name: str
    status: str  # pass, fail, skip
    codes: tuple[str, ...]  # diagnosis codes of a failure (info notes left out)


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What happened to a cell on this host, from the records of this run."""

    failed_stage: str | None  # the first stage of the build pipeline that failed
    stage_codes: tuple[str, ...]  # diagnosis codes of that failure (a build step's log)
    gates: tuple[GateSeen, ...] | None  # validate's gates in order; None: it did not run
    not_validated: str  # why validate did not run (when gates is None)
    sources: str = ""  # why the sources could not be fetched; "" when they were


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    kind: str  # one of the constants above
    why: str
    news: bool

    @property
    def text(self) -> str:
        return f"{'NEWS: ' if self.news else ''}{self.kind}: {self.why}"


def _codes(codes: Sequence[str]) -> str:
    return ", ".join(codes) if codes else "no known diagnosis"


def _missing(expected: Sequence[str], seen: Sequence[str]) -> list[str]:
    return [code for code in expected if code not in seen]


def _first_failure(gates: Sequence[GateSeen]) -> GateSeen | None:
    return next((g for g in gates if g.status == "fail"), None)


def _differs(why: str) -> Verdict:
    return Verdict(kind=FAILS_DIFFERENTLY, why=why, news=True)


def judge(cell: Cell, outcome: Outcome) -> Verdict:
    if cell.expect == "unverified":
        return Verdict(kind=UNVERIFIED, why=describe(outcome), news=False)
    expected = cell.expectation()
    expects_it = cell.breaks is not None and cell.breaks.stage == outcome.failed_stage
    if outcome.sources and not expects_it:
        # the cell was never tried: saying it "fails differently" would blame the recipe
        return Verdict(
            kind=NOT_ATTEMPTED, why=f"{outcome.sources}; expected {expected}", news=False
        )
    if outcome.failed_stage is not None:
        return _judge_stage_failure(cell, outcome, expected)
    breaks = cell.breaks
    if breaks is not None and breaks.stage != "validate":
        return Verdict(
            kind=PASSES_UNEXPECTEDLY,
            why=f"{breaks.stage} passed; expected: {breaks.describe()}",
            news=True,
        )
    if outcome.gates is None:
        return Verdict(
            kind=NOT_JUDGED, why=f"built and audited; {outcome.not_validated}", news=False
        )
    gates = {g.name: g for g in outcome.gates}
    if breaks is not None:
        return _judge_broken_gate(outcome.gates, gates, breaks.gate or "", breaks.codes, expected)
    if cell.partial is not None:
        return _judge_partial(cell.partial, outcome.gates, gates)
    failure = _first_failure(outcome.gates)
    if failure is not None:
        return _differs(
            f"gate {failure.name} fails with {_codes(failure.codes)}; expected every gate to pass"
        )
    return Verdict(kind=AS_EXPECTED, why="every gate passed", news=False)


def _judge_stage_failure(cell: Cell, outcome: Outcome, expected: str) -> Verdict:
    stage = outcome.failed_stage
    seen = f"fails at {stage} ({_codes(outcome.stage_codes)})"
    breaks = cell.breaks
    if breaks is None or breaks.stage != stage:
        return _differs(f"{seen}; expected {expected}")
    missing = _missing(breaks.codes, outcome.stage_codes)
    if missing:
        return _differs(f"{seen}; expected {', '.join(missing)} there too")
    return Verdict(kind=AS_EXPECTED, why=seen, news=False)


def _judge_broken_gate(
    ordered: Sequence[GateSeen],
    gates: dict[str, GateSeen],
    gate: str,
    codes: Sequence[str],
    expected: str,
) -> Verdict:
    seen = gates.get(gate)
    if seen is None or seen.status == "skip":
        failure = _first_failure(ordered)
        if failure is None:
            return Verdict(
                kind=NOT_JUDGED, why=f"gate {gate} did not run; expected {expected}", news=False
            )
        return _differs(
            f"gate {failure.name} fails with {_codes(failure.codes)}, so {gate} did not run; "
            f"expected {expected}"
        )
    if seen.status == "pass":
        return Verdict(
            kind=PASSES_UNEXPECTEDLY, why=f"gate {gate} passed; expected {expected}", news=True
        )
    missing = _missing(codes, seen.codes)
    if missing:
        return _differs(
            f"gate {gate} fails with {_codes(seen.codes)}; expected {', '.join(missing)}"
        )
    return Verdict(kind=AS_EXPECTED, why=f"gate {gate} fails with {_codes(seen.codes)}", news=False)


def _judge_partial(
    partial: PartialSupport, ordered: Sequence[GateSeen], gates: dict[str, GateSeen]
) -> Verdict:
    differences = []
    surprises = []
    for name in partial.passing:
        seen = gates.get(name)
        if seen is None or seen.status != "pass":
            failure = (
                seen if seen is not None and seen.status == "fail" else _first_failure(ordered)
            )
            differences.append(
                f"gate {name} did not pass"
                + (f" ({failure.name} fails with {_codes(failure.codes)})" if failure else "")
            )
    for expected in partial.failing:
        seen = gates.get(expected.gate)
        if seen is None or seen.status == "skip":
            differences.append(f"gate {expected.gate} did not run")
        elif seen.status == "pass":
            surprises.append(f"gate {expected.gate} passed")
        elif missing := _missing(expected.codes, seen.codes):
            differences.append(
                f"gate {expected.gate} fails with {_codes(seen.codes)}, not {', '.join(missing)}"
            )
    if differences:
        return _differs(f"{'; '.join(differences + surprises)}; expected {partial.describe()}")
    if surprises:
        return Verdict(
            kind=PASSES_UNEXPECTEDLY,
            why=f"{'; '.join(surprises)}; expected {partial.describe()}",
            news=True,
        )
    return Verdict(kind=AS_EXPECTED, why=partial.describe(), news=False)


def describe(outcome: Outcome) -> str:
    """What happened, in words, without judging it."""
    if outcome.failed_stage is not None:
        return f"fails at {outcome.failed_stage} ({_codes(outcome.stage_codes)})"
    if outcome.gates is None:
        return f"built and audited; {outcome.not_validated}"
    failure = _first_failure(outcome.gates)
    if failure is not None:
        return f"gate {failure.name} fails with {_codes(failure.codes)}"
    return "every gate passed"
