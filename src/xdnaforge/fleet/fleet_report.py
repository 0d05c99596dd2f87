"""The fleet report: many hosts' records merged into cells x hosts (verdict against the
matrix's expectation, kernel, firmware, figures against the cell's baseline, the newest
failure's diagnosis), rendered as Markdown, JSON and a static HTML page.

The model is pure (records in, plain data out); rendering is jinja2 with StrictUndefined and
no JavaScript. Reading the host directories is actions/fleet.py's job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jinja2

from xdnaforge.config.matrix import Cell
from xdnaforge.config.recipe import Recipe
from xdnaforge.hardware.bench import HIGHER_IS_BETTER
from xdnaforge.planning.cell_verdict import AS_EXPECTED, UNVERIFIED, Outcome, judge
from xdnaforge.report.svgchart import Limits, history_svg
from xdnaforge.stages.matrix import gates_seen


@dataclass(frozen=True, slots=True, kw_only=True)
class HostRecords:
    """What one host sent back for one target: its records as read from disk."""

    host: str
    target: str
    validation: Mapping[str, Any] | None
    history: Sequence[Mapping[str, Any]] = ()
    kernel: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Figure:
    name: str
    value: float
    unit: str
    baseline: float | None
    change_pct: float | None  # against the baseline, signed
    worse: bool  # beyond the noise in the bad direction, or the gate judged it so
    verdict: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    cell: str
    host: str
    target: str
    outcome: str  # passed, failed, none
    verdict: str  # against the matrix's expectation
    news: bool
    state: str  # css class: pass, expected-fail, news, unverified, none
    time: str
    kernel: str
    firmware: str
    figures: tuple[Figure, ...]
    failed_gates: tuple[str, ...]
    diagnosis: Mapping[str, str] | None
    kernel_note: str | None
    chart: str = ""  # the host's benchmark history of this cell as SVG ("" with no history)

    @property
    def label(self) -> str:
        return {"passed": "PASS", "failed": "FAIL"}.get(self.outcome, "NONE")


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetModel:
    hosts: tuple[str, ...]
    cells: tuple[Mapping[str, str], ...]  # name, recipe, expect, reason
    entries: tuple[Entry, ...]
    unplaced: tuple[str, ...] = field(default=())  # records no cell could take

    def entry(self, cell: str, host: str) -> Entry | None:
        return next((e for e in self.entries if e.cell == cell and e.host == host), None)


def _cell_for(records: HostRecords, cells: Sequence[Cell]) -> Cell | None:
    """The cell the host said it matched, if it uses this target; else the only one that does."""
    named = (records.validation or {}).get("host", {}).get("cell")
    if named == "none":
        return None  # gate 1 found that this host is in no cell: not a verdict on any cell
    ours = [c for c in cells if c.recipe == records.target]
    for cell in ours:
        if cell.name == named:
            return cell
    return ours[0] if len(ours) == 1 else None


def _figures(records: HostRecords, recipe: Recipe | None) -> tuple[Figure, ...]:
    validation = records.validation or {}
    judged = {m["name"]: m for g in validation.get("gates", []) for m in g.get("metrics", [])}
    if not judged and records.history:
        latest = records.history[-1].get("metrics", {})
        judged = {name: {"name": name, "value": value} for name, value in latest.items()}
    baseline = recipe.validation.baseline if recipe else None
    figures = []
    for name in sorted(judged):
        if name not in HIGHER_IS_BETTER:
            continue
        metric = judged[name]
        value = float(metric["value"])
        base = getattr(baseline, name, None) if baseline else None
        change = (value - base) / base * 100 if base else None
        verdict = str(metric.get("verdict", "ok"))
        figures.append(
            Figure(
                name=name,
                value=value,
                unit=str(metric.get("unit", "")),
                baseline=base,
                change_pct=round(change, 1) if change is not None else None,
                worse=verdict in ("regression", "below threshold", "above threshold"),
                verdict=verdict,
            )
        )
    return tuple(figures)


def _diagnosis(validation: Mapping[str, Any]) -> tuple[tuple[str, ...], Mapping[str, str] | None]:
    """The failed gates (and LAVA steps), and the first diagnosis the failure carries."""
    failed = [g for g in validation.get("gates", []) if g.get("status") == "fail"]
    names = tuple(
        dict.fromkeys(
            [g["name"] for g in failed] + list(validation.get("lava", {}).get("failed", ()))
        )
    )
    for gate in failed:
        for found in gate.get("diagnoses", []):
            return names, {
                "gate": gate["name"],
                "code": str(found.get("code", "")),
                "title": str(found.get("title", "")),
                "fix": str(found.get("fix", "")),
            }
    if failed:
        return names, {
            "gate": failed[0]["name"],
            "code": "unknown",
            "title": str(failed[0].get("summary", "")),
            "fix": "no known signature; see the gate's evidence in validation.json",
        }
    return names, None


def _judge(cell: Cell, validation: Mapping[str, Any]) -> tuple[str, bool, str]:
    """(verdict text, news, css state) of a host's validation against the cell's expectation,
    judged exactly as `doit matrix` judges this host's own run."""
    if validation.get("verdict") not in ("pass", "fail"):
        return "no validation", False, "none"
    outcome = Outcome(
        failed_stage=None, stage_codes=(), gates=gates_seen(validation), not_validated=""
    )
    verdict = judge(cell, outcome)
    if verdict.news:
        state = "news"
    elif verdict.kind == UNVERIFIED:
        state = "unverified"
    elif verdict.kind == AS_EXPECTED and validation.get("verdict") == "fail":
        state = "expected-fail"
    elif verdict.kind == AS_EXPECTED:
        state = "pass"
    else:
        state = "none"  # not judged here (the gate that would judge it did not run)
    return verdict.text, verdict.news, state


