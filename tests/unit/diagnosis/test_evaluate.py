"""Doctor on real public logs it was not written from (tests/fixtures/corpus), judged
leave-one-source-out: the figures and the per-family confusion table are printed in every
run of the suite; bench/bench_doctor.py prints them too."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conftest import FIGURES, REPO
from xdnaforge.diagnosis.evaluate import (
    HEALTHY,
    TARGET,
    confusion_table,
    leave_one_source_out,
    load_corpus,
    parse_case,
    score,
)
from xdnaforge.diagnosis.knowledge import load_families

CORPUS = REPO / "tests/fixtures/corpus"
FIELD = REPO / "tests/fixtures/field"


def test_every_case_names_its_thread_and_a_known_answer() -> None:
    cases = load_corpus(CORPUS)
    families = {f.id for f in load_families()} | {HEALTHY}
    assert len({c.ident for c in cases}) == len(cases)
    for case in cases:
        assert case.source.startswith(("https://", "http://")), case.ident
        assert case.thread, case.ident
        assert case.text.strip(), case.ident
        assert case.expect in families, (case.ident, case.expect)


def test_the_split_is_by_thread_never_inside_one() -> None:
    cases = load_corpus(CORPUS)
    by_source: dict[str, set[str]] = {}
    for case in cases:
        by_source.setdefault(case.source, set()).add(case.split)
    assert all(len(splits) == 1 for splits in by_source.values())
    splits = [c.split for c in cases]
    assert {"tune", "held-out"} == set(splits)


def test_a_case_without_its_header_is_refused() -> None:
    with pytest.raises(ValueError, match="no '---' line"):
        parse_case("source: https://x\nthread: t\nexpect: build\n", "c999")
    with pytest.raises(ValueError, match="lacks expect"):
        parse_case("source: https://x\nthread: t\n---\nlog\n", "c999")


def test_leave_one_source_out_on_real_logs(record_property: Callable[[str, object], None]) -> None:
    cases = load_corpus(CORPUS)
    outcomes = leave_one_source_out(cases)
    total = score(outcomes)
    lines = [f"corpus leave-one-source-out ({len(cases)} real logs): {total.describe()}"]
    for split in ("tune", "held-out"):
        part = score(o for o in outcomes if o.case.split == split)
        lines.append(f"  {split:9} {part.describe()}")
    lines.append(confusion_table(outcomes))
    for outcome in outcomes:
        if not outcome.right:
            lines.append(
                f"  miss {outcome.case.ident}: expected {outcome.case.expect}, got {outcome.found}"
            )
    # the figures are the point: the suite's summary shows them in every run (tests/conftest.py)
    record_property(FIGURES, "\n".join(lines))
    assert total.false_healthy == 0
    assert total.accuracy >= TARGET
