"""`doit matrix`: build every cell's recipe that changed, revalidate what applies to this
host, keep going after a failure, and end with a table that says which outcomes are news."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import StepFailed
from .host import read_host_facts
from .matrix import Cell
from .paths import Workspace
from .plan import matching_cells
from .project import Project
from .records import read_record


@dataclass(frozen=True, slots=True)
class Row:
    cell: str
    recipe: str
    expect: str
    built: str
    audited: str
    installed: str
    validated: str
    outcome: str  # passed, failed, built
    verdict: str  # what it means against the expectation
    news: bool


def judge(cell: Cell, outcome: str) -> tuple[str, bool]:
    if cell.expect == "supported":
        return (
            ("as expected", False)
            if outcome != "failed"
            else ("NEWS: a supported cell failed", True)
        )
    if cell.expect == "known-broken":
        return (
            ("fails as expected", False)
            if outcome == "failed"
            else (
                "NEWS: expected broken, but it passed"
                if outcome == "passed"
                else "built; breakage not checked on this host",
                outcome == "passed",
            )
        )
    return (f"unverified: {outcome}", False)


def row_for(
    cell: Cell,
    space: Workspace,
    built_ok: bool,
    applies: bool,
    validate: Callable[[str], bool],
    root: str,
) -> Row:
    packages = read_record(space.record("packages"))
    audit = read_record(space.record("audit")) or {}
    install = read_record(space.record("install")) or {}
    built = "yes" if built_ok and packages else ("failed" if not built_ok else "no")
    audited = str(audit.get("verdict", "no"))
    installed_here = install.get("state") == "installed" and install.get("root") == root
    installed = "yes" if installed_here else "no"
    if not applies:
        validated = "n/a (this host is not in the cell)"
    elif not installed_here:
        validated = f"n/a (not installed: doit install --target {cell.recipe} --yes)"
    else:
        validated = "pass" if validate(cell.recipe) else "fail"
    failed = built != "yes" or audited != "pass" or validated == "fail"
    outcome = "failed" if failed else ("passed" if validated == "pass" else "built")
    verdict, news = judge(cell, outcome)
    return Row(
        cell=cell.name,
        recipe=cell.recipe,
        expect=cell.expect,
        built=built,
        audited=audited,
        installed=installed,
        validated=validated,
        outcome=outcome,
        verdict=verdict,
        news=news,
    )


def format_table(rows: Sequence[Row]) -> str:
    header = ("cell", "recipe", "expect", "built", "audited", "installed", "validated", "verdict")
    table = [header] + [
        (r.cell, r.recipe, r.expect, r.built, r.audited, r.installed, r.validated, r.verdict)
        for r in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [
        "  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def run_matrix(
    project: Project,
    cells: Sequence[Cell],
    build: Callable[[str], bool],
    validate: Callable[[str], bool],
    workspace: Callable[[str], Workspace],
) -> list[Row]:
    host = read_host_facts(project.site.sysroot)
    built: dict[str, bool] = {}
    for cell in cells:
        if cell.recipe not in built:
            print(f"== {cell.recipe} (cell {cell.name})", flush=True)
            built[cell.recipe] = build(cell.recipe)
    applying = {c.name for c in matching_cells(cells, host)}
    root = str(Path(project.site.sysroot).resolve())
    rows = [
        row_for(
            cell, workspace(cell.recipe), built[cell.recipe], cell.name in applying, validate, root
        )
        for cell in cells
    ]
    print(format_table(rows))
    news = [r for r in rows if r.news]
    for row in news:
        print(f"!!! {row.cell}: {row.verdict}")
    if news:
        raise StepFailed(
            f"{len(news)} cell(s) did not behave as the matrix expects: "
            f"{', '.join(r.cell for r in news)}",
            hint="update the matrix (expect, reason, evidence) or fix the cell",
        )
    return rows
