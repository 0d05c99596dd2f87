"""The report stage: BUILD_REPORT.md and BUILD_REPORT.json from a target's records."""

from __future__ import annotations

import datetime
import json
from typing import Any

from xdnaforge import __version__
from xdnaforge.compat.here import verdict_here
from xdnaforge.config.project import Project
from xdnaforge.planning.plan import Plan
from xdnaforge.report import html_report
from xdnaforge.report.build_report import build_model, render_markdown
from xdnaforge.state.failure import retire_outdated
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import RECORDS, read_record, write_atomic, write_record


def write_report(target: str, space: Workspace) -> str:
    records = {name: read_record(space.record(name)) for name in RECORDS}
    twin = space.records / "BUILD_REPORT.json"
    previous: dict[str, Any] | None = None
    if twin.exists():
        try:
            previous = json.loads(twin.read_text())
        except ValueError:
            previous = None  # a damaged previous report only loses the change list
    generated = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    model = build_model(target, records, previous, generated, __version__)
    history = _history(space)
    model["history_chart"] = "bench-history.svg" if history else ""
    markdown = render_markdown(model)
    write_atomic(space.records / "BUILD_REPORT.md", markdown)
    write_atomic(twin, json.dumps(model, indent=2, sort_keys=True) + "\n")
    # the pictures: the benchmark history as SVG (linked from the Markdown) and the HTML page
    if history:
        write_atomic(space.records / "bench-history.svg", html_report.chart(model, history))
    write_atomic(space.records / "BUILD_REPORT.html", html_report.render_html(model, history))
    # the newest report of any target, where a user looks first
    write_atomic(space.artifacts_dir / "BUILD_REPORT.md", markdown)
    return markdown


def _history(space: Workspace) -> list[dict[str, Any]]:
    """bench/history.jsonl (stages/validate.py appends it; a torn last line is skipped)."""
    path = space.records / "bench" / "history.jsonl"
    entries = []
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries


def record_host_compat(project: Project, plan: Plan, space: Workspace) -> None:
    """hostcompat.json: the compat verdict, for this recipe, of the host the report is made
    on (its driver, the firmware on its disk); a report made elsewhere says that host's."""
    verdict = verdict_here(project.site.sysroot, plan.host, [plan.recipe]).as_record()
    write_record(
        space.record("hostcompat"),
        "hostcompat",
        {
            "target": plan.target,
            "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "made_on": plan.host.describe(),
            "facts": verdict["facts"],
            "firmware": verdict["firmware"],
            "recipe": verdict["recipes"].get(plan.recipe.name),
            "consumers": verdict["consumers"],
            "fix": verdict["fix"],
            "notes": verdict["notes"],
        },
    )


def report(project: Project, plan: Plan, space: Workspace) -> None:
    record_host_compat(project, plan, space)
    retired = retire_outdated(space, {s.name: s.fingerprint for s in plan.stages})
    if retired is not None:
        print(f"  the target {retired}, with inputs it no longer has: not shown as current")
    write_report(plan.target, space)
    print(f"  report: {space.records / 'BUILD_REPORT.md'}")
