"""The matrix as an HTML grid: a row per cell, a column per stage (sources, build, audit,
install, validate) and the verdict, each square coloured by what happened, each cell linked to
its target's report. Pure: matrix.json's cell entries in, HTML out (`grid` for a table inside
a page, `page` for artifacts/MATRIX.html).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

COLUMNS = ("sources", "build", "audit", "install", "validate")
SOURCE_STAGES = ("fetch", "patch", "download")

STYLE = """
table.matrix { border-collapse: collapse; font: 14px system-ui, sans-serif; }
table.matrix th, table.matrix td { border: 1px solid #bbb; padding: .35rem .6rem; }
table.matrix thead th { background: #eee; }
table.matrix td.pass { background: #d9f2d9; }
table.matrix td.fail { background: #f8c9c9; }
table.matrix td.not-reached, table.matrix td.none { background: #f4f4f4; color: #777; }
table.matrix td.as-expected { background: #d9f2d9; }
table.matrix td.expected-fail { background: #fff1c2; }
table.matrix td.news { background: #e05d5d; color: #fff; font-weight: bold; }
table.matrix td.not-attempted { background: #c9d3e0; }
table.matrix td.not-judged { background: #f4f4f4; color: #555; }
"""


def _failed_stage(built: str) -> str | None:
    return built.removeprefix("failed at ").strip() if built.startswith("failed at") else None


def stage_states(cell: Mapping[str, Any]) -> dict[str, str]:
    """Each column's state for one cell: pass, fail, not-reached or none (did not apply)."""
    failed = _failed_stage(str(cell.get("built", "")))
    states = {}
    if failed is None:
        states["sources"] = states["build"] = "pass"
    elif failed in SOURCE_STAGES:
        states["sources"], states["build"] = "fail", "not-reached"
    else:
        states["sources"], states["build"] = "pass", "fail" if failed != "audit" else "pass"
    audited = str(cell.get("audited", ""))
    states["audit"] = {"pass": "pass", "fail": "fail", "not reached": "not-reached"}.get(
        audited, "fail" if failed == "audit" else "none"
    )
    states["install"] = "pass" if cell.get("installed") == "yes" else "none"
    validated = str(cell.get("validated", ""))
    states["validate"] = {"pass": "pass", "fail": "fail"}.get(validated, "none")
    return states


def verdict_state(cell: Mapping[str, Any]) -> str:
    """The verdict square's colour: news, not-attempted, not-judged, expected-fail, as-expected."""
    verdict = str(cell.get("verdict", ""))
    if cell.get("news"):
        return "news"
    if verdict.startswith("not attempted"):
        return "not-attempted"
    if verdict in ("not judged here", "unverified"):
        return "not-judged"
    if cell.get("expect", "supported") != "supported" or "fails" in str(cell.get("why", "")):
        return "expected-fail"
    return "as-expected"


def grid(cells: Sequence[Mapping[str, Any]], link: str = "{recipe}/BUILD_REPORT.html") -> str:
    """The table; `link` is where each cell's report is, relative to the page."""
    head = "".join(f"<th>{c}</th>" for c in COLUMNS)
    rows = []
    for cell in cells:
        name, recipe = escape(str(cell["cell"])), escape(str(cell["recipe"]))
        href = escape(link.format(recipe=cell["recipe"]))
        states = stage_states(cell)
        squares = "".join(
            f'<td class="{states[c]}" data-stage="{c}" title="{c}: {states[c]}">{states[c]}</td>'
            for c in COLUMNS
        )
        verdict = escape(str(cell.get("verdict", "")))
        why = escape(str(cell.get("why", "")))
        text = f"{'NEWS: ' if cell.get('news') else ''}{verdict}"
        rows.append(
            f'<tr data-cell="{name}"><th scope="row"><a href="{href}">{name}</a>'
            f"<br><small>{recipe}</small></th>{squares}"
            f'<td class="verdict {verdict_state(cell)}" data-stage="verdict">{text}: {why}</td>'
            "</tr>"
        )
    return (
        f'<table class="matrix"><thead><tr><th>cell</th>{head}<th>verdict</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def page(cells: Sequence[Mapping[str, Any]], host: str, time: str) -> str:
    """artifacts/MATRIX.html: the whole matrix of one `doit matrix` run."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>xdnaforge matrix</title><style>{STYLE}</style></head><body>"
        f"<h1>Matrix</h1><p>`doit matrix` on {escape(host)} ({escape(time)}); each cell links "
        f"to its target's report.</p>{grid(cells)}</body></html>\n"
    )
