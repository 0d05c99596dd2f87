"""The package's folders tell its architecture, and the unit tests mirror the package."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "src/xdnaforge"
UNIT = REPO / "tests/unit"

# unit test files that judge more than one module, each with why it stands where it does
CROSS_CUTTING = {
    "test_docs.py": "docs that list stable identifiers (rules, families, modules) stay complete",
    "test_readme.py": "the README's two commands and .ci/run stay in step",
    "test_require_tool.py": "the tests' own helper for system tools",
    "test_gen_upstream_messages.py": "scripts/gen_upstream_messages.py, run by hand",
    "test_gen_compat_facts.py": "scripts/gen_compat_facts.py, run by hand",
    "test_layout.py": "this file",
    "config/test_golden.py": "every loader's rendered messages, compared with golden files",
    "diagnosis/test_generalisation.py": "doctor judged on logs left out of its knowledge",
    "diagnosis/test_shapes.py": "the output shapes of the NPU tools, read by readers and verdict",
    "diagnosis/test_classes.py": "doctor on each class of real logs: build, kernel, module, IOMMU",
    "fleet/test_adapters.py": "the pure parts of all fleet adapters on recorded outputs",
}


def _relative(paths: list[Path], root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in paths)


def test_at_most_ten_modules_at_the_top_of_the_package() -> None:
    top = _relative([p for p in PACKAGE.glob("*.py") if p.name != "__init__.py"], PACKAGE)
    assert len(top) <= 10, top


def test_every_subpackage_says_what_it_owns() -> None:
    for init in PACKAGE.glob("*/__init__.py"):
        lines = init.read_text().strip().splitlines()
        assert lines, init
        assert lines[0].startswith('"""'), init
        assert len(lines[0]) > len(f'"""{init.parent.name}"""'), init


def test_unit_tests_mirror_the_package() -> None:
    strays = []
    for test in _relative(list(UNIT.rglob("test_*.py")), UNIT):
        if test in CROSS_CUTTING:
            continue
        folder, _, name = test.rpartition("/")
        module = PACKAGE / folder / name.removeprefix("test_")
        if not module.is_file():
            strays.append(test)
    assert strays == [], "a unit test file is named after the module it tests, in its folder"


def test_cross_cutting_list_names_files_that_exist() -> None:
    assert [t for t in CROSS_CUTTING if not (UNIT / t).is_file()] == []


def test_the_package_reads_git_through_tools_git_only() -> None:
    """GitPython runs `git version` at import and `git cat-file` per repository it opens,
    outside process/run.py; the package calls git through tools/git.py (ruff bans it too)."""
    importing = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            if any(name.split(".")[0] in ("git", "gitdb") for name in names):
                importing.append(str(path.relative_to(PACKAGE)))
    assert importing == []
