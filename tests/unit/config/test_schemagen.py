"""The published JSON Schemas are what the loaders accept, and every shipped file passes them."""

from __future__ import annotations

import importlib.util
import json
from types import ModuleType

import jsonschema
import pytest
import yaml

from tests.conftest import REPO
from xdnaforge import schema
from xdnaforge.config.schemagen import tracing


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_schemas", REPO / "scripts/gen_schemas.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()


@pytest.fixture(scope="module")
def made() -> dict[str, str]:
    made: dict[str, str] = GENERATOR.schemas(REPO)
    return made


def _validator(name: str) -> jsonschema.Draft202012Validator:
    loaded = json.loads((REPO / f"schemas/{name}.schema.json").read_text())
    return jsonschema.Draft202012Validator(loaded)


def test_the_published_schemas_are_the_generated_ones(made: dict[str, str]) -> None:
    for name, text in made.items():
        shipped = REPO / f"schemas/{name}.schema.json"
        assert shipped.read_text() == text, f"{shipped} is stale: run scripts/gen_schemas.py"


@pytest.mark.parametrize(
    ("name", "pattern"), [("recipe", "recipes/*.yaml"), ("matrix", "matrices/*.yaml")]
)
def test_every_shipped_file_validates(name: str, pattern: str) -> None:
    validator = _validator(name)
    files = sorted(REPO.glob(pattern))
    assert files
    for path in files:
        errors = [e.message for e in validator.iter_errors(yaml.safe_load(path.read_text()))]
        assert errors == [], path


def test_the_readme_s_site_example_validates() -> None:
    sample = yaml.safe_load(GENERATOR.site_sample((REPO / "README.md").read_text()))
    assert list(_validator("site").iter_errors(sample)) == []


def test_a_key_the_loader_refuses_the_schema_refuses_too() -> None:
    recipe = yaml.safe_load((REPO / "recipes/ubuntu26-compat.yaml").read_text())
    validator = _validator("recipe")
    assert not validator.is_valid({**recipe, "patchs": []})  # the loader: did you mean
    unquoted = {**recipe, "source": {**recipe["source"], "commit": 1234}}
    assert not validator.is_valid(unquoted)  # a commit YAML made a number of
    site = _validator("site")
    assert not site.is_valid({"offline": "yes"})
    assert not site.is_valid({"containment": "chroot"})  # not one of the choices
    assert site.is_valid({"mirror_dirs": ["/srv/mirrors"], "git_insteadof": False})


def test_tracing_leaves_the_readers_as_they_were() -> None:
    before = {name: vars(schema.Reader)[name] for name in ("mapping", "string")}
    with tracing():
        assert vars(schema.Reader)["mapping"] is not before["mapping"]
    assert {name: vars(schema.Reader)[name] for name in before} == before


def test_a_recipe_key_no_shipped_recipe_sets_is_still_accepted(made: dict[str, str]) -> None:
    recipe = json.loads(made["recipe"])
    assert "audit" in recipe["properties"]
