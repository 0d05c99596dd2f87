"""`doit env` for a podman/docker image: it must start here and hold the build dependencies.

Edge module. Images are pulled and built by the engine, not by xdnaforge; this checks that
a container starts (nested sandboxes often refuse: podman failing on setrlimit) and records
the image's packages in env.json. Every fault is one line: environment, cause, fix.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from xdnaforge.config.envspec import EnvironmentSpec
from xdnaforge.environments.local import Place
from xdnaforge.errors import StageFailed
from xdnaforge.process.run import CommandFailed, run
from xdnaforge.state.records import write_record
from xdnaforge.tools.dpkg import parse_installed


def _fail(spec: EnvironmentSpec, cause: str, fix: str) -> StageFailed:
    return StageFailed(f"environment {spec.name}: {cause}", hint=fix)


def engine_fault(engine: str, output: str) -> str:
    """One line for an engine that is installed but cannot start a container."""
    text = output.lower()
    if "setrlimit" in text:
        return (
            f"{engine} is installed but cannot start containers here (setrlimit refused: "
            "a nested sandbox?)"
        )
    if "cannot connect" in text or "permission denied" in text:
        return f"{engine} is installed but its service is not reachable by this user"
    if "manifest unknown" in text or ("not found" in text and "image" in text):
        return f"{engine} cannot find the image"
    last = next((line for line in reversed(output.splitlines()) if line.strip()), "no output")
    return f"{engine} cannot start a container: {last.strip()}"


def check_image(spec: EnvironmentSpec, where: Place, packages: Sequence[str]) -> Path:
    """A podman/docker image: it must start and already hold the build dependencies."""
    engine = shutil.which(spec.kind)
    if engine is None or spec.image is None:
        raise _fail(spec, f"{spec.kind} is not installed", f"install {spec.kind} or use a rootfs")
    where.base.mkdir(parents=True, exist_ok=True)
    probe = [
        engine,
        "run",
        "--rm",
        "--network",
        "none",
        spec.image,
        "dpkg-query",
        "-W",
        "-f",
        "${Package}\t${db:Status-Abbrev}\t${Version}\n",
    ]
    try:
        result = run(probe, cwd=where.base, timeout=1800, log_file=where.log)
    except CommandFailed as error:
        raise _fail(
            spec,
            engine_fault(spec.kind, error.output),
            f"check `{spec.kind} run --rm {spec.image} true` by hand, or provide {spec.name} "
            "as a rootfs in site.yaml (bubblewrap needs no daemon)",
        ) from None
    installed = parse_installed(result.stdout)
    missing = [p for p in packages if p not in installed]
    if missing:
        raise _fail(
            spec,
            f"the image {spec.image} lacks {', '.join(missing)}",
            f"build an image FROM {spec.image} that installs them and name it in site.yaml",
        )
    write_record(
        where.record,
        "env",
        {
            "environment": spec.name,
            "distro": spec.distro,
            "release": spec.release,
            "provider": spec.kind,
            "image": spec.image,
            "twin": spec.twin,
            "description": spec.describe(),
            "requested": sorted(packages),
            "packages": dict(sorted(installed.items())),
        },
    )
    print(f"{spec.name}: {spec.image} starts; {len(installed)} packages")
    return where.record
