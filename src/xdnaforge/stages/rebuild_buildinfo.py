"""`doit rebuild-check --buildinfo FILE`: rebuild what someone else's .buildinfo describes and
say for each of its packages whether the rebuild has the same digest, or what differs and why.

Edge module. The .buildinfo is a path or a URL (http(s):// or file://; a URL the site mirrors
is read from the mirror). Its pins (source commit, submodules, patches) must be the recipe's:
otherwise nothing is built and the message lists each difference. Its Installed-Build-Depends
are compared with the environment the rebuild runs in: a version this environment does not
have is named with the one used instead, and the verdict says the environment differed. The
rebuild is rebuild-check's second build (a fresh tree, its own empty ccache); the .deb files
beside the .buildinfo, when they are there, say why a package differs.
"""

from __future__ import annotations

import dataclasses
import functools
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xdnaforge.config.project import Project
from xdnaforge.debs.compare import Cause, compare_package
from xdnaforge.debs.debfile import DebError, read_deb
from xdnaforge.errors import StageFailed, UsageError
from xdnaforge.planning.plan import Plan
from xdnaforge.process.run import CommandFailed, run
from xdnaforge.process.sandbox import PATH_INSIDE, WORK_INSIDE, admin_argv
from xdnaforge.stages import buildinfo as stage_buildinfo
from xdnaforge.stages.rebuild import StageBody, _causes, _second_build
from xdnaforge.stages.report import write_report
from xdnaforge.state import buildinfo
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_record
from xdnaforge.tools import apt

MAX_BYTES = 16 * 2**20


def _local(project: Project, source: str) -> Path | None:
    """The file a path, a file:// URL or a URL under one of the site's mirrors names."""
    if "://" not in source:
        return Path(source).expanduser()
    if source.startswith("file://"):
        return Path(source.removeprefix("file://"))
    for url, mirror in project.site.mirrors:
        if source.startswith(url.rstrip("/") + "/") and "://" not in mirror:
            return Path(mirror) / source[len(url.rstrip("/")) + 1 :]
    return None


def load(project: Project, source: str) -> tuple[buildinfo.BuildInfo, Path | None]:
    """The .buildinfo and the directory its .deb files would be in (None for a URL)."""
    path = _local(project, source)
    try:
        if path is not None:
            text = path.read_bytes()[:MAX_BYTES].decode("utf-8", errors="replace")
        else:
            with urllib.request.urlopen(source, timeout=60) as answer:
                text = answer.read(MAX_BYTES).decode("utf-8", errors="replace")
    except (OSError, urllib.error.URLError) as error:
        raise UsageError(
            f"--buildinfo {source}: cannot be read ({getattr(error, 'reason', error)})",
            hint="give the .buildinfo published beside the packages (a path or a URL)",
        ) from None
    try:
        info = buildinfo.parse(text)
    except buildinfo.BuildInfoError as error:
        raise UsageError(f"--buildinfo {source}: {error}") from None
    return info, (path.parent if path is not None else None)


def pin_differences(info: buildinfo.BuildInfo, plan: Plan) -> list[str]:
    """Where the .buildinfo's pins are not the recipe's (pure)."""
    found = []
    pinned = plan.recipe.pinned
    if info.source_commit and info.source_commit != pinned.commit:
        found.append(f"source {info.source_commit}, the recipe pins {pinned.commit}")
    recorded = dict(info.submodules)
    for sub in pinned.submodules:
        if sub.path in recorded and recorded[sub.path] != sub.commit:
            found.append(f"{sub.path} {recorded[sub.path]}, the recipe pins {sub.commit}")
    ours = {f"{p.set}/{p.file}": p.sha256 for p in plan.patches}
    theirs = dict(info.patches)
    for name in sorted(set(ours) | set(theirs)):
        if ours.get(name) != theirs.get(name):
            have = "absent" if name not in ours else f"sha256 {ours[name]}"
            had = "absent" if name not in theirs else f"sha256 {theirs[name]}"
            found.append(f"patch {name}: {had} in the .buildinfo, {have} here")
    return found


def nearest(recorded: str, offered: list[str]) -> str | None:
    """The recorded version if offered, else the newest older one, else the oldest newer
    one (dpkg's ordering); None when nothing is offered. Pure."""
    if recorded in offered:
        return recorded
    older = [v for v in offered if apt.compare_versions(v, recorded) < 0]
    if older:
        return apt.newest(older)
    newer = sorted(offered, key=functools.cmp_to_key(apt.compare_versions))
    return newer[0] if newer else None


def environment_differences(
    info: buildinfo.BuildInfo,
    installed: dict[str, str],
    offered: dict[str, list[str]] | None = None,
) -> list[dict[str, str]]:
    """Each recorded build dependency whose version the rebuild's environment does not have,
    with the version used instead and, when the environment's archive was asked
    (`offered`), whether it still has the recorded one and which it has nearest (pure)."""
    found = []
    for name, version in info.installed_build_depends:
        here = installed.get(name)
        if here == version:
            continue
        note = f"{name} {version} is not in this environment; " + (
            f"built with {here}, the nearest it has" if here else "built without it"
        )
        entry = {"package": name, "recorded": version, "used": here or "absent", "note": note}
        if offered is not None:
            versions = offered.get(name, [])
            close = nearest(version, versions)
            if close == version:
                entry["archive"] = (
                    f"the archive still has {version}: `apt-get install {name}={version}` "
                    "inside the root would build with it"
                )
            else:
                entry["archive"] = f"the archive no longer has {version}; " + (
                    f"the nearest it has is {close}" if close else "it has no version of it"
                )
            entry["note"] += f" ({entry['archive']})"
        found.append(entry)
    return found


