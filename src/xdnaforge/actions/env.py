"""The doit action bodies of the build-environment commands: env (make or refresh the root
a target builds in), prove (each compatibility change, without and with it) and survey.
Edge module, as actions/pipeline.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdnaforge.actions import lazy
from xdnaforge.actions.pipeline import guarded
from xdnaforge.actions.target import Target, build_dir_lock, resolve
from xdnaforge.config.project import Project

# imported when a command runs them (see actions/lazy.py)
if TYPE_CHECKING:
    from xdnaforge.environments import create as env_create
    from xdnaforge.environments.proof_sandbox import Sandbox
    from xdnaforge.stages import prove as stage_prove
    from xdnaforge.stages import survey as stage_survey
else:
    env_create = lazy.module("xdnaforge.environments.create")
    stage_prove = lazy.module("xdnaforge.stages.prove")
    stage_survey = lazy.module("xdnaforge.stages.survey")


@guarded
def env(project: Project, target: str, refresh: bool, yes: bool) -> None:
    """`doit env`: create or update the environment the target builds in."""
    resolved = resolve(project, target or None, probe=False)
    plan = resolved.plan
    spec = plan.environment
    if spec is None:
        print(f"{resolved.name} names no build.environment: it builds on the host")
        return
    packages = (*(plan.recipe.depends_for(*plan.distro) or ()), *spec.packages)
    # a build must not run in a root that apt is changing
    with build_dir_lock(project):
        env_create.create(
            project.site,
            spec,
            tuple(dict.fromkeys(packages)),
            refresh=refresh,
            yes=yes,
            target=resolved.name,
        )


def _proof_sandbox(target: Target, env_root: str, env_name: str, cc: str, cxx: str) -> Sandbox:
    """--env-root when given, else the recipe's build environment (issue 12's)."""
    if env_root or env_name or cc or cxx:
        return stage_prove.make_sandbox(env_root, env_name, cc, cxx)
    host = target.host
    distro = (host.distro_id or "unknown", host.distro_version or "unknown")
    return stage_prove.recipe_sandbox(target.project, target.name, distro)


@guarded
def prove(
    project: Project, target: str, env_root: str, env_name: str, cc: str, cxx: str, timeout: int
) -> None:
    resolved = resolve(project, target or None)
    sandbox = _proof_sandbox(resolved, env_root, env_name, cc, cxx)
    # the fetched tree is read while no fetch or patch may change it
    with build_dir_lock(project):
        stage_prove.prove_target(
            project, resolved.name, resolved.workspace, sandbox, float(timeout)
        )


@guarded
def survey(project: Project, target: str, env_root: str, env_name: str, cc: str, cxx: str) -> None:
    resolved = resolve(project, target or None)
    sandbox = _proof_sandbox(resolved, env_root, env_name, cc, cxx)
    with build_dir_lock(project):
        stage_survey.survey_target(project, resolved.name, resolved.workspace, sandbox)
