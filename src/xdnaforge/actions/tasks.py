"""doit task dictionaries for the stages of one resolved target, for the nested doit run that
`doit fetch|patch|build` and `doit matrix` start; dodo.py holds the user's commands only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from xdnaforge.actions.target import Target

RunStage = Callable[[Target, str], Any]
StageFresh = Callable[[Target, str], bool]


def stage_tasks(target: Target, run: RunStage, fresh: StageFresh) -> Iterator[dict[str, Any]]:
    """`_<stage>:<target>` for every pipeline stage, each depending on the one before; up to
    date when the stage's record holds the fingerprint of now. Every task gets the same
    resolved target, so the plan is made once for the whole run."""
    previous = None
    for stage in target.plan.pipeline():
        yield {
            "basename": f"_{stage.name}",
            "name": target.name,
            "actions": [(run, [target, stage.name])],
            "uptodate": [(fresh, [target, stage.name])],
            "task_dep": [f"_{previous}:{target.name}"] if previous else [],
            "targets": [str(target.workspace.source_tree)] if stage.name == "fetch" else [],
            "verbosity": 2,
            "doc": stage.title,
        }
        previous = stage.name


def namespace(
    config: dict[str, Any], target: Target, run: RunStage, fresh: StageFresh
) -> dict[str, Any]:
    """What doit's ModuleTaskLoader reads for the nested run: its config and one creator."""

    def task__stages() -> Iterator[dict[str, Any]]:
        yield from stage_tasks(target, run, fresh)

    return {"DOIT_CONFIG": config, "task__stages": task__stages}
