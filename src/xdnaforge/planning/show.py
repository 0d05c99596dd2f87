"""Text rendering of the project summary and of a target's plan; pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from xdnaforge.config.matrix import Cell
from xdnaforge.config.project import Project
from xdnaforge.host import HostFacts
from xdnaforge.planning.plan import Plan


def format_check(project: Project) -> str:
    cells = project.cells()
    patches = sum(len(s.patches) for s in project.patch_sets.values())
    lines = [
        f"recipes: {', '.join(sorted(project.recipes)) or 'none'}",
        f"matrices: {len(project.matrices)} ({len(cells)} cells)",
        f"patch sets: {len(project.patch_sets)} ({patches} patches)",
        f"site: {project.site.origin}",
        "all valid",
    ]
    return "\n".join(lines)


def format_cells(cells: Sequence[Cell]) -> str:
    return "\n".join(
        f"  {c.name}: {c.distro_id} {c.distro_version}, kernel {c.kernel.text}, NPU {c.npu.pci}"
        f"{' rev ' + c.npu.revision if c.npu.revision else ''} -> {c.recipe} ({c.expect})"
        for c in cells
    )


def _nested(plan: Plan, lock: Mapping[str, Any] | None) -> list[str]:
    """The repositories the fetch checks out that the recipe does not pin itself."""
    if lock is None:
        return [
            "    nested submodules: as their parents record them (listed after the first fetch)"
        ]
    current = lock.get("fingerprints", {}).get("fetch") == plan.stage("fetch").fingerprint
    origin = "lock.json" if current else "lock.json of an earlier fetch; the pins changed since"
    return [
        f"    {repo['path']} @ {repo['resolved']} (recorded by its parent; from {origin})"
        for repo in lock.get("repositories", [])
        if not repo.get("pinned")
    ]


def format_plan(
    plan: Plan,
    statuses: Sequence[tuple[bool, str]],
    host: HostFacts,
    cells: Sequence[Cell],
    root: Path,
    lock: Mapping[str, Any] | None = None,
) -> str:
    """`lock`: the lock record, whose nested repositories are shown with the recipe's pins."""

    def short(text: str) -> str:
        """Paths under the project root are shown relative to it."""
        return text.removeprefix(f"{root}/")

    recipe = plan.recipe
    source = recipe.source
    lines = [f"target {plan.target}  ({recipe.origin})", f"  {recipe.description.strip()}"]
    npus = ", ".join(
        f"{n.pci}{' rev ' + n.revision if n.revision else ''}" for n in recipe.hosts.npus
    )
    lines.append(
        f"  for: {recipe.hosts.distro_id} {recipe.hosts.distro_version}, "
        f"kernel {recipe.hosts.kernel.text}, NPU {npus}"
    )
    lines.append(f"  this host: {host.describe()}")
    spec = plan.environment
    if spec is not None:
        lines.append(f"  builds in: {spec.describe()}")
        lines.append(f"    why: {spec.reason}")
        if spec.twin:
            lines.append(
                "    a twin: its packages are for proofs only and are never offered for "
                "installation"
            )
    for cell in cells:
        reason = f": {cell.reason.strip()}" if cell.reason else ""
        lines.append(f"  matrix cell {cell.name}: {cell.expectation()}{reason}")
    if recipe.distro is not None:
        stack = recipe.distro
        lines += ["", f"the distribution's packages (nothing to build): {stack.sources_line()}"]
        lines.extend(f"  {p.package} {p.version} sha256 {p.sha256}" for p in stack.packages)
        lines.extend(f"  left out: {p.package}: {p.reason.strip()}" for p in stack.left_out)
    elif source is None:
        lines += ["", "prebuilt packages (nothing to build)"]
        lines.extend(f"  {p.package}: {p.file} sha256 {p.sha256}" for p in recipe.prebuilt)
    else:
        lines += ["", "sources"]
        ref = f" ({source.ref})" if source.ref else ""
        lines.append(f"  {source.name}: {source.url} @ {source.commit}{ref}")
        for sub in source.submodules:
            ref = f" ({sub.ref})" if sub.ref else ""
            lines.append(f"    {sub.path} @ {sub.commit}{ref}")
        lines.extend(_nested(plan, lock))
        for unused in source.unused_submodules:
            lines.append(f"    {unused.path}: not checked out ({unused.reason.strip()})")
    if plan.patches:
        lines += ["", "patches"]
        for patch in plan.patches:
            detail = f" [{patch.header.status_detail}]" if patch.header.status_detail else ""
            lines.append(
                f"  {patch.set}/{patch.file} -> {patch.header.repository}: "
                f"{patch.header.status}{detail}"
            )
    lines += ["", "stages"]
    for number, (stage, (_, why)) in enumerate(zip(plan.stages, statuses, strict=True), 1):
        when = " (on request)" if stage.on_request else ""
        lines.append(f"  {number}. {stage.name}{when}: {why}")
        lines.append(f"     {stage.title}")
        for item in stage.consumes:
            lines.append(f"     consumes: {short(item)}")
        for item in stage.produces:
            lines.append(f"     produces: {short(item)}")
        lines.append(f"     fingerprint: {stage.fingerprint[:16]}")
    lines += [
        "",
        f"input fingerprint: {plan.fingerprint}",
        "nothing was run; nothing on disk changed",
    ]
    return "\n".join(lines)
