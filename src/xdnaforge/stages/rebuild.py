"""`doit rebuild-check`: build a target a second time in a fresh tree at another path and
compare the packages with the recorded build; rebuild.json and the report say the verdict.

Edge module: runs the same stage bodies on a second workspace (build/rebuild/) with its own
empty ccache (a build fed by the first one's cache is not independent), reads both builds'
.deb files, says per differing file why it differs (rebuild.explain), and runs diffoscope
when it is installed. The recorded build is not touched.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xdnaforge.config.project import Project
from xdnaforge.debs.compare import (
    ARCHIVE_ONLY,
    Cause,
    PackageComparison,
    compare_builds,
    explain,
    summary,
)
from xdnaforge.debs.debfile import DebContents, DebError, read_deb
from xdnaforge.debs.normalize import NormalizeError, data_files
from xdnaforge.errors import StageFailed
from xdnaforge.planning.plan import Plan, plan_target
from xdnaforge.process.run import CommandFailed, run
from xdnaforge.process.sandbox import WORK_INSIDE
from xdnaforge.stages.report import write_report
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_record

StageBody = Callable[[Project, Plan, Workspace], None]
SKIPPED = ("audit", "report")  # the comparison is about the packages, not their verdicts


def second_workspace(project: Project, target: str) -> Workspace:
    """A fresh build tree at another path: build/rebuild/<target>."""
    base = project.site.build_dir / "rebuild"
    return Workspace(target, base, base / "artifacts")


def _read(space: Workspace, record: dict[str, Any]) -> dict[str, DebContents]:
    found = {}
    for entry in record.get("packages", []):
        path = space.records / entry["file"]
        try:
            found[entry["package"]] = read_deb(path, digests=True)
        except DebError as error:
            raise StageFailed(f"rebuild-check: {error.message}") from None
    return found


def _diffoscope(first: Path, second: Path, out: Path) -> str | None:
    """diffoscope's text report when it is installed (it exits 1 when files differ)."""
    tool = shutil.which("diffoscope")
    if tool is None:
        return None
    try:
        run(
            [tool, "--text", str(out), str(first), str(second)],
            cwd=out.parent,
            timeout=1800,
            ok_codes=(0, 1),
        )
    except CommandFailed:
        return None
    return str(out)


def _causes(
    item: PackageComparison, first: Path, second: Path | None, trees: list[str]
) -> list[Cause]:
    """Why each differing entry of a package differs."""
    if second is None:
        return [Cause("(package)", "only in one build", "the second build did not make it")]
    causes = []
    wanted = {p for p in item.differing if not p.startswith(("control:", "("))}
    try:
        a = data_files(first.read_bytes(), wanted)
        b = data_files(second.read_bytes(), wanted)
    except (OSError, NormalizeError) as error:
        raise StageFailed(f"rebuild-check: cannot read the packages: {error}") from None
    for path in item.differing:
        if path == ARCHIVE_ONLY:
            causes.append(
                Cause("(archive)", "archive metadata", "member order, mtimes, owners or modes")
            )
        elif path.startswith("control:"):
            causes.append(Cause(path, "control field", f"{path[8:]} differs"))
        elif path not in a and path not in b:
            causes.append(Cause(path, "archive metadata", "a link or directory entry differs"))
        else:
            causes.append(explain(path, a.get(path), b.get(path), trees))
    return causes


def _second_build(
    project: Project, plan: Plan, body: Callable[[str, Plan], StageBody]
) -> tuple[Workspace, Path]:
    """Every stage but audit and report in a fresh tree at build/rebuild/<target>, with its
    own empty ccache; returns that workspace and the ccache."""
    other = second_workspace(project, plan.target)
    for stale in (other.work, other.records):
        if stale.exists():
            shutil.rmtree(stale)
    # its own ccache, empty: hits from the first build's cache would make it a copy
    ccache = other.work / "ccache"
    ccache.mkdir(parents=True)
    independent = dataclasses.replace(
        project, site=dataclasses.replace(project.site, ccache_dir=ccache)
    )
    second = plan_target(
        plan.recipe,
        plan.patches,
        other,
        distro=plan.distro,
        toolchain=dict(plan.toolchain),
        host=plan.host,
        environment=plan.environment,
    )
    print(f"rebuild-check {plan.target}: second build in {other.work}")
    for stage in second.pipeline():
        if stage.name not in SKIPPED:
            print(f"{stage.name} {plan.target} (second build)", flush=True)
            body(stage.name, second)(independent, second, other)
    return other, ccache


