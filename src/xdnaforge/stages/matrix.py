"""`doit matrix`: build every cell's recipe that changed, revalidate what applies to this host,
keep going after a failure, judge each cell against its expectation (planning/cell_verdict.py),
record the verdicts per target (matrix.json, shown in the report) and end with a table that says
which outcomes are news.
"""

from __future__ import annotations

import dataclasses
import datetime
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdnaforge.compat.facts import HostCompat, load_upstream
from xdnaforge.compat.placement import host_cells
from xdnaforge.compat.render import firmware_line, word
from xdnaforge.compat.resolver import Verdict as CompatVerdict
from xdnaforge.compat.resolver import resolve
from xdnaforge.config.matrix import Cell
from xdnaforge.config.project import Project, stage_names
from xdnaforge.diagnosis.classify import diagnose
from xdnaforge.errors import StageFailed
from xdnaforge.host import HostFacts
from xdnaforge.planning.cell_verdict import NOT_ATTEMPTED, GateSeen, Outcome, Verdict, judge
from xdnaforge.process.progress import clock
from xdnaforge.report import matrix_grid
from xdnaforge.stages.report import write_report
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_atomic, write_record

# a build: the recipe's name -> the stage that failed, None when every stage passed
Build = Callable[[str], str | None]
# a validation: the recipe's name -> the validation.json this run wrote, None if it wrote none
Validate = Callable[[str], Mapping[str, Any] | None]


@dataclass(frozen=True, slots=True)
class Row:
    cell: str
    recipe: str
    expect: str
    expected: str  # the expectation in words
    built: str
    audited: str
    installed: str
    validated: str
    verdict: Verdict
    # the compat resolver's word for a cell this host is in: does the recipe's driver
    # contract hold here ("yes", "NO", "unknown", "" when not judged), why, and, when the
    # DRM driver version put the host in or out against its kernel release, how
    compat: str = ""
    compat_why: tuple[str, ...] = ()
    placement: str = ""

    def as_record(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "recipe": self.recipe,
            "expect": self.expect,
            "expected": self.expected,
            "built": self.built,
            "audited": self.audited,
            "installed": self.installed,
            "validated": self.validated,
            "verdict": self.verdict.kind,
            "why": self.verdict.why,
            "news": self.verdict.news,
            "compat": {"fits": self.compat, "why": list(self.compat_why)},
            "placement": self.placement,
        }


def gates_seen(validation: Mapping[str, Any]) -> tuple[GateSeen, ...]:
    """The gates of a validation.json, with the codes of their non-info diagnoses."""
    return tuple(
        GateSeen(
            name=str(gate["name"]),
            status=str(gate["status"]),
            codes=tuple(
                str(d["code"]) for d in gate.get("diagnoses", []) if d.get("severity") != "info"
            ),
        )
        for gate in validation.get("gates", [])
    )


def _stage_codes(space: Workspace, stage: str) -> tuple[str, ...]:
    """What the knowledge base recognises in the log of a failed build step."""
    log = space.logs / f"{stage}.log"
    if not stage.startswith("build-") or not log.is_file():
        return ()
    text = log.read_text(encoding="utf-8", errors="replace")
    return tuple(d.code for d in diagnose(text) if d.severity != "info")


def _sources_failure(space: Workspace) -> str:
    """Why the fetch failed, in its first line (failure.json): the sources could not be had."""
    failure = read_record(space.record("failure")) or {}
    message = str(failure.get("message") or "the fetch failed").splitlines()[0]
    return f"fetch failed: {message}"


def row_for(
    cell: Cell,
    space: Workspace,
    failed_stage: str | None,
    stages: Sequence[str],
    applies: bool,
    validate: Validate,
    root: str,
) -> Row:
    audit = read_record(space.record("audit")) or {}
    install = read_record(space.record("install")) or {}
    reached_audit = failed_stage not in stages or stages.index(failed_stage) >= stages.index(
        "audit"
    )
    built = "yes" if failed_stage is None else f"failed at {failed_stage}"
    audited = str(audit.get("verdict", "no")) if reached_audit else "not reached"
    installed_here = install.get("state") == "installed" and install.get("root") == root
    installed = "yes" if installed_here else "no"
    gates = None
    not_validated = ""
    if failed_stage is not None:
        validated = "not run (the build failed)"
    elif not applies:
        validated = not_validated = "this host is not in the cell"
    elif not installed_here:
        validated = not_validated = (
            f"not installed here (doit install --target {cell.recipe} --yes)"
        )
    else:
        record = validate(cell.recipe)
        if record is None:
            validated = not_validated = "validate recorded no result (see its message above)"
        else:
            gates = gates_seen(record)
            validated = str(record.get("verdict", "fail"))
    outcome = Outcome(
        failed_stage=failed_stage,
        stage_codes=_stage_codes(space, failed_stage) if failed_stage else (),
        gates=gates,
        not_validated=not_validated,
        sources=_sources_failure(space) if failed_stage == "fetch" else "",
    )
    return Row(
        cell=cell.name,
        recipe=cell.recipe,
        expect=cell.expect,
        expected=cell.expectation(),
        built=built,
        audited=audited,
        installed=installed,
        validated=validated,
        verdict=judge(cell, outcome),
    )


