"""The package stage's .buildinfo: what a build's published packages were built from and with,
written beside them (artifacts/<target>/debs/<source>_<version>_<arch>.buildinfo) in Debian's
format so that anyone holding the .deb files can rebuild and compare (state/buildinfo.py owns
the format; `doit rebuild-check --buildinfo` reads it back).

Edge module: reads build.json, lock.json and the environment's dpkg database. A distro
recipe's packages were not built here and get none; neither does a prebuilt recipe's.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

from xdnaforge.planning.plan import Plan
from xdnaforge.state import buildinfo
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_atomic
from xdnaforge.tools.dpkg import parse_status

MACHINES = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "armhf", "ppc64le": "ppc64el"}


def environment_status(space: Workspace, name: str) -> Path | None:
    """The environment's dpkg status (a rebuild's workspace sits one level below build/)."""
    for base in (space.build_dir, space.build_dir.parent):
        status = base / "envs" / name / "root/var/lib/dpkg/status"
        if status.is_file():
            return status
    return None


def installed(plan: Plan, space: Workspace) -> dict[str, str]:
    """Exact versions the build had: every package of its root, or on the host the build
    dependencies' versions the toolchain recorded."""
    spec = plan.environment
    if spec is not None and spec.kind == "rootfs":
        status = environment_status(space, spec.name)
        if status is not None:
            return parse_status(status.read_text(encoding="utf-8", errors="replace"))
    return {
        key.removeprefix("deb:"): value
        for key, value in dict(plan.toolchain).items()
        if key.startswith("deb:") and value != "absent"
    }


def origin(plan: Plan) -> str:
    distro = plan.distro[0]
    spec = plan.environment
    if spec is not None and spec.twin:
        return f"{distro.capitalize()} (twin: {spec.describe()})"
    return distro.capitalize()


def write(plan: Plan, space: Workspace, packages: dict[str, Any]) -> Path | None:
    """Write the .buildinfo of a source build's packages; None when there was no build."""
    build = read_record(space.record("build"))
    if plan.recipe.kind != "source" or build is None:
        return None
    lock = read_record(space.record("lock")) or {}
    entries = packages.get("packages", [])
    arches = {str(e.get("architecture")) for e in entries} - {"all"}
    machine = MACHINES.get(platform.machine(), platform.machine())
    info = buildinfo.compose(
        target=plan.target,
        packages=packages,
        build=build,
        lock=lock,
        installed=installed(plan, space),
        build_origin=origin(plan),
        build_architecture=next(iter(sorted(arches)), machine),
    )
    path = space.packages / buildinfo.file_name(info)
    for old in space.packages.glob("*.buildinfo"):
        if old != path:
            old.unlink()
    write_atomic(path, buildinfo.render(info))
    return path
