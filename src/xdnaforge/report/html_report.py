"""BUILD_REPORT.html: the pictures of a target's report, beside BUILD_REPORT.md: the verdicts,
the benchmark history as SVG (report/svgchart.py) and the target's matrix cells as a grid
(report/matrix_grid.py), each cell linked to its report. Pure: the report model in, HTML out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from xdnaforge.report import matrix_grid
from xdnaforge.report.svgchart import history_svg, limits_of

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1b1b1b; max-width: 60rem; }
dl { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; }
dt { font-weight: bold; }
.muted { color: #555; font-size: .9em; }
"""


def chart(model: Mapping[str, Any], history: Sequence[Mapping[str, Any]]) -> str:
    """The benchmark history of the target as SVG, or "" when it has none."""
    if not history:
        return ""
    return history_svg(history, limits_of(model.get("metrics") or []), f"{model['target']}")


def render_html(model: Mapping[str, Any], history: Sequence[Mapping[str, Any]]) -> str:
    target = escape(str(model["target"]))
    summary = [
        ("audit", model.get("audit_verdict", "not run")),
        ("installed", model.get("installed", "")),
        ("validation", model.get("validation_verdict", "not run")),
        ("reproducible", model.get("reproducible", "")),
    ]
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in summary if v)
    drawn = chart(model, history)
    bench = (
        f'<figure class="history">{drawn}<figcaption class="muted">each point a validation '
        "run; dashed: the recipe's baseline; red: its threshold</figcaption></figure>"
        if drawn
        else "<p>No benchmark runs recorded yet (<code>doit validate</code>).</p>"
    )
    matrix = model.get("matrix")
    cells = (
        matrix_grid.grid(matrix.get("cells", []), link="../{recipe}/BUILD_REPORT.html")
        if matrix
        else "<p>Not judged against the matrix yet (<code>doit matrix</code>).</p>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>xdnaforge report: {target}</title>"
        f"<style>{STYLE}{matrix_grid.STYLE}</style></head><body>"
        f'<h1>{target}</h1><p class="muted">generated {escape(str(model.get("generated")))} '
        f"by xdnaforge {escape(str(model.get('xdnaforge')))}; the full report is "
        '<a href="BUILD_REPORT.md">BUILD_REPORT.md</a></p>'
        f"<dl>{rows}</dl><h2>Benchmarks</h2>{bench}<h2>Matrix</h2>{cells}</body></html>\n"
    )