def format_table(rows: Sequence[Row]) -> str:
    header = (
        "cell",
        "recipe",
        "expect",
        "built",
        "audited",
        "installed",
        "fits here",
        "validated",
        "verdict",
    )
    table = [header] + [
        (
            r.cell,
            r.recipe,
            r.expect,
            r.built,
            r.audited,
            r.installed,
            r.compat or "-",
            r.validated,
            r.verdict.text,
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [
        "  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _failures(validation: Mapping[str, Any] | None) -> str:
    gates = [g for g in (validation or {}).get("gates", []) if g.get("status") == "fail"]
    return "; ".join(f"{g['name']}: {g.get('summary', '')}" for g in gates) or "validate failed"


def _skipped(validation: Mapping[str, Any] | None) -> list[str]:
    """The recipe's gates that did not run: a skip is never a pass."""
    return [
        str(g["name"])
        for g in (validation or {}).get("gates", [])
        if g.get("status") == "skip" and not str(g.get("summary", "")).startswith("not in the")
    ]


def compare_stacks(
    rows: Sequence[Row],
    kinds: Mapping[str, str],
    applying: set[str],
    validations: Mapping[str, Mapping[str, Any] | None],
) -> list[str]:
    """For this host, when a distro cell and a source cell both apply: which of them passed,
    as evidence (validation on this host), never as advice."""
    here = [r for r in rows if r.cell in applying]
    distro = [r for r in here if kinds.get(r.recipe) == "distro"]
    source = [r for r in here if kinds.get(r.recipe) == "source"]
    if not distro or not source:
        return []

    def said(row: Row) -> str:
        skipped = _skipped(validations.get(row.recipe))
        if row.validated == "pass" and skipped:
            return f"{row.recipe} passes the gates that ran here ({', '.join(skipped)} skipped)"
        if row.validated == "pass":
            return f"{row.recipe} passes here"
        if row.validated == "fail":
            return f"{row.recipe} fails here ({_failures(validations.get(row.recipe))})"
        return f"{row.recipe} is not validated here ({row.validated})"

    built = "; ".join(said(r) for r in source)
    lines = []
    for row in distro:
        skipped = _skipped(validations.get(row.recipe))
        if row.validated == "pass" and skipped:
            lines.append(
                f"not decided: the archive's stack ({row.recipe}) passes the gates that ran "
                f"here, but {', '.join(skipped)} did not run (a skip is not a pass). Source "
                f"builds: {built}"
            )
        elif row.validated == "pass":
            lines.append(
                f"the archive's stack passes here ({row.recipe}); a source build is not "
                f"needed. Source builds: {built}"
            )
        elif row.validated == "fail":
            lines.append(
                f"the archive's stack fails here ({row.recipe}: "
                f"{_failures(validations.get(row.recipe))}). Source builds: {built}"
            )
        else:
            lines.append(
                f"not compared: the archive's stack {row.recipe} is not validated here "
                f"({row.validated}). Source builds: {built}"
            )
    return lines


def _record(
    rows: Sequence[Row],
    workspace: Callable[[str], Workspace],
    host: str,
    comparison: Sequence[str] = (),
) -> None:
    """Each target's verdicts in its matrix.json, then its report again (it shows them)."""
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    for recipe in sorted({r.recipe for r in rows}):
        space = workspace(recipe)
        write_record(
            space.record("matrix"),
            "matrix",
            {
                "target": recipe,
                "time": now,
                "host": host,
                "cells": [r.as_record() for r in rows if r.recipe == recipe],
                "comparison": list(comparison),
            },
        )
        write_report(recipe, space)
    # the whole run as an HTML grid beside the targets' reports (artifacts/MATRIX.html)
    if rows:
        artifacts = workspace(rows[0].recipe).artifacts_dir
        page = matrix_grid.page([r.as_record() for r in rows], host, now)
        write_atomic(artifacts / "MATRIX.html", page)


def _judged(row: Row, verdict: CompatVerdict | None, placement: str) -> Row:
    """The row with the compat resolver's word on its recipe (cells this host is in)."""
    finding = verdict.recipes.get(row.recipe) if verdict is not None else None
    if finding is None:
        return dataclasses.replace(row, placement=placement)
    return dataclasses.replace(
        row, compat=word(finding.ok), compat_why=finding.why, placement=placement
    )


def run_matrix(
    project: Project,
    host: HostFacts,
    cells: Sequence[Cell],
    build: Build,
    validate: Validate,
    workspace: Callable[[str], Workspace],
    compat: HostCompat | None = None,
) -> list[Row]:
    """`compat`: the running driver's and the firmware's facts, which place this host in a
    cell by its DRM driver version and say whether each recipe's driver contract holds."""
    failed: dict[str, str | None] = {}
    recipes = list(dict.fromkeys(c.recipe for c in cells))
    for cell in cells:
        if cell.recipe not in failed:
            # each recipe once, however many cells share it; which one of how many, how long
            started = time.monotonic()
            place = f"{recipes.index(cell.recipe) + 1}/{len(recipes)}"
            print(f"== [matrix {place}] {cell.recipe} (cell {cell.name})", flush=True)
            failed[cell.recipe] = build(cell.recipe)
            outcome = "built" if failed[cell.recipe] is None else f"failed at {failed[cell.recipe]}"
            spent = clock(time.monotonic() - started)
            print(f"== [matrix {place} {spent}] {cell.recipe}: {outcome}", flush=True)
    inside, moved = host_cells(cells, host, compat)
    applying = {c.name for c in inside}
    verdict = (
        resolve(
            compat,
            load_upstream(),
            [project.recipes[r] for r in sorted({c.recipe for c in inside})],
        )
        if compat is not None
        else None
    )
    root = str(Path(project.site.sysroot).resolve())
    validations: dict[str, Mapping[str, Any] | None] = {}

    def validate_once(recipe: str) -> Mapping[str, Any] | None:
        if recipe not in validations:
            validations[recipe] = validate(recipe)
        return validations[recipe]

    rows = [
        _judged(
            row_for(
                cell,
                workspace(cell.recipe),
                failed[cell.recipe],
                stage_names(project.recipes[cell.recipe]),
                cell.name in applying,
                validate_once,
                root,
            ),
            verdict if cell.name in applying else None,
            moved.get(cell.name, ""),
        )
        for cell in cells
    ]
    kinds = {name: recipe.kind for name, recipe in project.recipes.items()}
    comparison = compare_stacks(rows, kinds, applying, validations)
    _record(rows, workspace, host.describe(), comparison)
    print(format_table(rows))
    for row in rows:
        if row.placement:
            print(f"cell {row.cell}: {row.placement}")
        if row.compat == "NO":
            print(f"cell {row.cell}: {row.recipe} does not fit here: {'; '.join(row.compat_why)}")
    if verdict is not None and inside:
        print(firmware_line(verdict))
    for line in comparison:
        print(f"distro stack vs source build: {line}")
    news = [r for r in rows if r.verdict.news]
    for row in news:
        print(f"!!! {row.cell}: {row.verdict.text}")
    unfetched = [r for r in rows if r.verdict.kind == NOT_ATTEMPTED]
    problems = []
    if news:
        problems.append(
            f"{len(news)} cell(s) did not behave as the matrix expects: "
            f"{', '.join(r.cell for r in news)}"
        )
    if unfetched:
        problems.append(
            f"{len(unfetched)} cell(s) not attempted, their sources could not be fetched: "
            f"{', '.join(r.cell for r in unfetched)}"
        )
    if problems:
        hints = []
        if news:
            hints.append(
                "update the matrix (expect, fails, gates, reason, evidence) or fix the cell"
            )
        if unfetched:
            # a stale mirror is not the matrix's fault: the fix is where the sources come from
            hints.append(
                f"update the mirrors in site.yaml (`doit plan --target {unfetched[0].recipe}` "
                "lists every repository and whether its commit is there)"
            )
        raise StageFailed("; ".join(problems), hint="; ".join(hints))
    return rows
