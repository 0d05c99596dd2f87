"""The `doit track` command: a candidate recipe for an upstream line, from the caches.

Edge module. Resolves a branch, tag or commit of xdna-driver in the object cache and
mirrors (offline works from local mirrors), reads its XRT gitlink and every nested one,
the pinned dependency scripts, the firmware manifest and the build scripts, and writes
`recipes/<line>.yaml` (carried from the nearest recipe of the same family), an
`expect: unverified` matrix cell and `artifacts/<line>/track.json`; prints what changed.
When every commit the build needs is in some mirror it fetches the tree and surveys it.
`--check` changes nothing: it fails (exit 1) when the line's branch moved past the pin.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

from xdnaforge.compat.contracts import check_contract
from xdnaforge.compat.facts import load_upstream
from xdnaforge.config.project import Project, load_project
from xdnaforge.config.recipe import Recipe
from xdnaforge.config.site import Site
from xdnaforge.errors import ConfigError, StageFailed, UsageError
from xdnaforge.host import HostFacts
from xdnaforge.planning import linefacts
from xdnaforge.planning.candidate import (
    Provenance,
    TreeFacts,
    apt_installs,
    candidate_document,
    candidate_header,
    carry_depends,
    compare,
    debian_packages,
    known_device,
    matrix_cell,
    refused_options,
    released_firmware,
    script_options,
    xrt_line,
    xrt_version,
)
from xdnaforge.sources import lines
from xdnaforge.stages.track_cell import append_cell, cell_for, cell_name
from xdnaforge.stages.track_survey import fetch_and_survey, restamp_survey
from xdnaforge.state.lockfile import build_dir_lock
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import write_atomic, write_record
from xdnaforge.tools.git import Gitlink, cache_name, normalize_url

XRTDEPS = "src/runtime_src/tools/scripts/xrtdeps.sh"
DRIVER_DEPS = "tools/amdxdna_deps.sh"
PCI_DRV = "src/driver/amdxdna/amdxdna_pci_drv.c"


@dataclass(frozen=True, slots=True, kw_only=True)
class Ref:
    branch: str
    tag: str
    commit: str

    def given(self) -> bool:
        return bool(self.branch or self.tag or self.commit)


def _workspace(project: Project, line: str) -> Workspace:
    return Workspace(line, project.site.build_dir, project.site.artifacts_dir)


def _origin_path(project: Project, recipe: Recipe) -> Path:
    return project.root / recipe.origin.rsplit(":", 1)[0]


def _in_tree(links: tuple[Gitlink, ...], path: str) -> tuple[str, str]:
    """(repository path, path inside it) of a file of the checked-out tree."""
    best = "."
    for link in links:
        if (path == link.path or path.startswith(f"{link.path}/")) and len(link.path) > len(best):
            best = link.path
    return best, path if best == "." else path[len(best) + 1 :]


def tree_facts(
    site: Site, recipe: Recipe, url: str, commit: str, cache: Path, log: Path
) -> TreeFacts:
    """What the tree at `commit` says: gitlinks, XRT version, dependency lists, firmware,
    the options each of `recipe`'s build steps' scripts accepts."""
    links = tuple(lines.walk(site, url, commit, cache, log))
    caches = {".": cache} | {g.path: site.cache_dir / cache_name(g.url) for g in links}
    commits = {".": commit} | {g.path: g.commit for g in links}
    available = {"."} | {g.path for g in links if g.available}

    def read(path: str) -> str | None:
        repository, inner = _in_tree(links, path)
        if repository not in available:
            return None
        return lines.read_file(caches[repository], commits[repository], inner)

    xrt = next((g for g in links if g.path == "xrt"), None)
    describe = None
    if xrt is not None and xrt.available:
        describe = lines.describe(site, xrt.url, caches["xrt"], xrt.commit, log)
    upstream = debian_packages(read(f"xrt/{XRTDEPS}") or "") + apt_installs(read(DRIVER_DEPS) or "")
    scripts = {
        step.name: read(posixpath.normpath(posixpath.join(step.cwd, step.argv[0])))
        for step in recipe.steps
    }
    version = xrt_version(read("xrt/src/CMake/settings.cmake"))
    whence, info = read("tools/WHENCE"), read("tools/info.json")
    return TreeFacts(
        commit=commit,
        gitlinks=links,
        xrt_describe=xrt_line(describe, version),
        xrt_version=version,
        upstream_depends=tuple(dict.fromkeys(upstream)),
        firmware=released_firmware(whence, info),
        options=script_options(scripts),
        line_xrt_version=linefacts.line_xrt_version(info),
        blobs=linefacts.released_blobs(whence, info),
        devices=linefacts.bound_devices(read(PCI_DRV)),
    )


def _family(project: Project, url: str) -> list[Recipe]:
    wanted = normalize_url(url)
    return [
        r
        for r in project.recipes.values()
        if r.source is not None and normalize_url(r.source.url) == wanted
    ]


def _nearest(
    project: Project, family: list[Recipe], commit: str, cache: Path, line: str, log: Path
) -> Recipe:
    """The recipe of the family whose pin is closest to `commit` (an ancestor first)."""
    ranked = []
    for recipe in family:
        try:
            lines.resolve(project.site, recipe.pinned.url, commit=recipe.pinned.commit, log=log)
        except StageFailed:
            continue  # a pin no mirror holds cannot be compared
        key = lines.distance(cache, recipe.pinned.commit, commit, log)
        ranked.append((key, recipe.name != line, recipe.name, recipe))
    if not ranked:
        raise StageFailed(
            "no recipe of the family has a pin the mirrors hold: nothing to carry from",
            hint="give the recipe to start from with --from",
        )
    return min(ranked, key=lambda item: item[:3])[3]


def _starting_point(
    project: Project, start_from: str, url_hint: str | None
) -> tuple[Recipe | None, str]:
    """The recipe named by --from (or the line itself), and the upstream URL to read."""
    if start_from:
        if start_from not in project.recipes:
            raise UsageError(
                f"--from {start_from}: no such recipe",
                hint=f"recipes: {', '.join(sorted(project.recipes))}",
            )
        chosen = project.recipes[start_from]
        if chosen.source is None:
            raise UsageError(f"--from {start_from}: a prebuilt recipe has no sources to carry")
        return chosen, chosen.source.url
    if url_hint is not None:
        return None, url_hint
    families: dict[str, list[str]] = {}
    for recipe in sorted(project.recipes.values(), key=lambda r: r.name):
        if recipe.source is not None:
            families.setdefault(normalize_url(recipe.source.url), []).append(recipe.name)
    if not families:
        raise UsageError("no source recipe to carry a candidate from")
    if len(families) > 1:
        listed = "; ".join(f"{url}: {', '.join(names)}" for url, names in sorted(families.items()))
        raise UsageError(
            "the recipes follow several upstream repositories; say which family with --from R",
            hint=listed,
        )
    url = next(iter(families))
    first = next(
        r for r in project.recipes.values() if r.source and normalize_url(r.source.url) == url
    )
    return None, first.pinned.url


def check(project: Project, line: str, ref: Ref, log: Path) -> None:
    """`doit track --line L --check`: exit 1 when the line's branch moved past its pin."""
    recipe = project.recipes.get(line)
    if recipe is None or recipe.source is None:
        raise UsageError(
            f"--check needs an existing source recipe recipes/{line}.yaml",
            hint="write it first: doit track --line NAME --branch B",
        )
    if ref.tag or ref.commit:
        raise UsageError("--check follows a branch: give --branch or none (the recipe's track)")
    branch = ref.branch or recipe.source.track or recipe.source.ref
    if not branch:
        raise UsageError(f"{line} names no branch to follow (source.track)", hint="give --branch B")
    tip = lines.branch_tip(project.site, recipe.source.url, branch, log)
    pin = recipe.source.commit
    if tip.commit == pin:
        print(f"{line}: branch {branch} is at the pin {pin} ({tip.fetched_from})")
        return
    how = lines.relation(tip.cache, pin, tip.commit, log)
    raise StageFailed(
        f"{line}: branch {branch} moved past the recipe's pin: {pin} -> {tip.commit} "
        f"({how}; {tip.fetched_from})",
        hint=f"write the candidate: doit track --line {line} --branch {branch}",
    )