def offered_versions(plan: Plan, space: Workspace, names: list[str]) -> dict[str, list[str]] | None:
    """What the rootfs environment's archive offers for `names` (`apt-cache madison` inside
    the root, which changes nothing); None where it cannot be asked."""
    spec = plan.environment
    bwrap = shutil.which("bwrap")
    status = stage_buildinfo.environment_status(space, spec.name) if spec else None
    if spec is None or spec.kind != "rootfs" or bwrap is None or status is None or not names:
        return None
    root = status.parents[3].resolve()
    try:
        result = run(
            [*admin_argv(bwrap, root), *apt.madison_argv(names)],
            cwd=Path("/"),
            env={"PATH": PATH_INSIDE},  # apt-cache is the root's
            timeout=300,
            ok_codes=(0, 100),
        )
    except CommandFailed:
        return None
    return apt.parse_madison(result.stdout)


def _environment_said(environment: list[dict[str, str]]) -> str:
    """The verdict's half about the environment: the recorded one, or how it differed."""
    if not environment:
        return "; in an environment with the recorded build dependencies"
    used = ", ".join(f"{e['package']} {e['used']} for {e['recorded']}" for e in environment)
    return f"; the environment differed in {len(environment)} package(s) (built with {used})"


def _verdict(item: dict[str, Any]) -> str:
    if item["identical"]:
        return "same digest"
    causes = "; ".join(f"{c['path']}: {c['cause']} ({c['detail']})" for c in item["causes"])
    return f"differs: {causes}" if causes else "differs"


def check(
    project: Project,
    plan: Plan,
    space: Workspace,
    body: Callable[[str, Plan], StageBody],
    source: str,
) -> None:
    info, folder = load(project, source)
    if info.target and info.target != plan.target:
        raise UsageError(
            f"--buildinfo {source} describes {info.target}, not {plan.target}",
            hint=f"run rebuild-check --target {info.target}",
        )
    differences = pin_differences(info, plan)
    if differences:
        raise StageFailed(
            f"rebuild-check {plan.target}: the .buildinfo was built from other pins: "
            + "; ".join(differences),
            hint="check out the recipe and patches of that build (its X-Xdnaforge-Recipe-Sha256 "
            f"is {info.recipe_sha256 or 'not recorded'})",
        )
    installed = stage_buildinfo.installed(plan, space)
    changed = [n for n, v in info.installed_build_depends if installed.get(n) != v]
    offered = offered_versions(plan, space, changed)
    environment = environment_differences(info, installed, offered)
    for difference in environment:
        print(f"  environment: {difference['note']}")
    other, ccache = _second_build(project, plan, body)
    rebuilt = read_record(other.record("packages")) or {}
    ours = {e["package"]: e for e in rebuilt.get("packages", [])}
    trees = [info.build_path, str(other.work.resolve()), str(WORK_INSIDE)]
    packages = []
    for checksum in info.checksums:
        package = info.package_of(checksum.file) or checksum.file
        mine = ours.get(package)
        entry: dict[str, Any] = {
            "package": package,
            "file": checksum.file,
            "buildinfo_sha256": checksum.sha256,
            "rebuilt_sha256": mine["sha256"] if mine else None,
            "identical": bool(mine and mine["sha256"] == checksum.sha256),
            "causes": [],
        }
        if not entry["identical"]:
            entry["causes"] = [
                dataclasses.asdict(c) for c in _why(checksum, mine, folder, other, trees)
            ]
        packages.append(entry)
    same = all(p["identical"] for p in packages)
    write_record(
        space.record("rebuild"),
        "rebuild",
        {
            "target": plan.target,
            "buildinfo": source,
            "buildinfo_built": {"date": info.build_date, "path": info.build_path},
            "second_build": str(other.work),
            "second_ccache": f"{ccache} (empty at the start)",
            "pins": "the .buildinfo's source, submodule and patch pins are the recipe's",
            "environment_differences": environment,
            "reproducible": same,
            "verdict": ("same digests" if same else "packages differ")
            + _environment_said(environment),
            "compared": f"the {len(packages)} packages the .buildinfo lists, by sha256",
            "packages": packages,
        },
    )
    write_report(plan.target, space)
    for item in packages:
        print(f"  {item['package']}: {_verdict(item)}")
    print(f"rebuild-check --buildinfo: {'same' if same else 'differs'}")


def _why(
    checksum: buildinfo.Checksum,
    mine: dict[str, Any] | None,
    folder: Path | None,
    other: Workspace,
    trees: list[str],
) -> list[Cause]:
    if mine is None:
        return [Cause("(package)", "only in one build", "the rebuild did not make it")]
    theirs = folder / Path(checksum.file).name if folder is not None else None
    if theirs is None or not theirs.is_file():
        return [
            Cause(
                "(package)",
                "content",
                f"their .deb is not beside the .buildinfo ({checksum.file}), so what differs "
                "cannot be said",
            )
        ]
    try:
        first = read_deb(theirs, digests=True)
        second = read_deb(other.records / mine["file"], digests=True)
    except DebError as error:
        raise StageFailed(f"rebuild-check: {error.message}") from None
    comparison = compare_package(first, second)
    return _causes(comparison, theirs, other.records / mine["file"], trees)
