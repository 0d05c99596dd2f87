"""The matrix grid: each stage's square from what the cell did, the verdict's colour."""

from __future__ import annotations

from xdnaforge.report.matrix_grid import grid, stage_states, verdict_state

BASE = {
    "cell": "c",
    "recipe": "r",
    "expect": "supported",
    "built": "yes",
    "audited": "pass",
    "installed": "yes",
    "validated": "pass",
    "verdict": "as expected",
    "why": "every gate passed",
    "news": False,
}


def test_every_stage_passes_when_the_cell_passed() -> None:
    assert set(stage_states(BASE).values()) == {"pass"}
    assert verdict_state(BASE) == "as-expected"


def test_a_failed_fetch_fails_the_sources_and_reaches_nothing_after() -> None:
    cell = {**BASE, "built": "failed at fetch", "audited": "not reached", "installed": "no"}
    cell.update(validated="not run (the build failed)", verdict="not attempted (sources)")
    states = stage_states(cell)
    assert states == {
        "sources": "fail",
        "build": "not-reached",
        "audit": "not-reached",
        "install": "none",
        "validate": "none",
    }
    assert verdict_state(cell) == "not-attempted"


def test_news_wins_over_everything_and_a_known_failure_is_yellow() -> None:
    assert verdict_state({**BASE, "news": True, "expect": "known-broken"}) == "news"
    assert verdict_state({**BASE, "expect": "known-broken"}) == "expected-fail"
    assert verdict_state({**BASE, "verdict": "not judged here"}) == "not-judged"


def test_each_cell_links_to_its_report_and_text_is_escaped() -> None:
    html = grid([{**BASE, "cell": "<x>", "why": "a & b"}], link="../{recipe}/BUILD_REPORT.html")
    assert 'href="../r/BUILD_REPORT.html"' in html
    assert "&lt;x&gt;" in html
    assert "a &amp; b" in html