def _write_files(files: Mapping[Path, str | None]) -> None:
    for path, text in files.items():
        if text is None:
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, text)


@dataclass(frozen=True, slots=True, kw_only=True)
class Written:
    recipe: Path
    survey: str
    missing: tuple[Gitlink, ...]


def track(
    project: Project,
    line: str,
    ref: Ref,
    start_from: str,
    environ: Mapping[str, str],
    facts: HostFacts,
) -> Written:
    """Write the candidate for `line`; print the changes; survey when the tree can be had
    (on the host `facts` describe, as the command read them)."""
    space = _workspace(project, line)
    log = space.logs / "track.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    existing = project.recipes.get(line)
    if existing is not None and existing.source is None:
        raise UsageError(f"{line} is a prebuilt recipe: there is no upstream line to track")
    if not ref.given():
        follows = (
            existing.source.track or existing.source.ref if existing and existing.source else None
        )
        if not follows:
            raise UsageError("say what to track: --branch B, --tag T or --commit C")
        ref = Ref(branch=follows, tag="", commit="")
    chosen, url = _starting_point(
        project, start_from, existing.pinned.url if existing is not None else None
    )
    new = lines.resolve(
        project.site, url, branch=ref.branch, tag=ref.tag, commit=ref.commit, log=log
    )
    family = _family(project, url)
    first = None if chosen else _first_start(project, existing, new.commit)
    start = (
        chosen or first or existing or _nearest(project, family, new.commit, new.cache, line, log)
    )
    # what is carried: the candidate itself when it is re-tracked at its pin (what a
    # maintainer edited in it stays), else the starting recipe
    base = existing if first is not None and existing is not None else start
    print(
        f"track {line}: {new.how} is {new.commit} ({new.fetched_from}); carried from {start.name}"
    )
    lines.resolve(project.site, url, commit=start.pinned.commit, log=log)
    old_facts = tree_facts(project.site, start, url, start.pinned.commit, new.cache, log)
    new_facts = tree_facts(project.site, start, url, new.commit, new.cache, log)
    start_doc = yaml.safe_load(_origin_path(project, base).read_text(encoding="utf-8"))
    depends, _, _ = carry_depends(
        dict(base.build_depends), old_facts.upstream_depends, new_facts.upstream_depends
    )
    start_unused = [u.path for u in start.pinned.unused_submodules]
    paths = {g.path for g in new_facts.gitlinks}
    new_unused = [u.path for u in base.pinned.unused_submodules if u.path in paths]
    argv = {step.name: step.argv for step in base.steps}
    changes = compare(
        old_facts,
        new_facts,
        ahead=lines.relation(new.cache, start.pinned.commit, new.commit, log),
        depends=(dict(start.build_depends), depends),
        unused=(start_unused, new_unused),
        argv=argv,
    )
    if start.patch_sets:
        changes.add(
            "patches",
            f"{', '.join(start.patch_sets)} not carried: a patch set is proven for its own "
            "line (`doit prove`)",
        )
    changes.add("driver", f"contract carried from {start.name}; check it against the resolver")
    missing = new_facts.missing(new_unused)
    print(f"changes against {start.name}:")
    print(changes.text())
    refused = refused_options(new_facts, argv)
    if refused:
        raise StageFailed(
            f"{line}: the new line's build scripts do not accept what {start.name} passes: "
            f"{'; '.join(refused)}; no candidate written",
            hint="xdnaforge never falls back to a build with the kernel module; pick a line "
            "whose scripts take these options, or start from another recipe with --from",
        )
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    provenance = Provenance(
        line=line,
        how=new.how,
        started_from=start.name,
        when=when,
        xrt_describe=new_facts.xrt_describe,
    )
    branch = ref.branch or (existing.source.track if existing and existing.source else None)
    document = candidate_document(
        start_doc,
        new_facts,
        provenance,
        ref=ref.branch or ref.tag or None,
        track=branch or None,
        depends=depends,
    )
    survey = (
        "could not run: nested commit(s) no local mirror holds ("
        + ", ".join(f"{g.path} {g.commit[:12]}" for g in missing)
        + ")"
        if missing
        else "pending (doit track fetches the tree and surveys it next)"
    )
    recipe_path = project.root / "recipes" / f"{line}.yaml"
    body = yaml.safe_dump(document, sort_keys=False, width=92, allow_unicode=True)
    files: dict[Path, str | None] = {
        recipe_path: _unless_only_dated(
            recipe_path, candidate_header(provenance, changes, survey, missing) + body
        )
    }
    host, matrix_path = cell_for(project, start)
    if not any(c.recipe == line for c in project.cells()):
        cell = matrix_cell(
            name=cell_name(host, line),
            recipe=line,
            host=host,
            provenance=provenance,
            commit=new.commit,
        )
        files[matrix_path] = append_cell(matrix_path, cell)
    before = {p: p.read_text(encoding="utf-8") if p.exists() else None for p in files}
    with build_dir_lock(project.site.build_dir):
        _write_files(files)
        try:
            reloaded = load_project(project.root, environ)
        except ConfigError as error:
            _write_files(before)  # a candidate `doit check` refuses is not left behind
            raise StageFailed(
                f"the candidate for {line} does not pass `doit check`; nothing written:\n{error}"
            ) from None
        outcome = survey
        if not missing:
            outcome = fetch_and_survey(reloaded, line, space, facts)
            files[recipe_path] = _unless_only_dated(
                recipe_path, candidate_header(provenance, changes, outcome, missing) + body
            )
            _write_files({recipe_path: files[recipe_path]})
            restamp_survey(space, recipe_path)
    contract_recipe = reloaded.recipes[line]
    record = {
        "line": line,
        "ref": new.how,
        "commit": new.commit,
        "fetched_from": new.fetched_from,
        "started_from": {"recipe": start.name, "commit": start.pinned.commit},
        "xrt": {
            "describe": new_facts.xrt_describe,
            "version": new_facts.xrt_version,
            "line_version": new_facts.line_xrt_version,
        },
        "gitlinks": [
            {
                "path": g.path,
                "url": g.url,
                "commit": g.commit,
                "available": g.available,
                "fetched_from": g.fetched_from,
                "unused": g.path in new_unused,
            }
            for g in new_facts.gitlinks
        ],
        "missing": [{"path": g.path, "commit": g.commit, "url": g.url} for g in missing],
        "upstream_depends": list(new_facts.upstream_depends),
        "depends": depends,
        "firmware": dict(new_facts.firmware),
        "blobs": dict(new_facts.blobs),
        "pci_ids": {
            "bound": list(new_facts.devices),
            "added": [d for d in new_facts.devices if d not in old_facts.devices],
            "dropped": [d for d in old_facts.devices if d not in new_facts.devices],
            "unknown_to_host_facts": [d for d in new_facts.devices if not known_device(d)],
        },
        "options": {k: sorted(v) if v is not None else None for k, v in new_facts.options.items()},
        "driver": {
            "carried_from": start.name,
            "checked_against_resolver": False,
            "note": "carried unchanged; the compatibility resolver's data must confirm it",
            # what `doit check` already holds it to: the fields compat/ can read (an empty
            # list says none contradicts the facts, not that a host was judged)
            "resolver_problems": [
                f"{'.'.join(map(str, key))}: {message}"
                for key, message in check_contract(contract_recipe, load_upstream())
            ],
        },
        "changes": changes.as_record(),
        "survey": outcome,
        "recipe": str(recipe_path.relative_to(project.root)),
    }
    write_record(space.record("track"), "track", record)
    print(f"wrote {recipe_path.relative_to(project.root)} (unverified); survey: {outcome}")
    return Written(recipe=recipe_path, survey=outcome, missing=missing)


_CARRIED_RE = re.compile(r"^Carried unchanged from recipe (\S+) by `doit track`")
_DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def _first_start(project: Project, existing: Recipe | None, commit: str) -> Recipe | None:
    """Re-tracking a candidate at the commit it already pins: what changed is said against
    the recipe it was first carried from, as the first run said it, not against its own pin
    (which would say "nothing"), and the candidate itself is what is carried. A candidate
    whose branch moved is re-tracked from itself."""
    if existing is None or existing.pinned.commit != commit:
        return None
    found = _CARRIED_RE.match(existing.driver.notes or "")
    if found is None or found.group(1) == existing.name:
        return None
    return project.recipes.get(found.group(1))


def _unless_only_dated(path: Path, text: str) -> str:
    """The file as it is when the new text differs from it only by the run's date: a run
    that changes nothing else leaves the candidate byte for byte (a fixed point)."""
    try:
        before = path.read_text(encoding="utf-8")
    except OSError:
        return text
    return before if _DATE_RE.sub("", before) == _DATE_RE.sub("", text) else text
