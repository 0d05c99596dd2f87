"""The package stage: collect the .deb files the build steps made (or a vendor's), read their
control data, resolve files that carry one Package name, publish them with packages.json.

Edge module. Which files to collect (`packages` globs, `produces`, `choose`) is this stage's
input, not the compile's: correcting a glob re-collects in seconds and recompiles nothing.
Each built file is published normalised (debs/normalize.py: member order, owners, modes,
mtimes clamped to the build's SOURCE_DATE_EPOCH), since CPack leaves those to chance; a
vendor's file is published as it is (its digest is pinned).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xdnaforge.config.project import Project
from xdnaforge.config.recipe import BuildStep, Recipe
from xdnaforge.debs.debfile import DebContents, DebError, read_deb
from xdnaforge.debs.normalize import NormalizeError, normalize
from xdnaforge.debs.rules import wants_text
from xdnaforge.debs.verdicts import shown
from xdnaforge.errors import StageFailed
from xdnaforge.planning.plan import Plan
from xdnaforge.stages import buildinfo as stage_buildinfo
from xdnaforge.state import storage
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_record


def recipe_record(recipe: Recipe) -> dict[str, str]:
    """The recipe a record was made from: the report shows this, not a stale lock.json's."""
    return {"name": recipe.name, "origin": recipe.origin, "sha256": recipe.digest}


def _entry(deb: DebContents, path: Path, step: str) -> dict[str, Any]:
    """One packages.json entry: what the control file says, not what the file name says."""
    return {
        "file": f"debs/{Path(deb.file).name}",
        "package": deb.package,
        "version": deb.control.get("Version", ""),
        "architecture": deb.control.get("Architecture", ""),
        "size": deb.size,
        "sha256": deb.sha256,
        "step": step,
        "source": str(path),
    }


def _publish(
    plan: Plan,
    space: Workspace,
    files: list[Path],
    entries: list[dict[str, Any]],
    left_out: list[dict[str, str]],
) -> None:
    """Swap the packages in, then write packages.json: the stage's last act."""
    stage = plan.stage("package")
    _replace_packages(space, files)
    body: dict[str, Any] = {
        "target": plan.target,
        "recipe": recipe_record(plan.recipe),
        "packages": entries,
        "left_out": left_out,
        "fingerprints": {"package": stage.fingerprint},
        "inputs": {"package": stage.inputs},
    }
    # beside the packages, in Debian's format: what they were built from and with
    made = stage_buildinfo.write(plan, space, body)
    body["buildinfo"] = f"debs/{made.name}" if made is not None else None
    write_record(space.record("packages"), "packages", body)
    for entry in entries:
        print(
            f"  {shown(entry['package'])} {shown(entry['version'])} "
            f"{shown(entry['architecture'])} {entry['size']} bytes  {shown(entry['file'])}"
        )
    for item in left_out:
        print(
            f"  left out {shown(item['file'])} ({shown(item['package'])}): {shown(item['reason'])}"
        )
    sys.stdout.flush()


def _replace_packages(space: Workspace, files: list[Path]) -> None:
    """Copy into a new directory, then swap: a failure leaves the previous packages in place."""
    staging = space.packages.with_name("debs.new")
    if staging.exists():
        shutil.rmtree(staging)
    # the one place where the space needed is known: say it before copying half of them
    storage.require_space(space.records, files)
    staging.mkdir(parents=True)
    for path in files:
        shutil.copy2(path, staging / path.name)
    if space.packages.exists():
        retired = space.packages.with_name("debs.old")
        if retired.exists():
            shutil.rmtree(retired)
        space.packages.rename(retired)
        staging.rename(space.packages)
        shutil.rmtree(retired)
    else:
        staging.rename(space.packages)


def _build_log(space: Workspace, step: BuildStep) -> str:
    record = read_record(space.record("build")) or {}
    attempts = record.get("steps", {}).get(step.name, {}).get("attempts") or [{}]
    return str(attempts[-1].get("log") or space.logs / f"build-{step.name}.log")


def _collect(space: Workspace, step: BuildStep) -> list[Path]:
    cwd = space.source_tree / step.cwd
    found = sorted({p for pattern in step.packages for p in cwd.glob(pattern)})
    if not found:
        raise StageFailed(
            f"build step {step.name} made no file matching {', '.join(step.packages)} in {cwd}",
            hint=f"see {_build_log(space, step)}; correct build.steps[{step.name}].packages "
            f"({step.origin}): a change there re-collects without recompiling",
        )
    return found


