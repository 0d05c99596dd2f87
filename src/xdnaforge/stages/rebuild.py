"""`doit rebuild-check`: build a target a second time in a fresh tree at another path and
compare the packages with the recorded build; rebuild.json and the report say the verdict.

Edge module: runs the same stage bodies on a second workspace (build/rebuild/), reads both
builds' .deb files, runs diffoscope when it is installed. The recorded build is not touched.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xdnaforge.config.project import Project
from xdnaforge.debs.compare import compare_builds, summary
from xdnaforge.debs.debfile import DebContents, DebError, read_deb
from xdnaforge.errors import StageFailed
from xdnaforge.planning.plan import Plan, plan_target
from xdnaforge.process.run import CommandFailed, run
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


def rebuild_check(
    project: Project, plan: Plan, space: Workspace, body: Callable[[str, Plan], StageBody]
) -> None:
    recorded = read_record(space.record("packages"))
    if recorded is None or recorded.get("fingerprints", {}).get("package") != plan.fingerprint:
        raise StageFailed(
            f"rebuild-check {plan.target}: no up-to-date build to compare with",
            hint=f"run `doit build --target {plan.target}` first",
        )
    other = second_workspace(project, plan.target)
    for stale in (other.work, other.records):
        if stale.exists():
            shutil.rmtree(stale)
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
            body(stage.name, second)(project, second, other)
    rebuilt = read_record(other.record("packages")) or {}
    comparisons = compare_builds(_read(space, recorded), _read(other, rebuilt))
    reproducible, count = summary(comparisons)
    files = {e["package"]: e["file"] for e in recorded.get("packages", [])}
    again = {e["package"]: e["file"] for e in rebuilt.get("packages", [])}
    packages = []
    for item in comparisons:
        diff = None
        if not item.identical and item.package in again:
            diff = _diffoscope(
                space.records / files[item.package],
                other.records / again[item.package],
                space.logs / f"diffoscope-{item.package}.txt",
            )
        packages.append(
            {
                "package": item.package,
                "identical": item.identical,
                "first_sha256": item.first_sha256,
                "second_sha256": item.second_sha256,
                "differing": list(item.differing),
                "diffoscope": diff,
            }
        )
    write_record(
        space.record("rebuild"),
        "rebuild",
        {
            "target": plan.target,
            "fingerprint": plan.fingerprint,
            "second_build": str(other.work),
            "reproducible": reproducible,
            "differing_files": count,
            "method": "diffoscope" if shutil.which("diffoscope") else "per-file sha256 of data",
            "packages": packages,
        },
    )
    write_report(plan.target, space)
    print(f"reproducible: {'yes' if reproducible else f'no ({count} files)'}")
    for item in comparisons:
        for path in item.differing:
            print(f"  {item.package}: {path}")
