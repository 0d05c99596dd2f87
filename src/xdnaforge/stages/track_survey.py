"""The survey `doit track` runs on a candidate whose every nested commit some mirror holds:
fetch its tree, survey it on the host, and stamp survey.json with the recipe file's digest
once the header carries the outcome. Edge helper of stages/track.py.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from xdnaforge.config.project import Project
from xdnaforge.environments.proof_sandbox import HOST, Sandbox
from xdnaforge.errors import StageFailed
from xdnaforge.host import HostFacts
from xdnaforge.planning.plan import plan_target
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_record


def fetch_and_survey(project: Project, line: str, space: Workspace, host: HostFacts) -> str:
    """Fetch the candidate's tree and survey it on the host; a sentence for the record."""
    from xdnaforge.stages import fetch as stage_fetch  # edge modules, loaded only here
    from xdnaforge.stages import survey as stage_survey

    recipe = project.recipes[line]
    plan = plan_target(
        recipe,
        project.patches_for(recipe),
        space,
        distro=recipe.build_distro,
        toolchain={},
        host=host,
        environment=None,
    )
    try:
        stage_fetch.fetch(project, plan, space)
        stage_survey.survey_target(project, line, space, Sandbox(name="host", root=HOST))
    except StageFailed as error:
        return f"could not run: {error.message.splitlines()[0]}"
    record = read_record(space.record("survey")) or {}
    warnings = [
        f"{f['where']}: {f['message']}" for f in record.get("findings", []) if f.get("warning")
    ]
    summary = f"ran on the host: {len(warnings)} warning(s)"
    return summary + (" - " + "; ".join(warnings) if warnings else "")


def restamp_survey(space: Workspace, recipe_path: Path) -> None:
    """The recipe's header now carries the survey's outcome: a comment, which changes nothing
    the survey read; survey.json is stamped with the file's new digest so that `doit plan`
    does not call it stale."""
    record = read_record(space.record("survey"))
    if record is None:
        return
    body = {k: v for k, v in record.items() if k not in ("schema", "kind", "xdnaforge")}
    body["recipe_sha256"] = hashlib.sha256(recipe_path.read_bytes()).hexdigest()
    write_record(space.record("survey"), "survey", body)
