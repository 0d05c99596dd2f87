"""The doit action bodies of the fleet tasks (publish, lava-job, lava-results, ci-workflow,
fleet-report); each gathers inputs and hands them to the fleet modules. Edge module."""

from __future__ import annotations

from xdnaforge.lockfile import held
from xdnaforge.project import Project
from xdnaforge.steps import guarded, resolve_target, workspace

from . import publish as publish_module


@guarded
def publish(project: Project, target: str, snapshot: str) -> None:
    name = resolve_target(project, target or None)
    with held(project.site.build_dir / ".lock", f"the build directory {project.site.build_dir}"):
        publish_module.publish(project, workspace(project, name), snapshot or None)