def rebuild_check(
    project: Project, plan: Plan, space: Workspace, body: Callable[[str, Plan], StageBody]
) -> None:
    recorded = read_record(space.record("packages"))
    if recorded is None or recorded.get("fingerprints", {}).get("package") != plan.fingerprint:
        raise StageFailed(
            f"rebuild-check {plan.target}: no up-to-date build to compare with",
            hint=f"run `doit build --target {plan.target}` first",
        )
    other, ccache = _second_build(project, plan, body)
    rebuilt = read_record(other.record("packages")) or {}
    comparisons = compare_builds(_read(space, recorded), _read(other, rebuilt))
    reproducible, count = summary(comparisons)
    files = {e["package"]: e["file"] for e in recorded.get("packages", [])}
    again = {e["package"]: e["file"] for e in rebuilt.get("packages", [])}
    trees = [str(space.work.resolve()), str(other.work.resolve()), str(WORK_INSIDE)]
    tree_inside = _tree_inside(space, other)
    packages = []
    explained: dict[str, list[Cause]] = {}
    for item in comparisons:
        diff = None
        causes: list[Cause] = []
        if not item.identical:
            second_file = other.records / again[item.package] if item.package in again else None
            causes = _causes(item, space.records / files[item.package], second_file, trees)
            if second_file is not None:
                diff = _diffoscope(
                    space.records / files[item.package],
                    second_file,
                    space.logs / f"diffoscope-{item.package}.txt",
                )
        explained[item.package] = causes
        packages.append(
            {
                "package": item.package,
                "file": files[item.package],
                "identical": item.identical,
                "first_sha256": item.first_sha256,
                "second_sha256": item.second_sha256,
                "differing": list(item.differing),
                "causes": [dataclasses.asdict(c) for c in causes],
                "diffoscope": diff,
            }
        )
    tools = "diffoscope text reports and " if shutil.which("diffoscope") else ""
    write_record(
        space.record("rebuild"),
        "rebuild",
        {
            "target": plan.target,
            "fingerprint": plan.fingerprint,
            "first_build": str(space.work),
            "second_build": str(other.work),
            # where each build saw its tree: one canonical path makes paths alike
            "tree_inside": tree_inside,
            "second_ccache": f"{ccache} (empty at the start)",
            "reproducible": reproducible,
            "differing_files": count,
            "compared": f"the {len(comparisons)} published .deb files of both builds",
            "method": "sha256 of each .deb; for a differing one, the sha256 of every data "
            f"file and the control fields, each difference explained by {tools}xdnaforge's "
            "classification (build date, embedded path, RUNPATH, ordering, archive metadata, "
            "content)",
            "packages": packages,
        },
    )
    write_report(plan.target, space)
    print(f"reproducible: {'yes' if reproducible else f'no ({count} files)'}")
    for package, causes in explained.items():
        for cause in causes:
            print(f"  {package}: {cause.path}: {cause.cause}: {cause.detail}")


def _tree_inside(space: Workspace, other: Workspace) -> dict[str, str]:
    """Where each build's steps saw their tree (build.json), e.g. both /xdnaforge/work."""
    found = {}
    for name, where in (("first", space), ("second", other)):
        steps = (read_record(where.record("build")) or {}).get("steps", {})
        seen = {str(s.get("tree", {}).get("inside", s.get("cwd", "?"))) for s in steps.values()}
        found[name] = ", ".join(sorted(seen)) or "?"
    return found
