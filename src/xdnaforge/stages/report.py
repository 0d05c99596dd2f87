"""The report stage: BUILD_REPORT.md and BUILD_REPORT.json from a target's records."""

from __future__ import annotations

import datetime
import json
from typing import Any

from xdnaforge import __version__
from xdnaforge.config.project import Project
from xdnaforge.planning.plan import Plan
from xdnaforge.report.build_report import build_model, render_markdown
from xdnaforge.state.failure import retire_outdated
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import RECORDS, read_record, write_atomic


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
    markdown = render_markdown(model)
    write_atomic(space.records / "BUILD_REPORT.md", markdown)
    write_atomic(twin, json.dumps(model, indent=2, sort_keys=True) + "\n")
    # the newest report of any target, where a user looks first
    write_atomic(space.artifacts_dir / "BUILD_REPORT.md", markdown)
    return markdown


def report(project: Project, plan: Plan, space: Workspace) -> None:
    del project
    retired = retire_outdated(space, {s.name: s.fingerprint for s in plan.stages})
    if retired is not None:
        print(f"  the target {retired}, with inputs it no longer has: not shown as current")
    write_report(plan.target, space)
    print(f"  report: {space.records / 'BUILD_REPORT.md'}")
