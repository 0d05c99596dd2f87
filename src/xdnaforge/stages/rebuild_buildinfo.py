"""`doit rebuild-check --buildinfo FILE`: rebuild what someone else's .buildinfo describes and
say for each of its packages whether the rebuild has the same digest, or what differs and why.

Edge module. The .buildinfo is a path or a URL (http(s):// or file://; a URL the site mirrors
is read from the mirror). Its pins (source commit, submodules, patches) must be the recipe's:
otherwise nothing is built and the message lists each difference. Its Installed-Build-Depends
are made to hold in a rootfs environment: the rebuild runs in its own copy-on-write view of
the root (environments/rebuild_view.py) with `pkg=version` installed for each recorded version
the root's apt can find, the nearest where it cannot; the shared root is never written.
Each recorded version the rebuild could not have is named with the one used instead, and the
verdict says so; where no view can be made (not root, no rootfs) the build dependencies are
not made to match, and the message and the verdict say that. The rebuild is rebuild-check's
second build (a fresh tree, its own empty ccache); the .deb files beside the .buildinfo, when
they are there, say why a package differs.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xdnaforge.config.project import Project
from xdnaforge.debs.compare import Cause, compare_package
from xdnaforge.debs.debfile import DebError, read_deb
from xdnaforge.environments import rebuild_view
from xdnaforge.environments.local import read_env_record
from xdnaforge.environments.rebuild_view import nearest
from xdnaforge.errors import StageFailed, UsageError
from xdnaforge.planning.plan import Plan
from xdnaforge.process.run import CommandFailed, run
from xdnaforge.process.sandbox import PATH_INSIDE, WORK_INSIDE, admin_argv
from xdnaforge.stages import buildinfo as stage_buildinfo
from xdnaforge.stages.rebuild import StageBody, _causes, _second_build, second_workspace
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


@dataclasses.dataclass
class Matched:
    """How the rebuild's build dependencies were made to match the .buildinfo's."""

    differences: list[dict[str, str]]
    view: rebuild_view.View | None = None  # the rebuild's own view of the root
    not_matched: str | None = None  # why they were not made to match


def _environment_said(environment: list[dict[str, str]], how: Matched | None = None) -> str:
    """The verdict's half about the environment: the recorded one, or how it differed."""
    used = ", ".join(f"{e['package']} {e['used']} for {e['recorded']}" for e in environment)
    if how is not None and how.view is not None:
        name = how.view.spec.name
        if not environment:
            return (
                "; in an environment with the recorded build dependencies (installed into the "
                f"rebuild's own view of {name})"
            )
        return (
            f"; the recorded build dependencies were installed into the rebuild's own view of "
            f"{name} but for {len(environment)} package(s) that could not be had (built with "
            f"{used})"
        )
    if not environment:
        return "; in an environment with the recorded build dependencies"
    said = f"; the environment differed in {len(environment)} package(s) (built with {used})"
    if how is not None and how.not_matched:
        return f"; the build dependencies were not made to match ({how.not_matched}){said}"
    return said


def match_environment(
    project: Project, plan: Plan, space: Workspace, info: buildinfo.BuildInfo, source: str
) -> Matched:
    """The rebuild's own view of a rootfs environment with the recorded versions installed;
    where none can be made, today's environment and why (the shared root is never written)."""
    installed = stage_buildinfo.installed(plan, space)
    changed = [n for n, v in info.installed_build_depends if installed.get(n) != v]
    spec = plan.environment
    if not changed:
        return Matched([])
    status = stage_buildinfo.environment_status(space, spec.name) if spec else None
    bwrap = shutil.which("bwrap")
    why: str | None = None
    if spec is None or spec.kind != "rootfs":
        why = "the build runs on the host or in an image, whose packages are not changed"
    elif status is None or bwrap is None:
        why = f"environment {spec.name} has no root here" if bwrap else "bwrap is not installed"
    else:
        shared = status.parents[3]
        base = second_workspace(project, plan.target).build_dir / "envs" / spec.name
        try:
            view = rebuild_view.open_view(spec, shared, base, bwrap)
        except rebuild_view.ViewRefused as refused:
            why = str(refused)
        else:
            try:
                return _fill(project, info, view, installed, changed)
            except BaseException:
                view.close()
                raise
    print(f"  environment: the build dependencies are not made to match: {why}")
    if os.geteuid() != 0 and spec is not None and spec.kind == "rootfs":
        print(
            "  environment: to build with them: sudo .venv/bin/doit rebuild-check "
            f"--target {plan.target} --buildinfo {source}"
        )
    return Matched(
        environment_differences(info, installed, offered_versions(plan, space, changed)),
        not_matched=why,
    )


def _fill(
    project: Project,
    info: buildinfo.BuildInfo,
    view: rebuild_view.View,
    installed: dict[str, str],
    changed: list[str],
) -> Matched:
    print(
        f"  environment: the rebuild gets its own copy-on-write view of {view.spec.name} "
        f"({view.root}); the shared root is not changed"
    )
    stale = view.update()
    if stale:
        print(f"  environment: {stale}; the root's own package lists are used")
    choices = rebuild_view.choose(info.installed_build_depends, installed, view.offered(changed))
    wanted = [(c.package, c.version) for c in choices if c.version is not None]
    for choice in choices:
        print(f"  environment: {choice.package} {choice.recorded}: {choice.note}")
    failed = view.install(wanted)
    view.write_record(read_env_record(project.site, view.spec) or {})
    found = rebuild_view.differences(
        info.installed_build_depends, view.installed(), choices, failed
    )
    return Matched(found, view=view)


def _in_view(
    body: Callable[[str, Plan], StageBody], build_dir: Path
) -> Callable[[str, Plan], StageBody]:
    """The stage bodies with the site's environments looked up under `build_dir` (where the
    view is), so every step of the second build runs in the view."""

    def chosen(name: str, plan: Plan) -> StageBody:
        inner = body(name, plan)

        def in_view(project: Project, second: Plan, space: Workspace) -> None:
            site = dataclasses.replace(project.site, build_dir=build_dir)
            inner(dataclasses.replace(project, site=site), second, space)

        return in_view

    return chosen


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
    matched = match_environment(project, plan, space, info, source)
    environment = matched.differences
    for difference in environment:
        print(f"  environment: {difference['note']}")
    try:
        if matched.view is not None:
            body = _in_view(body, matched.view.base.parents[1])
        other, ccache = _second_build(project, plan, body)
    finally:
        stuck = matched.view.close() if matched.view is not None else []
    for point in stuck:
        print(f"  environment: the view's {point} would not unmount; unmount it by hand")
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
            + _environment_said(environment, matched),
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
