"""doit task dictionaries for the per-target stages; dodo.py only yields them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import steps
from .project import Project


def stage_tasks(project: Project, stage_name: str) -> Iterator[dict[str, Any]]:
    """One `_<stage>:<target>` task per recipe; up to date when its record says so."""
    for target in sorted(project.recipes):
        space = steps.workspace(project, target)
        previous = steps.PREVIOUS.get(stage_name)
        yield {
            "name": target,
            "actions": [(steps.run_stage, [project, target, stage_name])],
            "uptodate": [(steps.stage_fresh, [project, target, stage_name])],
            "task_dep": [f"_{previous}:{target}"] if previous else [],
            "targets": [str(space.source_tree)] if stage_name == "fetch" else [],
            "verbosity": 2,
        }
