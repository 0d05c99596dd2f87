"""The benchmark chart: a point per run, baseline and threshold where the recipe sets them."""

from __future__ import annotations

from xml.etree import ElementTree

from xdnaforge.report.svgchart import Limits, history_svg, limits_of

HISTORY = [
    {"time": "2026-11-01T00:00:00+00:00", "metrics": {"gemm_tops": 50.0, "latency_us": 40.0}},
    {"time": "2026-11-02T00:00:00+00:00", "metrics": {"gemm_tops": 52.0}},
]
SVG = "{http://www.w3.org/2000/svg}"


def test_a_point_per_run_that_has_the_figure_and_lines_for_the_limits() -> None:
    limits = {"gemm_tops": Limits(baseline=51.0, threshold=45.0)}
    tree = ElementTree.fromstring(history_svg(HISTORY, limits, "t"))
    runs = [c for c in tree.iter(f"{SVG}circle") if c.get("data-figure") == "gemm_tops"]
    assert len(runs) == 2
    assert float(runs[1].get("cy", 0)) < float(runs[0].get("cy", 0))  # 52 above 50
    latency = [c for c in tree.iter(f"{SVG}circle") if c.get("data-figure") == "latency_us"]
    assert len(latency) == 1
    lines = {(line.get("class"), line.get("data-figure")) for line in tree.iter(f"{SVG}line")}
    assert lines == {("baseline", "gemm_tops"), ("threshold", "gemm_tops")}


def test_a_figure_without_runs_says_so() -> None:
    text = history_svg([], {}, "t")
    assert text.count("no runs yet") == 3


def test_the_same_history_gives_the_same_bytes() -> None:
    assert history_svg(HISTORY, {}, "t") == history_svg(HISTORY, {}, "t")


def test_text_from_records_is_escaped() -> None:
    text = history_svg([{"time": "<b>", "metrics": {"gemm_tops": 1.0}}], {}, "a & b")
    ElementTree.fromstring(text)  # well-formed
    assert "<title>&lt;b&gt;: 1 TOPS</title>" in text
    assert "<title>a &amp; b</title>" in text


def test_limits_are_read_from_bench_s_latest_metrics() -> None:
    latest = [{"name": "gemm_tops", "value": 51.0, "baseline": 51.0, "threshold": 45.0}]
    assert limits_of(latest) == {"gemm_tops": Limits(baseline=51.0, threshold=45.0)}
