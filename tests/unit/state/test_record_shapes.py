"""Every record kind has one declared shape: write_record refuses a record that is not it,
and schemas/records/<kind>.schema.json is that shape, so the published schemas accept what
is written and refuse what is refused."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest

from tests.conftest import REPO
from xdnaforge import __version__
from xdnaforge.state.record_shapes import BY_KIND, SHAPES, RecordShapeError, check
from xdnaforge.state.records import RECORDS, mark_interrupted, read_record, write_record

RECORDS_DIR = REPO / "schemas/records"
VALUES: dict[str, Any] = {
    "string": "x",
    "integer": 1,
    "number": 1.5,
    "boolean": True,
    "array": [],
    "object": {},
    "null": None,
}


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_schemas", REPO / "scripts/gen_schemas.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _validator(kind: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((RECORDS_DIR / f"{kind}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _body(kind: str) -> dict[str, Any]:
    """Every required key of `kind`, each with a value of its first documented type."""
    return {k: VALUES[t[0]] if t else None for k, t in BY_KIND[kind].required.items()}


def _whole(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"schema": 1, "kind": kind, "xdnaforge": __version__, **body}


def test_the_published_record_schemas_are_the_shapes_and_nothing_else() -> None:
    made: dict[str, str] = _generator().record_schemas()
    shipped = {f"records/{p.name.removesuffix('.schema.json')}" for p in RECORDS_DIR.iterdir()}
    assert shipped == set(made), "schemas/records/ is stale: run scripts/gen_schemas.py"
    for name, text in made.items():
        path = REPO / f"schemas/{name}.schema.json"
        assert path.read_text() == text, f"{path} is stale: run scripts/gen_schemas.py"


def test_every_record_the_report_reads_has_a_shape_and_docs_name_each_file() -> None:
    assert set(RECORDS) <= set(BY_KIND)
    docs = (REPO / "docs/records.md").read_text()
    for shape in SHAPES:
        name = Path(shape.file).name
        assert (name if name.endswith(".json") else f"kind `{shape.kind}`") in docs, shape.kind


@pytest.mark.parametrize("kind", sorted(BY_KIND))
def test_a_record_with_the_required_keys_passes_the_check_and_its_schema(kind: str) -> None:
    record = _whole(kind, _body(kind))
    check(kind, record)
    assert [e.message for e in _validator(kind).iter_errors(record)] == []


@pytest.mark.parametrize("kind", sorted(BY_KIND))
def test_a_required_key_of_the_wrong_type_fails_the_check_and_its_schema(kind: str) -> None:
    body = _body(kind)
    key, types = next((k, t) for k, t in BY_KIND[kind].required.items() if t)
    body[key] = 7.25 if "number" not in types else "seven"
    record = _whole(kind, body)
    with pytest.raises(RecordShapeError, match=f"{kind} record: key '{key}' is "):
        check(kind, record)
    assert list(_validator(kind).iter_errors(record))


@pytest.mark.parametrize("kind", sorted(BY_KIND))
def test_a_missing_key_and_a_stranger_fail_alike_in_the_check_and_the_schema(kind: str) -> None:
    shape = BY_KIND[kind]
    body = _body(kind)
    missing = next(iter(body))
    del body[missing]
    record = _whole(kind, body)
    if shape.unless:
        record[shape.unless] = {}  # build.json that only says it was interrupted
        check(kind, record)
        assert list(_validator(kind).iter_errors(record)) == []
        del record[shape.unless]
    with pytest.raises(RecordShapeError, match=f"{kind} record: required key '{missing}'"):
        check(kind, record)
    assert list(_validator(kind).iter_errors(record))
    stranger = _whole(kind, {**_body(kind), "not_documented": 1})
    if shape.closed:
        with pytest.raises(RecordShapeError, match="'not_documented' is not one of its"):
            check(kind, stranger)
        assert list(_validator(kind).iter_errors(stranger))
    else:
        check(kind, stranger)
        assert list(_validator(kind).iter_errors(stranger)) == []


def test_write_record_refuses_a_wrong_type_naming_kind_and_key_and_writes_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "failure.json"
    body = {"target": "T", "stage": "build-xrt", "fingerprint": None, "time": "t"}
    with pytest.raises(RecordShapeError, match="failure record: key 'message' is array, "):
        write_record(path, "failure", {**body, "message": ["not", "a", "string"]})
    assert list(tmp_path.iterdir()) == []
    write_record(path, "failure", {**body, "message": "ok"})
    with pytest.raises(RecordShapeError, match="failure record: required key 'message'"):
        write_record(path, "failure", body)
    assert (read_record(path) or {})["message"] == "ok"


def test_write_record_refuses_a_kind_without_a_shape(tmp_path: Path) -> None:
    with pytest.raises(RecordShapeError, match="record kind 'nope' has no shape"):
        write_record(tmp_path / "nope.json", "nope", {})
    assert list(tmp_path.iterdir()) == []


def test_a_value_that_is_not_json_is_refused() -> None:
    record = _whole("pyxrt", {"target": "T", "bindings": {1, 2}})
    with pytest.raises(RecordShapeError, match="key 'bindings' is set, documented as array"):
        check("pyxrt", record)


def test_an_interrupted_stage_without_a_build_record_writes_one_its_schema_accepts(
    tmp_path: Path,
) -> None:
    path = tmp_path / "build.json"
    mark_interrupted(path, stage="build-xrt", signal="SIGINT", stopped="make", log=None)
    record = read_record(path) or {}
    assert record["interrupted"]["stage"] == "build-xrt"
    assert list(_validator("build").iter_errors(record)) == []


def test_an_interruption_leaves_a_record_of_another_shape_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "install.json"
    path.write_text(json.dumps({"schema": 1, "kind": "install", "state": "installed"}))
    before = path.read_text()
    mark_interrupted(path, stage="install", signal="SIGTERM", stopped="dpkg", log=None)
    assert path.read_text() == before


def test_the_whole_records_of_the_report_fixture_pass_their_schemas() -> None:
    fixture = json.loads((REPO / "tests/data/report/records.json").read_text())
    whole = {name: r for name, r in fixture.items() if "kind" in r}
    assert {"matrix", "prove", "pyxrt"} <= set(whole)
    for record in whole.values():
        check(record["kind"], record)
        assert [e.message for e in _validator(record["kind"]).iter_errors(record)] == []


def test_an_integer_is_a_number_and_a_boolean_is_neither() -> None:
    env = _whole("env", {**_body("env"), "seconds": 12})
    check("env", env)
    assert list(_validator("env").iter_errors(env)) == []
    bench = _whole("bench", {**_body("bench"), "history_entries": True})
    with pytest.raises(RecordShapeError, match="'history_entries' is boolean, documented as"):
        check("bench", bench)
    assert list(_validator("bench").iter_errors(bench))