def _choose(
    space: Workspace, steps: dict[str, BuildStep], package: str, files: list[tuple[Path, str]]
) -> tuple[Path | None, str]:
    """The file to take for `package` (None: an error, with the reason)."""
    rules = {name: dict(steps[name].choose).get(package) for _, name in files}
    wanted = {(name, glob) for name, glob in rules.items() if glob is not None}
    if not wanted:
        return (files[0][0], "") if len(files) == 1 else (None, "")
    chosen = set()
    for name, glob in wanted:
        chosen |= set((space.source_tree / steps[name].cwd).glob(glob))
    matches = [path for path, _ in files if path in chosen]
    rule = "; ".join(f"build.steps[{n}].choose.{package}: {g}" for n, g in sorted(wanted))
    if len(matches) == 1:
        return matches[0], rule
    names = ", ".join(path.name for path, _ in files)
    return None, f"{rule} matches {len(matches)} of the files carrying it ({names}), not one"


def _suggestion(
    space: Workspace, steps: dict[str, BuildStep], package: str, files: list[tuple[Path, str]]
) -> str:
    step = steps[files[0][1]]
    cwd = space.source_tree / step.cwd
    options = " or ".join(f'"{path.relative_to(cwd)}"' for path, name in files if name == step.name)
    return (
        f"say which file to take in {step.origin.rsplit(':', 1)[0]}: under build.steps "
        f"[{step.name}] add `choose: {{{package}: <glob>}}` with one of {options} "
        "(dpkg cannot install two packages of one name)"
    )


def package(project: Project, plan: Plan, space: Workspace) -> None:
    """Collect each step's .deb files, read their control data, compare with the recipe."""
    del project
    steps = {step.name: step for step in plan.recipe.steps}
    by_name: dict[str, list[tuple[Path, str]]] = {}
    debs: dict[Path, DebContents] = {}
    for step in plan.recipe.steps:
        for path in _collect(space, step):
            try:
                debs[path] = read_deb(path, wants_text)
            except DebError as error:
                raise StageFailed(f"package: {error.message}") from None
            by_name.setdefault(debs[path].package, []).append((path, step.name))
    taken: list[tuple[Path, str]] = []
    left_out: list[dict[str, str]] = []
    doubled: list[str] = []
    hints: list[str] = []
    for name, files in sorted(by_name.items()):
        chosen, rule = _choose(space, steps, name, files)
        if chosen is None and rule:
            doubled.append(rule)  # the recipe's choice matches none, or several, of the files
        elif chosen is None:
            doubled.append(f"more than one file for {name} ({', '.join(p.name for p, _ in files)})")
            hints.append(_suggestion(space, steps, name, files))
        if chosen is None:
            continue
        taken.extend((p, s) for p, s in files if p == chosen)
        left_out.extend(
            {"file": str(p), "package": name, "step": s, "reason": f"not chosen ({rule})"}
            for p, s in files
            if p != chosen
        )
    expected = set(plan.recipe.produced_packages())
    missing = sorted(expected - set(by_name))
    unexpected = sorted(set(by_name) - expected)
    if missing or unexpected or doubled:
        problems = []
        if missing:
            problems.append(f"missing {', '.join(missing)}")
            problems.extend(_why_missing(space, plan.recipe, missing, debs))
        if unexpected:
            problems.append(f"unexpected {', '.join(unexpected)}")
        problems.extend(doubled)
        raise StageFailed(
            f"the built packages are not the set the recipe expects: {'; '.join(problems)}",
            hint="\n".join(
                [
                    *hints,
                    "file names are not a contract: the Package fields were compared; adjust "
                    "build.steps[].produces or packages in the recipe if upstream changed them",
                ]
            ),
        )
    epoch = _epoch(space)
    published: list[Path] = []
    entries = []
    for path, made_by in taken:
        normal, changes = _normalized(space, path, epoch)
        try:
            deb = read_deb(normal, wants_text)
        except DebError as error:
            raise StageFailed(f"package: {error.message}") from None
        entry = _entry(deb, path, made_by)
        entry["normalized"] = {
            "epoch": epoch,
            "built_sha256": debs[path].sha256,
            "changes": list(changes),
        }
        entries.append(entry)
        published.append(normal)
    _publish(plan, space, published, entries, left_out)


