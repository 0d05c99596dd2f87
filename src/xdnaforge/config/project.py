"""Loading the whole project configuration at once: recipes, matrices, patch series, site.

The edge that reads the files; it collects every problem across every file into one
ConfigError so a user fixes them all in one go. Every file is read once, through yamlfile's
checks with the project directory's owner (no other hard link, the owner's or root's), and
a message about a cross-reference names only what is known (a recipe, a gate, a code),
never the text that failed to match it.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.config.matrix import USABLE, Cell, Matrix, parse_matrix
from xdnaforge.config.recipe import Recipe
from xdnaforge.config.recipe_parse import parse_recipe
from xdnaforge.config.series import PatchHeader, parse_header, parse_series
from xdnaforge.config.site import Site, load_site
from xdnaforge.diagnosis.knowledge import load_knowledge
from xdnaforge.errors import ConfigError, Problem
from xdnaforge.schema import did_you_mean
from xdnaforge.yamlfile import load, parse, read_config_bytes, read_config_text


@dataclass(frozen=True, slots=True, kw_only=True)
class Patch:
    set: str
    file: str
    path: Path
    sha256: str
    header: PatchHeader
    origin: str  # patches/<set>/series:<line>


@dataclass(frozen=True, slots=True, kw_only=True)
class PatchSet:
    name: str
    patches: tuple[Patch, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Project:
    root: Path
    recipes: Mapping[str, Recipe]
    matrices: tuple[Matrix, ...]
    patch_sets: Mapping[str, PatchSet]
    site: Site

    def patches_for(self, recipe: Recipe) -> tuple[Patch, ...]:
        return tuple(p for name in recipe.patch_sets for p in self.patch_sets[name].patches)

    def cells(self) -> tuple[Cell, ...]:
        return tuple(cell for matrix in self.matrices for cell in matrix.cells)

    def recipes_supported_first(self) -> list[Recipe]:
        """Every recipe, those a matrix cell expects to work (supported, partial) first, each
        group by name: the order in which a fix names the recipes that fit."""
        usable = {cell.recipe for cell in self.cells() if cell.expect in USABLE}
        return sorted(self.recipes.values(), key=lambda r: (r.name not in usable, r.name))


def _relative(root: Path, path: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def _owner(root: Path) -> int:
    """Whose the project's configuration files must be (or root's): the project directory's."""
    return root.stat().st_uid


def _load_patch_set(root: Path, directory: Path, problems: list[Problem]) -> PatchSet:
    series_path = directory / "series"
    source = _relative(root, series_path)
    try:
        text = read_config_text(series_path, source, root, owner=_owner(root))
    except ConfigError as error:
        problems.extend(error.problems)
        return PatchSet(name=directory.name, patches=())
    entries, series_problems = parse_series(text)
    for line, message in series_problems:
        problems.append(Problem(source=source, line=line, column=1, key_path="", message=message))
    patches = []
    for entry in entries:
        path = directory / entry.file
        if not path.is_file():
            present = sorted(p.name for p in directory.glob("*.patch"))
            close = difflib.get_close_matches(entry.file, present, n=1)
            problems.append(
                Problem(
                    source=source,
                    line=entry.line,
                    column=1,
                    key_path="",
                    message="the patch file this line names does not exist",
                    hint=f"did you mean '{close[0]}'?"
                    if close
                    else f"add it to {_relative(root, directory)}/ or remove the line",
                )
            )
            continue
        if not path.resolve().is_relative_to(root.resolve()):
            problems.append(
                Problem(
                    source=source,
                    line=entry.line,
                    column=1,
                    key_path="",
                    message=f"the patch this line names is a link to {path.resolve()}, "
                    "outside the project",
                    hint="patches live in the project; copy the file in instead of linking",
                )
            )
            continue
        try:
            data = read_config_bytes(path, _relative(root, path), root, owner=_owner(root))
        except ConfigError as error:
            problems.extend(error.problems)
            continue
        digest = hashlib.sha256(data).hexdigest()
        if entry.sha256 is not None and entry.sha256 != digest:
            problems.append(
                Problem(
                    source=source,
                    line=entry.line,
                    column=1,
                    key_path="",
                    message=f"the patch has sha256 {digest}, not the one this line pins",
                    hint="if the change to the patch is intended, put the new digest in the series",
                )
            )
        header, header_problems = parse_header(data.decode("utf-8", errors="replace"))
        for line, message in header_problems:
            problems.append(
                Problem(
                    source=_relative(root, path), line=line, column=1, key_path="", message=message
                )
            )
        if header is not None:
            patches.append(
                Patch(
                    set=directory.name,
                    file=entry.file,
                    path=path,
                    sha256=digest,
                    header=header,
                    origin=f"{source}:{entry.line}",
                )
            )
    return PatchSet(name=directory.name, patches=tuple(patches))


