"""doit task dictionaries for the per-target stages; dodo.py only yields them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from xdnaforge.actions import pipeline as steps
from xdnaforge.config.project import Project


def stage_tasks(project: Project) -> Iterator[dict[str, Any]]:
    """`_<stage>:<target>` for every pipeline stage of every recipe, each depending on the
    one before; up to date when the stage's record holds the fingerprint of now."""
    for target in sorted(project.recipes):
        plan = steps.make_plan(project, target, probe=False)
        space = steps.workspace(project, target)
        previous = None
        for stage in plan.pipeline():
            yield {
                "basename": f"_{stage.name}",
                "name": target,
                "actions": [(steps.run_stage, [project, target, stage.name])],
                "uptodate": [(steps.stage_fresh, [project, target, stage.name])],
                "task_dep": [f"_{previous}:{target}"] if previous else [],
                "targets": [str(space.source_tree)] if stage.name == "fetch" else [],
                "verbosity": 2,
                "doc": stage.title,
            }
            previous = stage.name
