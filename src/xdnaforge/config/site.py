"""Site configuration: what belongs to the machine rather than the recipe.

Read from `site.yaml` at the project root or the file named by XDNAFORGE_SITE; every key
is optional and the defaults work with no file at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from xdnaforge.config.envspec import EnvironmentSpec, parse_environments
from xdnaforge.config.fleet import NONE as NO_FLEET
from xdnaforge.config.fleet import FleetSettings, parse_fleet
from xdnaforge.config.mirrors import Found, MirrorRules, read_git_rules, scan_directory
from xdnaforge.errors import ConfigError, Problem
from xdnaforge.schema import Reader
from xdnaforge.yamlfile import load

SITE_ENV = "XDNAFORGE_SITE"
NO_RULES = MirrorRules()
SYSROOT_ENV = "XDNAFORGE_SYSROOT"


@dataclass(frozen=True, slots=True, kw_only=True)
class Site:
    origin: str  # the file it came from, or "defaults"
    build_dir: Path
    artifacts_dir: Path
    cache_dir: Path  # bare object caches, one per upstream repository
    ccache_dir: Path
    jobs: int | None  # None: derived from cores and memory
    offline: bool
    mirrors: tuple[tuple[str, str], ...]  # upstream URL -> local path or URL
    pythons: tuple[str, ...]
    sysroot: Path
    xrt_prefix: Path  # where the installed XRT lives (tools, plugin, pyxrt)
    vendor_dirs: tuple[Path, ...]  # where prebuilt recipes' .deb files are looked for
    tool_timeout_s: float  # a hardware tool taking longer is considered hung
    fleet: FleetSettings = NO_FLEET  # publishing and lab settings (`fleet:`)
    # how a build step's processes are held: "pid-namespace" (bwrap; falls back when refused)
    # or "process-group" (only PDEATHSIG and the group: what escapes it can outlive xdnaforge)
    containment: str = "pid-namespace"
    npu_user: str | None = None  # whom validation runs as; None: the one install.json names
    environments: tuple[EnvironmentSpec, ...] = ()  # how this machine provides build distros
    # site.yaml names xrt_prefix: it says where XRT is (else the installed packages say it)
    xrt_prefix_given: bool = False

    # every rule that finds a mirror (config/mirrors.py); `mirrors` above also lists each
    # local directory a rule points into, so that build sandboxes bind them
    mirror_rules: MirrorRules = NO_RULES

    def mirror_for(self, url: str) -> str | None:
        """The mirror for an upstream URL (`.git`, a trailing slash and host case ignored),
        by the first rule that has one: mirrors, mirror_dirs, mirror_rewrites, git insteadOf."""
        found = self.mirror_found(url)
        return found.source if found else None

    def mirror_found(self, url: str) -> Found | None:
        """The mirror for `url` with the rule that chose it."""
        return replace(self.mirror_rules, exact=self.mirrors).find(url)


KEYS = (
    "build_dir",
    "artifacts_dir",
    "cache_dir",
    "ccache_dir",
    "jobs",
    "offline",
    "mirrors",
    "mirror_dirs",
    "mirror_rewrites",
    "git_insteadof",
    "python",
    "sysroot",
    "xrt_prefix",
    "tool_timeout_s",
    "vendor_dirs",
    "fleet",
    "containment",
    "npu_user",
    "environments",
)
CONTAINMENTS = ("pid-namespace", "process-group")


def _path(root: Path, value: str | None, default: Path) -> Path:
    if value is None:
        return default
    path = Path(value).expanduser()
    return path if path.is_absolute() else root / path


def _rewrites(reader: Reader, data: Mapping[str, Any], base: Path) -> list[tuple[str, str]]:
    """`mirror_rewrites: {URL prefix: replacement}`; a relative local replacement is relative
    to site.yaml, as every path here."""
    if "mirror_rewrites" not in data:
        return []
    table = reader.mapping(data["mirror_rewrites"], ("mirror_rewrites",), free_keys=True) or {}
    found = []
    for prefix in table:
        to = reader.string(table, prefix, ("mirror_rewrites",))
        if to is None:
            continue
        if "://" not in to:
            slash = "/" if to.endswith("/") else ""  # a prefix keeps its slash
            to = str(_path(base, to, base)) + slash
        found.append((str(prefix), to))
    return found


def load_site(project_root: Path, environ: Mapping[str, str]) -> Site:
    """The site settings for this project; ConfigError lists every problem in the file."""
    named = environ.get(SITE_ENV)
    path = Path(named) if named else project_root / "site.yaml"
    sysroot_override = environ.get(SYSROOT_ENV)
    data: dict[str, object] = {}
    origin = "defaults"
    base = project_root
    if named and not path.is_file():
        raise ConfigError(
            [
                Problem(
                    source=str(path),
                    line=1,
                    column=1,
                    key_path="",
                    message=f"{SITE_ENV} names a file that does not exist",
                    hint=f"create it or unset {SITE_ENV}",
                )
            ]
        )
    reader = None
    if path.is_file():
        document = load(
            path,
            str(path.relative_to(project_root)) if path.is_relative_to(project_root) else str(path),
            None if named else project_root,  # the project's own site.yaml must stay in it
            owner=project_root.stat().st_uid,  # and both are the project owner's or root's
        )
        origin = document.source
        base = path.parent
        if document.data is not None:
            reader = Reader(document)
            checked = reader.mapping(document.data, (), optional=KEYS)
            data = checked or {}
    mirrors: list[tuple[str, str]] = []
    by_name: list[tuple[str, str]] = []
    rewrites: list[tuple[str, str]] = []
    use_git = True
    pythons: tuple[str, ...] = ()
    jobs = None
    offline = False
    build = artifacts = cache = ccache = sysroot = prefix = None
    vendor: tuple[str, ...] = ()
    tool_timeout = 600
    fleet = NO_FLEET
    containment: str | None = None
    npu_user = None
    environments: tuple[EnvironmentSpec, ...] = ()
    if reader is not None:
        containment = reader.choice(data, "containment", (), CONTAINMENTS)
        npu_user = reader.string(data, "npu_user", ())
        build = reader.string(data, "build_dir", ())
        artifacts = reader.string(data, "artifacts_dir", ())
        cache = reader.string(data, "cache_dir", ())
        ccache = reader.string(data, "ccache_dir", ())
        sysroot = reader.string(data, "sysroot", ())
        prefix = reader.string(data, "xrt_prefix", ())
        vendor = reader.strings(data, "vendor_dirs", ())
        tool_timeout = reader.integer(data, "tool_timeout_s", (), minimum=1, default=600) or 600
        jobs = reader.integer(data, "jobs", (), minimum=1)
        offline = reader.boolean(data, "offline", (), default=False)
        pythons = reader.strings(data, "python", ())
        if "fleet" in data:
            fleet = parse_fleet(reader, data["fleet"], base)
        table = (
            reader.mapping(data["mirrors"], ("mirrors",), free_keys=True)
            if "mirrors" in data
            else None
        )
        for upstream in table or {}:
            if isinstance(upstream, str):
                mirror = reader.string(table or {}, upstream, ("mirrors",))
                if mirror is not None:
                    # a relative local mirror path is relative to site.yaml, like every path here
                    if "://" not in mirror and not Path(mirror).expanduser().is_absolute():
                        mirror = str(base / mirror)
                    mirrors.append(
                        (
                            upstream,
                            str(Path(mirror).expanduser()) if "://" not in mirror else mirror,
                        )
                    )
        dirs = [_path(base, d, base) for d in reader.strings(data, "mirror_dirs", ())]
        by_name = [entry for directory in dirs for entry in scan_directory(directory)]
        rewrites = _rewrites(reader, data, base)
        use_git = reader.boolean(data, "git_insteadof", (), default=True)
        environments = parse_environments(reader, data)
        reader.raise_if_any()
    rules = MirrorRules(
        exact=tuple(mirrors),
        named=tuple(by_name),
        rewrites=tuple(rewrites),
        insteadof=tuple(read_git_rules(environ)) if use_git else (),
    )
    listed = {m for _, m in mirrors}
    mirrors += [("(rule)", root) for root in rules.local_roots() if root not in listed]
    build_dir = _path(base, build, project_root / "build")
    return Site(
        mirror_rules=rules,
        origin=origin,
        build_dir=build_dir,
        artifacts_dir=_path(base, artifacts, project_root / "artifacts"),
        cache_dir=_path(base, cache, build_dir / "cache"),
        ccache_dir=_path(base, ccache, build_dir / "ccache"),
        jobs=jobs,
        offline=offline,
        mirrors=tuple(mirrors),
        pythons=pythons or ("python3",),
        sysroot=Path(sysroot_override) if sysroot_override else _path(base, sysroot, Path("/")),
        xrt_prefix=_path(base, prefix, Path("/opt/xilinx/xrt")),
        vendor_dirs=tuple(_path(base, v, base) for v in vendor) or (project_root / "vendor",),
        tool_timeout_s=float(tool_timeout),
        fleet=fleet,
        containment=containment or CONTAINMENTS[0],
        npu_user=npu_user,
        environments=environments,
        xrt_prefix_given=prefix is not None,
    )