def _cell_problem(cell: Cell, key: str, message: str, hint: str | None = None) -> Problem:
    """A problem located at the `key` (recipe, host, npu) of a matrix cell."""
    where = {name: (line, column) for name, line, column in cell.positions}
    line, column = where[key]
    return Problem(
        source=cell.origin.rsplit(":", 1)[0],
        line=line,
        column=column,
        key_path=f"{cell.key_path}.{key}",
        message=message,
        hint=hint,
    )


def _check_references(
    recipes: Mapping[str, Recipe],
    recipe_lines: Mapping[str, tuple[str, dict[tuple[str | int, ...], tuple[int, int]]]],
    patch_sets: Mapping[str, PatchSet],
    matrices: tuple[Matrix, ...],
    broken: set[str],
    problems: list[Problem],
) -> None:
    for recipe in recipes.values():
        source, positions = recipe_lines[recipe.name]
        if recipe.source is None:
            continue  # prebuilt: no patches (the recipe loader refuses them)
        tree = {".", *(s.path for s in recipe.pinned.submodules)}
        unused = tuple(u.path for u in recipe.pinned.unused_submodules)
        for index, name in enumerate(recipe.patch_sets):
            line, column = positions.get(("patches", index), (1, 1))
            if name not in patch_sets:
                problems.append(
                    Problem(
                        source=source,
                        line=line,
                        column=column,
                        key_path=f"patches[{index}]",
                        message="no such patch set (no patches/<set>/series)"
                        + did_you_mean(name, patch_sets),
                        hint=f"known sets: {', '.join(sorted(patch_sets)) or 'none'}",
                    )
                )
                continue
            for patch in patch_sets[name].patches:
                if not _in_pinned_tree(patch.header.repository, tree, unused):
                    problems.append(
                        Problem(
                            source=source,
                            line=line,
                            column=column,
                            key_path=f"patches[{index}]",
                            message=f"the Repository: of {patch.set}/{patch.file} is not "
                            "the top repository, a pinned submodule or a "
                            "repository nested in one (an unused submodule is not built)",
                            hint=f"pinned paths: {', '.join(sorted(tree))}",
                        )
                    )
    check_cells(recipes, matrices, broken, problems)


def _in_pinned_tree(repository: str, pinned: set[str], unused: tuple[str, ...]) -> bool:
    """A pinned repository, or one nested in a pinned submodule: its parent's gitlink fixes
    its commit (aiebu's own aie-rt lies under XRT and is pinned by XRT's pin)."""
    if repository in pinned:
        return True
    if any(repository == u or repository.startswith(f"{u}/") for u in unused):
        return False
    return any(p != "." and repository.startswith(f"{p}/") for p in pinned)


def check_cells(
    recipes: Mapping[str, Recipe],
    matrices: tuple[Matrix, ...],
    broken: set[str],
    problems: list[Problem],
) -> None:
    """Every cell names a known recipe, for a distro and NPU that recipe is for."""
    for matrix in matrices:
        for cell in matrix.cells:
            if cell.recipe in broken:
                continue  # its own problems are reported; "unknown recipe" would only add noise
            if cell.recipe not in recipes:
                problems.append(
                    _cell_problem(
                        cell,
                        "recipe",
                        f"unknown recipe{did_you_mean(cell.recipe, recipes)}",
                        f"recipes: {', '.join(sorted(recipes))}",
                    )
                )
                continue
            hosts = recipes[cell.recipe].hosts
            if (cell.distro_id, cell.distro_version) != (hosts.distro_id, hosts.distro_version):
                problems.append(
                    _cell_problem(
                        cell,
                        "host",
                        f"the cell's distro is not the one recipe '{cell.recipe}' is for "
                        f"({hosts.distro_id} {hosts.distro_version})",
                    )
                )
            _check_expectation(cell, recipes[cell.recipe], problems)
            if not any(
                n.pci == cell.npu.pci and n.revision in (None, cell.npu.revision)
                for n in hosts.npus
            ):
                problems.append(
                    _cell_problem(
                        cell,
                        "npu",
                        "the cell's NPU (PCI id and revision) is not listed in "
                        f"recipe '{cell.recipe}' hosts.npu",
                    )
                )


def stage_names(recipe: Recipe) -> tuple[str, ...]:
    """The stages a cell can fail at, in order (planning/plan.py's build pipeline and validate)."""
    built = (
        ()
        if recipe.source is None
        else ("fetch", "patch", "deps", *(f"build-{step.name}" for step in recipe.steps))
    )
    return (*built, "package", "audit", "validate")