def entry_for(records: HostRecords, cell: Cell, recipe: Recipe | None) -> Entry:
    validation = records.validation or {}
    outcome = {"pass": "passed", "fail": "failed"}.get(str(validation.get("verdict")), "none")
    judged, news, state = _judge(cell, validation)
    failed, diagnosis = _diagnosis(validation)
    host = validation.get("host", {})
    kernel_note = None
    if records.kernel and records.kernel.get("kernel") != host.get("kernel"):
        kernel_note = (
            f"kernel {records.kernel.get('kernel')}: {records.kernel.get('decision')}, "
            f"{records.kernel.get('outcome')}"
        )
    return Entry(
        cell=cell.name,
        host=records.host,
        target=records.target,
        outcome=outcome,
        verdict=judged,
        news=news,
        state=state,
        time=str(validation.get("time", "")),
        kernel=str(host.get("kernel", "unknown")),
        firmware=str(host.get("firmware", "unknown")),
        figures=_figures(records, recipe),
        failed_gates=failed,
        diagnosis=diagnosis,
        kernel_note=kernel_note,
        chart=_chart(records, recipe, cell.name),
    )


def _limits(recipe: Recipe | None) -> dict[str, Limits]:
    """Each figure's baseline and threshold, as the recipe states them."""
    if recipe is None:
        return {}
    thresholds, baseline = recipe.validation.thresholds, recipe.validation.baseline
    bounds = {
        "gemm_tops": thresholds.gemm_tops_min,
        "latency_us": thresholds.latency_us_max,
        "throughput_ops": thresholds.throughput_ops_min,
    }
    return {
        name: Limits(baseline=getattr(baseline, name, None), threshold=bound)
        for name, bound in bounds.items()
    }


def _chart(records: HostRecords, recipe: Recipe | None, cell: str) -> str:
    if not records.history:
        return ""
    title = f"benchmark history of {cell} on {records.host}"
    return history_svg(records.history, _limits(recipe), title)


def build_model(
    records: Sequence[HostRecords], cells: Sequence[Cell], recipes: Mapping[str, Recipe]
) -> FleetModel:
    entries = []
    unplaced = []
    for item in records:
        cell = _cell_for(item, cells)
        if cell is None:
            host = (item.validation or {}).get("host", {})
            why = (
                f"the host ({host.get('distro')}, kernel {host.get('kernel')}) is in no cell"
                if host.get("cell") == "none"
                else "no matrix cell uses it"
            )
            unplaced.append(f"{item.host}: {item.target} ({why})")
            continue
        entries.append(entry_for(item, cell, recipes.get(item.target)))
    used = {e.cell for e in entries}
    return FleetModel(
        hosts=tuple(sorted({r.host for r in records})),
        cells=tuple(
            {"name": c.name, "recipe": c.recipe, "expect": c.expect, "reason": c.reason or ""}
            for c in cells
            if c.name in used
        ),
        entries=tuple(sorted(entries, key=lambda e: (e.cell, e.host))),
        unplaced=tuple(unplaced),
    )


def as_json(model: FleetModel) -> dict[str, Any]:
    def figure(f: Figure) -> dict[str, Any]:
        return {
            "name": f.name,
            "value": f.value,
            "unit": f.unit,
            "baseline": f.baseline,
            "change_pct": f.change_pct,
            "verdict": f.verdict,
        }

    return {
        "hosts": list(model.hosts),
        "cells": [dict(c) for c in model.cells],
        "entries": [
            {
                "cell": e.cell,
                "host": e.host,
                "target": e.target,
                "outcome": e.outcome,
                "verdict": e.verdict,
                "news": e.news,
                "time": e.time,
                "kernel": e.kernel,
                "firmware": e.firmware,
                "figures": [figure(f) for f in e.figures],
                "failed_gates": list(e.failed_gates),
                "diagnosis": dict(e.diagnosis) if e.diagnosis else None,
                "kernel_note": e.kernel_note,
            }
            for e in model.entries
        ],
        "unplaced": list(model.unplaced),
    }


def _environment(autoescape: bool) -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("xdnaforge.fleet", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=autoescape,  # the page escapes what hosts sent; Markdown stays literal
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters["signed"] = lambda v: "" if v is None else f"{v:+.1f}%"
    return environment


def render_markdown(model: FleetModel, generated: str) -> str:
    template = _environment(False).get_template("FLEET_REPORT.md.j2")
    return template.render(model=model, generated=generated)


def render_html(model: FleetModel, generated: str) -> str:
    template = _environment(True).get_template("fleet_report.html.j2")
    return template.render(model=model, generated=generated)
