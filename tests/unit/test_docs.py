"""Docs that list stable identifiers stay complete."""

from __future__ import annotations

import importlib.util

from tests.conftest import REPO
from xdnaforge.debs.rules import RULES


def test_every_audit_rule_is_documented_with_its_severity() -> None:
    text = (REPO / "docs/audit.md").read_text()
    for rule in RULES.values():
        assert f"| `{rule.id}` | {rule.severity} |" in text


def test_every_knowledge_family_is_documented() -> None:
    from xdnaforge.diagnosis.knowledge import load_families

    text = (REPO / "docs/knowledge.md").read_text()
    for family in load_families():
        assert f"| `{family.id}` |" in text


def test_module_map_is_generated_from_the_docstrings() -> None:
    spec = importlib.util.spec_from_file_location(
        "gen_module_map", REPO / "scripts/gen_module_map.py"
    )
    assert spec is not None
    assert spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    expected = generator.render(REPO / "src/xdnaforge", REPO / "pyproject.toml")
    assert (REPO / "docs/modules.md").read_text() == expected, (
        "docs/modules.md is stale: run python scripts/gen_module_map.py"
    )


def test_module_map_lists_every_module() -> None:
    text = (REPO / "docs/modules.md").read_text()
    package = REPO / "src/xdnaforge"
    modules = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path.name != "__init__.py" and "__pycache__" not in path.parts
    )
    assert modules
    assert [m for m in modules if f"| `{m}` |" not in text] == []