def _check_expectation(cell: Cell, recipe: Recipe, problems: list[Problem]) -> None:
    """The stages, gates and diagnosis codes an expectation names exist for this recipe."""
    if cell.breaks is not None:
        stages = stage_names(recipe)
        stage = cell.breaks.stage
        if stage not in stages:
            problems.append(
                _cell_problem(
                    cell,
                    "fails.stage",
                    f"recipe '{cell.recipe}' has no such stage{did_you_mean(stage, stages)}",
                    f"stages: {', '.join(stages)}",
                )
            )
        elif cell.breaks.codes and stage not in ("validate",) and not stage.startswith("build-"):
            problems.append(
                _cell_problem(
                    cell,
                    "fails.codes[0]",
                    f"no diagnosis is made at stage {stage}; codes are judged at validate "
                    "and at the build steps (from their logs)",
                    "leave out 'codes' for this stage",
                )
            )
    for key, gate in cell.named_gates():
        if gate not in recipe.validation.gates:
            problems.append(
                _cell_problem(
                    cell,
                    key,
                    f"gate '{gate}' is not in recipe '{cell.recipe}' validate.gates: "
                    "it never runs, so it cannot be judged",
                    f"the recipe runs: {', '.join(recipe.validation.gates)}",
                )
            )
    named = cell.named_codes()
    if not named:
        return
    codes = {entry.code for entry in load_knowledge()}
    for key, code in named:
        if code not in codes:
            problems.append(
                _cell_problem(
                    cell,
                    key,
                    f"unknown diagnosis code{did_you_mean(code, sorted(codes))}",
                    "codes are the `code:` keys of xdnaforge/diagnosis/data/knowledge.yaml",
                )
            )


def load_matrix_file(project: Project, path: Path) -> Matrix:
    """A matrix file given on the command line, checked against the project's recipes."""
    document = load(path, _relative(project.root, path.resolve()), owner=_owner(project.root))
    matrix, reader = parse_matrix(document, path.stem)
    problems = list(reader.problems)
    if matrix is not None:
        check_cells(project.recipes, (matrix,), set(), problems)
    if problems or matrix is None:
        raise ConfigError(problems)
    return matrix


def load_project(root: Path, environ: Mapping[str, str]) -> Project:
    """Load and cross-check recipes, matrices and patch series; ConfigError lists every problem."""
    problems: list[Problem] = []
    try:
        site = load_site(root, environ)
    except ConfigError as error:
        problems.extend(error.problems)
        site = None

    patch_sets: dict[str, PatchSet] = {}
    for series in sorted((root / "patches").glob("*/series")):
        patch_sets[series.parent.name] = _load_patch_set(root, series.parent, problems)

    recipes: dict[str, Recipe] = {}
    recipe_lines = {}
    broken: set[str] = set()
    for path in sorted((root / "recipes").glob("*.yaml")):
        broken.add(path.stem)
        try:
            text = read_config_text(path, _relative(root, path), root, owner=_owner(root))
            document = parse(text, _relative(root, path))
        except ConfigError as error:
            problems.extend(error.problems)
            continue
        # the digest of the bytes parsed (strict UTF-8 decodes and encodes back to them)
        recipe, reader = parse_recipe(document, hashlib.sha256(text.encode()).hexdigest())
        problems.extend(reader.problems)
        if recipe is None:
            continue
        if recipe.name != path.stem:
            line, column = document.where(("name",))
            problems.append(
                Problem(
                    source=document.source,
                    line=line,
                    column=column,
                    key_path="name",
                    message=f"differs from the file name '{path.stem}'",
                    hint="the target name is the file name; make them equal",
                )
            )
            continue
        broken.discard(path.stem)
        recipes[recipe.name] = recipe
        recipe_lines[recipe.name] = (document.source, document.positions)

    matrices = []
    for path in sorted((root / "matrices").glob("*.yaml")):
        try:
            document = load(path, _relative(root, path), root, owner=_owner(root))
        except ConfigError as error:
            problems.extend(error.problems)
            continue
        matrix, reader = parse_matrix(document, path.stem)
        problems.extend(reader.problems)
        if matrix is not None:
            matrices.append(matrix)

    _check_references(recipes, recipe_lines, patch_sets, tuple(matrices), broken, problems)
    if problems or site is None:
        raise ConfigError(problems)
    return Project(
        root=root, recipes=recipes, matrices=tuple(matrices), patch_sets=patch_sets, site=site
    )
