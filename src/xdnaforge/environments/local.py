"""Build environments on this machine: where they live, how a step enters one, what it holds.

Owns build/envs/<distro>-<release>/ (`root/` and `env.json`), the wrapper argv and variables
of a build step, and the fingerprint of an environment's packages. Creating a root is
environments/create.py. Starts no process itself (process/run.py does, with the wrapper built here).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdnaforge.config.envspec import EnvironmentSpec
from xdnaforge.config.site import Site
from xdnaforge.errors import StageFailed
from xdnaforge.process.sandbox import (
    PATH_INSIDE,
    WORK_INSIDE,
    Binds,
    RootEntry,
    SandboxError,
    container_argv,
    host_argv,
    rootfs_argv,
)
from xdnaforge.state.paths import Workspace
from xdnaforge.tools.dpkg import parse_status

RECORD = "env.json"


@dataclass(frozen=True, slots=True)
class Place:
    """Where one environment lives under the build directory."""

    base: Path  # build/envs/<distro>-<release>

    @property
    def root(self) -> Path:
        return self.base / "root"

    @property
    def record(self) -> Path:
        return self.base / RECORD

    @property
    def log(self) -> Path:
        return self.base.with_name(self.base.name + ".log")


def place(site: Site, spec: EnvironmentSpec) -> Place:
    return Place(site.build_dir / "envs" / spec.name)


def read_env_record(site: Site, spec: EnvironmentSpec) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads(place(site, spec).record.read_text())
    except (OSError, ValueError):
        return None
    return data


def record_digest(site: Site, spec: EnvironmentSpec) -> str | None:
    """sha256 of env.json as written: the build record names the environment by it."""
    try:
        return hashlib.sha256(place(site, spec).record.read_bytes()).hexdigest()
    except OSError:
        return None


def installed_packages(site: Site, spec: EnvironmentSpec) -> dict[str, str]:
    """{package: version} of the environment, read from its dpkg database (no process)."""
    status = place(site, spec).root / "var/lib/dpkg/status"
    try:
        return parse_status(status.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        # an image has no root here: what `doit env` recorded from inside it
        packages = (read_env_record(site, spec) or {}).get("packages", {})
        return {str(k): str(v) for k, v in packages.items()}


def toolchain(site: Site, spec: EnvironmentSpec, depends: tuple[str, ...]) -> dict[str, str]:
    """The fingerprint's toolchain for a non-host environment: the environment's name, the
    versions of the build dependencies and compilers by name (so `doit plan` can say which
    changed), and a digest of every other installed package."""
    packages = installed_packages(site, spec)
    named = set(depends) | set(spec.packages) | {c for _, c in spec.compilers}
    # the name and kind, not the mirror: the same packages from another mirror are the same
    result = {"environment": f"{spec.name} {spec.kind}{' twin' if spec.twin else ''}"}
    for name in sorted(named):
        result[f"deb:{name}"] = packages.get(name, "absent")
    rest = sorted(f"{p}={v}" for p, v in packages.items() if p not in named)
    result["environment packages"] = hashlib.sha256("\n".join(rest).encode()).hexdigest()
    result.update({f"compiler {k}": v for k, v in spec.compilers})
    return result


def root_entries(root: Path) -> list[RootEntry]:
    """The top level of a root: relative symlinks stay symlinks (bin -> usr/bin), directories
    (or absolute symlinks, as a test root's usr -> /usr) are bound read-only."""
    entries = []
    for path in sorted(root.iterdir()):
        if path.is_symlink() and not Path(path.readlink()).is_absolute():
            entries.append(RootEntry(path.name, str(path.readlink()), path))
        elif path.is_dir():
            entries.append(RootEntry(path.name, None, path.resolve()))
    return entries


def binds(site: Site, space: Workspace) -> Binds:
    """The build tree (source, logs, private HOME and TMPDIR) writable at WORK_INSIDE, the
    ccache writable; the object caches and local path mirrors read-only at their own paths,
    so upstream's git calls find every object (a worktree's alternates name them)."""
    space.work.mkdir(parents=True, exist_ok=True)
    site.ccache_dir.mkdir(parents=True, exist_ok=True)
    work = space.work.resolve()
    writable = [p for p in _outermost([site.ccache_dir]) if not _below(p, [work])]
    mirrors = [Path(m) for _, m in site.mirrors if "://" not in m and Path(m).exists()]
    cache = [site.cache_dir] if site.cache_dir.exists() else []
    readonly = [p for p in _outermost([*cache, *mirrors]) if not _below(p, [*writable, work])]
    return Binds(writable=tuple(writable), readonly=tuple(readonly), moved=((work, WORK_INSIDE),))


def _below(path: Path, parents: list[Path]) -> bool:
    return any(path == p or path.is_relative_to(p) for p in parents)


def _outermost(paths: list[Path]) -> list[Path]:
    """Drop paths inside another one of the list (one bind covers them)."""
    resolved = sorted({p.resolve() for p in paths})
    return [p for p in resolved if not any(p != q and p.is_relative_to(q) for q in resolved)]


def host_wrapper(site: Site, space: Workspace, cwd: Path, bwrap: str) -> list[str]:
    """The argv prefix that runs a build step on the host with its build tree at WORK_INSIDE
    (bubblewrap: the host's own directories, a PID namespace; see sandbox.host_argv)."""
    where = binds(site, space)
    return host_argv(bwrap, root_entries(Path("/")), where, cwd=where.inside(cwd.resolve()))


def step_wrapper(site: Site, spec: EnvironmentSpec, space: Workspace, cwd: Path) -> list[str]:
    """The argv prefix that runs a build step of `space` inside `spec` ([] for the host)."""
    if spec.kind == "host":
        return []
    where = place(site, spec)
    if spec.kind == "rootfs":
        if not where.record.is_file() or not where.root.is_dir():
            raise StageFailed(
                f"environment {spec.name}: not created yet ({where.base})",
                hint=f"create it: sudo .venv/bin/doit env --target {space.target} --yes",
            )
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise StageFailed(
                f"environment {spec.name}: bubblewrap (bwrap) is not installed",
                hint="apt-get install bubblewrap (or dnf install bubblewrap)",
            )
        bound = binds(site, space)
        try:
            return rootfs_argv(
                bwrap, root_entries(where.root), bound, cwd=bound.inside(cwd.resolve())
            )
        except SandboxError as error:
            raise StageFailed(f"environment {spec.name}: {error}") from None
    engine = shutil.which(spec.kind)
    if not where.record.is_file():
        raise StageFailed(
            f"environment {spec.name}: {spec.image} not checked yet",
            hint=f"check it: .venv/bin/doit env --target {space.target} --yes",
        )
    if engine is None or spec.image is None:
        raise StageFailed(
            f"environment {spec.name}: {spec.kind} is not installed",
            hint=f"install {spec.kind}, or provide {spec.name} as a rootfs in site.yaml",
        )
    bound = binds(site, space)
    return container_argv(
        engine, spec.image, bound, cwd=bound.inside(cwd.resolve()), environment=STEP_VARIABLES
    )


# what a step's environment carries into a container (rootfs steps get it from bwrap itself)
STEP_VARIABLES = (
    "HOME",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_NOSYSTEM",
    "TMPDIR",
    "LANG",
    "LC_ALL",
    "SOURCE_DATE_EPOCH",
    "CCACHE_DIR",
    "TERM",
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    # process/containment.py's markers: a later run finds a step's processes by them
    "XDNAFORGE_RUN",
    "XDNAFORGE_STEP",
)


def step_variables(spec: EnvironmentSpec, env: dict[str, str]) -> dict[str, str]:
    """A step's variables inside `spec`: the environment's PATH, and a twin's compilers."""
    if spec.kind == "host":
        return env
    return {**env, "PATH": PATH_INSIDE, **dict(spec.compilers)}
