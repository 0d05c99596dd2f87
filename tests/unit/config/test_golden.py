"""Golden tests: the exact message for each invalid file in tests/data/invalid/.

A case named `recipe-*.yaml` is placed in recipes/, `matrix-*.yaml` in matrices/, of a copy
of the shipped project; the rendered ConfigError must equal `<case>.expected`. Set
XDNAFORGE_UPDATE_GOLDEN=1 to rewrite the expected files after an intended change.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import DATA
from xdnaforge.config.project import load_project
from xdnaforge.errors import ConfigError

CASES = sorted(p for p in (DATA / "invalid").glob("*.yaml"))


@pytest.mark.parametrize("case", CASES, ids=[p.stem for p in CASES])
def test_invalid_configuration_message(case: Path, project_dir: Path) -> None:
    folder = "recipes" if case.name.startswith("recipe-") else "matrices"
    shutil.copy(case, project_dir / folder / case.name)
    with pytest.raises(ConfigError) as caught:
        load_project(project_dir, {})
    text = str(caught.value) + "\n"
    expected = case.with_suffix(".expected")
    if os.environ.get("XDNAFORGE_UPDATE_GOLDEN"):
        expected.write_text(text, encoding="utf-8")
    assert text == expected.read_text(encoding="utf-8")