def _epoch(space: Workspace) -> int:
    """The SOURCE_DATE_EPOCH the build steps ran with (build.json)."""
    steps = (read_record(space.record("build")) or {}).get("steps", {})
    for step in steps.values():
        value = step.get("environment", {}).get("SOURCE_DATE_EPOCH", "")
        if str(value).isdigit():
            return int(value)
    raise StageFailed(
        "package: build.json records no SOURCE_DATE_EPOCH to clamp the packages' mtimes to",
        hint=f"rebuild: doit build --target {space.target}",
    )


def _normalized(space: Workspace, path: Path, epoch: int) -> tuple[Path, tuple[str, ...]]:
    """`path` rewritten in the normal form under build/<target>/normalized/; what changed."""
    try:
        done = normalize(path.read_bytes(), epoch)
    except NormalizeError as error:
        raise StageFailed(
            f"package: {path}: {error}",
            hint="the file is not a .deb xdnaforge can normalise; see the build log",
        ) from None
    except OSError as error:
        raise StageFailed(f"package: cannot read {path}: {error.strerror}") from None
    folder = space.work / "normalized"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / path.name
    target.write_bytes(done.data)
    return target, done.changes


def _why_missing(
    space: Workspace, recipe: Recipe, missing: list[str], debs: dict[Path, DebContents]
) -> list[str]:
    """For each missing package: the step that should make it, what its globs collected, and
    the .deb files the step's tree holds that no glob collected (with their Package)."""
    lines = []
    for name in missing:
        for step in (s for s in recipe.steps if name in s.produces):
            cwd = space.source_tree / step.cwd
            collected = sorted(str(p.relative_to(cwd)) for p in debs if p.is_relative_to(cwd))
            others = sorted(
                str(path.relative_to(cwd))
                for path in cwd.rglob("*.deb")
                if path not in debs and "_CPack_Packages" not in path.parts
            )
            lines.append(
                f"{name}: build.steps[{step.name}].packages ({', '.join(step.packages)}) "
                f"collected {', '.join(collected) or 'nothing'}, none of them {name}; "
                + (
                    f"built but not collected: {', '.join(others)}"
                    if others
                    else "the step's tree holds no other .deb file"
                )
            )
    return lines


def _vendor_file(folders: Sequence[Path], name: str) -> Path | None:
    """The vendor file `name` in the first folder that has it; a name with a wildcard (a
    bundle's release-numbered plugin whose exact name is not known yet) must match one file."""
    for folder in folders:
        if not any(c in name for c in "*?["):
            if (folder / name).is_file():
                return folder / name
            continue
        matches = sorted(p for p in folder.glob(name) if p.is_file())
        if len(matches) > 1:
            raise StageFailed(
                f"{name} matches {len(matches)} files in {folder}: "
                f"{', '.join(m.name for m in matches)}",
                hint="name the bundle's file exactly in the recipe",
            )
        if matches:
            return matches[0]
    return None


def collect_prebuilt(project: Project, plan: Plan, space: Workspace) -> None:
    """The package stage of a prebuilt recipe: the vendor's files, each at its pinned sha256."""
    folders = project.site.vendor_dirs
    found: list[Path] = []
    entries = []
    for item in plan.recipe.prebuilt:
        path = _vendor_file(folders, item.file)
        if path is None:
            raise StageFailed(
                f"{item.file} is not in {', '.join(str(f) for f in folders)}",
                hint="put the vendor bundle's .deb files there, or name their folder in "
                "site.yaml (vendor_dirs)",
            )
        try:
            deb = read_deb(path, wants_text)
        except DebError as error:
            raise StageFailed(f"package: {error.message}") from None
        if item.sha256 != deb.sha256:
            pinned = (
                "does not pin its sha256 yet"
                if item.sha256 == "unpinned"
                else f"pins {item.sha256}"
            )
            raise StageFailed(
                f"{item.file} has sha256 {deb.sha256}; the recipe {pinned}",
                hint="compare the digest with the vendor's published checksums; pin it in "
                f"{plan.recipe.origin.rsplit(':', 1)[0]} only if they agree",
            )
        if deb.package != item.package:
            raise StageFailed(
                f"{item.file} is package {deb.package}, the recipe says {item.package}"
            )
        found.append(path)
        entries.append(_entry(deb, path, "prebuilt"))
    # every file matched its pinned sha256 above
    _publish(plan, space, found, entries, [])
