"""Benchmark history as SVG: one panel per figure (GEMM TOPS, latency, throughput), each run a
point, with the baseline (dashed) and the threshold (red) the figure is judged against. Pure:
history entries and the figures' limits in, SVG text out; the same input gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

FIGURES = (
    ("gemm_tops", "GEMM", "TOPS", "min"),
    ("latency_us", "latency", "µs", "max"),
    ("throughput_ops", "throughput", "op/s", "min"),
)
WIDTH, PANEL_HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 640, 150, 70, 20, 28, 30
POINT_COLOUR, BASELINE_COLOUR, THRESHOLD_COLOUR = "#1f5fbf", "#555555", "#c0392b"


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    baseline: float | None
    threshold: float | None


def limits_of(latest: Sequence[Mapping[str, Any]]) -> dict[str, Limits]:
    """The baseline and threshold of each figure, from bench.json's latest_metrics."""
    return {
        str(m["name"]): Limits(baseline=m.get("baseline"), threshold=m.get("threshold"))
        for m in latest
    }


def _number(value: float) -> str:
    return f"{value:.6g}"


def _panel(
    index: int,
    name: str,
    label: str,
    unit: str,
    bound: str,
    history: Sequence[Mapping[str, Any]],
    limits: Limits,
) -> list[str]:
    points = [
        (str(entry.get("time", "")), float(entry["metrics"][name]))
        for entry in history
        if isinstance(entry.get("metrics"), Mapping)
        and isinstance(entry["metrics"].get(name), int | float)
    ]
    top = index * PANEL_HEIGHT
    inner_w = WIDTH - LEFT - RIGHT
    inner_h = PANEL_HEIGHT - TOP - BOTTOM
    values = [v for _, v in points] + [
        v for v in (limits.baseline, limits.threshold) if v is not None
    ]
    parts = [
        f'<g class="figure" data-figure="{name}" transform="translate(0 {top})">',
        f'<text x="{LEFT}" y="18" class="title">{escape(label)} ({escape(unit)})</text>',
        f'<rect x="{LEFT}" y="{TOP}" width="{inner_w}" height="{inner_h}" class="frame"/>',
    ]
    if not points:
        parts.append(f'<text x="{LEFT + 8}" y="{TOP + 20}" class="empty">no runs yet</text>')
        return [*parts, "</g>"]
    low, high = min(values), max(values)
    if high == low:
        low, high = low - 1, high + 1
    pad = (high - low) * 0.1
    low, high = low - pad, high + pad

    def y(value: float) -> float:
        return round(TOP + inner_h - (value - low) / (high - low) * inner_h, 2)

    def x(i: int) -> float:
        step = inner_w / max(len(points) - 1, 1)
        return round(LEFT + (i * step if len(points) > 1 else inner_w / 2), 2)

    parts += [
        f'<text x="{LEFT - 6}" y="{y(high - pad) + 4}" class="axis">{_number(high - pad)}</text>',
        f'<text x="{LEFT - 6}" y="{y(low + pad) + 4}" class="axis">{_number(low + pad)}</text>',
    ]
    for kind, value, colour, dash in (
        ("baseline", limits.baseline, BASELINE_COLOUR, ' stroke-dasharray="6 4"'),
        ("threshold", limits.threshold, THRESHOLD_COLOUR, ""),
    ):
        if value is None:
            continue
        word = f"{kind} {_number(value)}" + (f" ({bound})" if kind == "threshold" else "")
        parts.append(
            f'<line class="{kind}" data-figure="{name}" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
            f'y1="{y(value)}" y2="{y(value)}" stroke="{colour}" stroke-width="2"{dash}>'
            f"<title>{word}</title></line>"
        )
        parts.append(
            f'<text x="{WIDTH - RIGHT - 4}" y="{y(value) - 4}" class="limit" fill="{colour}">'
            f"{escape(word)}</text>"
        )
    line = " ".join(f"{x(i)},{y(v)}" for i, (_, v) in enumerate(points))
    parts.append(
        f'<polyline class="history" points="{line}" fill="none" stroke="{POINT_COLOUR}" '
        'stroke-width="2"/>'
    )
    for i, (time, value) in enumerate(points):
        parts.append(
            f'<circle class="run" data-figure="{name}" cx="{x(i)}" cy="{y(value)}" r="4" '
            f'fill="{POINT_COLOUR}">'
            f"<title>{escape(time)}: {_number(value)} {escape(unit)}</title></circle>"
        )
    first, last = points[0][0][:10], points[-1][0][:10]
    parts.append(
        f'<text x="{LEFT}" y="{PANEL_HEIGHT - 10}" class="axis start">{escape(first)}</text>'
    )
    parts.append(
        f'<text x="{WIDTH - RIGHT}" y="{PANEL_HEIGHT - 10}" class="axis end">{escape(last)}</text>'
    )
    return [*parts, "</g>"]


def history_svg(
    history: Sequence[Mapping[str, Any]], limits: Mapping[str, Limits], title: str
) -> str:
    """The chart, an `<svg>` element standing alone (a file) or inside an HTML page."""
    height = PANEL_HEIGHT * len(FIGURES)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="bench-history" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}" role="img">',
        f"<title>{escape(title)}</title>",
        "<style>text{font:12px sans-serif;fill:#222}.title{font-weight:bold}"
        ".axis{fill:#555;text-anchor:end}.axis.start{text-anchor:start}"
        ".limit{text-anchor:end;font-size:11px}.frame{fill:#fafafa;stroke:#ccc}"
        ".empty{fill:#888}</style>",
    ]
    for index, (name, label, unit, bound) in enumerate(FIGURES):
        empty = Limits(baseline=None, threshold=None)
        parts += _panel(index, name, label, unit, bound, history, limits.get(name, empty))
    return "\n".join([*parts, "</svg>"]) + "\n"
