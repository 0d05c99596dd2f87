"""The top-level shape of every record kind (docs/records.md): its required and optional keys
with their JSON types. One source of truth: state/records.write_record refuses a record that
does not have its kind's shape (a bug in the writer, never written), and
scripts/gen_schemas.py publishes each shape as schemas/records/<kind>.schema.json.

Only the top level is described; what a key holds inside is the writer's and docs/records.md's.
A kind is closed (no other key) where docs/records.md lists every key it has, open where a
record legitimately carries more (a LAVA job's entry, keys the docs leave to the code). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SCHEMA = 1  # the records' `schema` field (state/records.py writes it)

# JSON types, as JSON Schema names them; () is any JSON value
Types = tuple[str, ...]
STRING: Types = ("string",)
INTEGER: Types = ("integer",)
NUMBER: Types = ("number",)
BOOLEAN: Types = ("boolean",)
ARRAY: Types = ("array",)
OBJECT: Types = ("object",)
ANY: Types = ()
STRING_OR_NULL: Types = ("string", "null")
OBJECT_OR_NULL: Types = ("object", "null")
BOOLEAN_OR_NULL: Types = ("boolean", "null")


@dataclass(frozen=True, slots=True)
class Shape:
    """A record kind's top level. `unless`: a record holding that key needs none of
    `required` (build.json after an interruption before any build step completed)."""

    kind: str
    file: str  # where docs/records.md says it is written
    required: Mapping[str, Types]
    optional: Mapping[str, Types] = field(default_factory=dict)
    closed: bool = True
    unless: str | None = None


class RecordShapeError(ValueError):
    """A writer asked for a record that is not its kind's documented shape: a bug."""


# every record has these (state/records.write_record adds the first three)
HEADER: Mapping[str, Types] = {"schema": INTEGER, "kind": STRING, "xdnaforge": STRING}
# and may have these: what a rerun compares, and a stage stopped by a signal
COMMON: Mapping[str, Types] = {"fingerprints": OBJECT, "inputs": OBJECT, "interrupted": OBJECT}

SHAPES: tuple[Shape, ...] = (
    Shape(
        "lock",
        "artifacts/<target>/lock.json",
        {"target": STRING, "recipe": OBJECT},
        {
            "repositories": ARRAY,
            "unused_submodules": ARRAY,
            "missing_files": OBJECT,
            "patches": ARRAY,
            "expected_state": OBJECT,
            # a distro recipe's download
            "archive": OBJECT,
            "packages": OBJECT,
            "unpinned": ARRAY,
        },
    ),
    Shape(
        "build",
        "artifacts/<target>/build.json",
        {
            "target": STRING,
            "host": OBJECT,
            "recipe": OBJECT,
            "toolchain": OBJECT,
            "environment": OBJECT,
            "steps": OBJECT,
        },
        unless="interrupted",
    ),
    Shape(
        "packages",
        "artifacts/<target>/packages.json",
        {"target": STRING, "packages": ARRAY},
        {"recipe": OBJECT, "left_out": ARRAY, "buildinfo": STRING_OR_NULL},
    ),
    Shape(
        "audit",
        "artifacts/<target>/audit.json",
        {"target": STRING, "verdict": STRING, "packages": ARRAY},
        {
            "errors": ARRAY,
            "rules": OBJECT,
            "waivers": ARRAY,
            "admitted": ARRAY,
            "script_waivers": ARRAY,
            "left_out": ARRAY,
        },
    ),
    Shape(
        "install",
        "artifacts/<target>/install.json",
        {"target": STRING, "root": STRING, "state": STRING, "installed": ARRAY},
        {
            "user": STRING_OR_NULL,
            "checks": ARRAY,
            "commands": ARRAY,
            "verification": ARRAY,
            "rollback": OBJECT,
        },
    ),
    Shape(
        "validation",
        "artifacts/<target>/validation.json",
        {
            "target": STRING,
            "time": STRING,
            "host": OBJECT,
            "verdict": STRING,
            "gates": ARRAY,
            "lock_fingerprint": STRING_OR_NULL,
            "installed": STRING,
        },
        {"npu_user": STRING_OR_NULL, "lava": OBJECT},
        closed=False,
    ),
    Shape(
        "bench",
        "artifacts/<target>/bench.json",
        {"target": STRING, "latest_metrics": ARRAY},
        {"history_entries": INTEGER},
        closed=False,
    ),
    Shape(
        "kernel",
        "artifacts/<target>/kernel.json",
        {
            "time": STRING,
            "kernel": STRING,
            "decision": STRING,
            "target": STRING_OR_NULL,
            "installed": STRING_OR_NULL,
            "message": STRING,
            "outcome": STRING,
        },
    ),
    Shape(
        "matrix",
        "artifacts/<target>/matrix.json",
        {"target": STRING, "time": STRING, "host": STRING, "cells": ARRAY},
        {"comparison": ARRAY},
    ),
    Shape(
        "rebuild",
        "artifacts/<target>/rebuild.json",
        {
            "target": STRING,
            "second_build": STRING,
            "second_ccache": STRING,
            "reproducible": BOOLEAN,
            "compared": STRING,
            "packages": ARRAY,
        },
        {
            # against the recorded build
            "fingerprint": STRING_OR_NULL,
            "first_build": STRING,
            "tree_inside": OBJECT,
            "differing_files": INTEGER,
            "method": STRING,
            # against a .buildinfo (--buildinfo)
            "buildinfo": STRING,
            "buildinfo_built": OBJECT,
            "pins": STRING,
            "environment_differences": ARRAY,
            "verdict": STRING,
        },
    ),
    Shape(
        "failure",
        "artifacts/<target>/failure.json",
        {
            "target": STRING,
            "stage": STRING,
            "fingerprint": STRING_OR_NULL,
            "time": STRING,
            "message": STRING,
        },
        {"attempts": ARRAY},
    ),
    Shape(
        "prove",
        "artifacts/<target>/prove.json",
        {"target": STRING, "environment": OBJECT, "changes": ARRAY},
        {"tree": STRING, "missing_repositories": ARRAY, "log": STRING},
    ),
    Shape(
        "hostcompat",
        "artifacts/<target>/hostcompat.json",
        {
            "target": STRING,
            "time": STRING,
            "made_on": STRING,
            "facts": OBJECT,
            "firmware": OBJECT,
            "recipe": OBJECT_OR_NULL,
        },
        {"consumers": OBJECT, "fix": STRING_OR_NULL, "notes": ARRAY},
    ),
    Shape(
        "pyxrt",
        "artifacts/<target>/pyxrt.json",
        {"target": STRING, "bindings": ARRAY},
    ),
    Shape(
        "track",
        "artifacts/<line>/track.json",
        {"line": STRING, "ref": STRING, "commit": STRING, "recipe": STRING},
        {
            "fetched_from": ANY,
            "started_from": OBJECT,
            "xrt": OBJECT,
            "gitlinks": ARRAY,
            "missing": ARRAY,
            "upstream_depends": ARRAY,
            "depends": ANY,
            "firmware": OBJECT,
            "options": OBJECT,
            "driver": OBJECT,
            "changes": ARRAY,
            "survey": STRING,
        },
        closed=False,  # also the facts docs/records.md leaves to the code (blobs, pci_ids)
    ),
    Shape(
        "survey",
        "artifacts/<target>/survey.json",
        {"target": STRING, "environment": STRING, "findings": ARRAY, "warnings": INTEGER},
        {
            "library_mapping": STRING,
            "roots": ARRAY,
            "skipped": ARRAY,
            "files_read": INTEGER,
            "not_found": ARRAY,
            "missing_from_mirror": ARRAY,
            "missing_repositories": ARRAY,
        },
        closed=False,  # also the recipe's digest and the patches in the tree
    ),
    Shape(
        "env",
        "build/envs/<distro>-<release>/env.json",
        {
            "environment": STRING,
            "distro": STRING,
            "release": STRING,
            "provider": STRING,
            "twin": BOOLEAN,
            "description": STRING,
            "requested": ARRAY,
            "packages": OBJECT,
        },
        {
            "image": STRING_OR_NULL,
            "suite": STRING_OR_NULL,
            "archive": STRING_OR_NULL,
            "made_with": STRING_OR_NULL,
            "keyring": OBJECT_OR_NULL,
            "release_verified": ARRAY,
            "release_files": OBJECT,
            "valid_until_ignored": BOOLEAN,
            "compilers": OBJECT,
            "size_bytes": INTEGER,
            "created": STRING,
            "seconds": ("number", "null"),
            "updated": STRING,
            "update_seconds": NUMBER,
        },
    ),
    Shape(
        "doctor",
        "where `doit doctor --json` says",
        {"verdict": STRING},
        {"logs": ARRAY, "gates": ARRAY, "findings": ARRAY},
    ),
    Shape(
        "fleet-report",
        "artifacts/fleet-report/FLEET_REPORT.json",
        {"time": STRING, "hosts": ARRAY, "cells": ARRAY, "entries": ARRAY},
        {"unplaced": ARRAY},
    ),
    Shape(
        "publish",
        "artifacts/<target>/publish.json",
        {
            "target": STRING,
            "time": STRING,
            "snapshot": STRING,
            "action": STRING,
            "packages": ARRAY,
        },
        {
            "repository": STRING,
            "prefix": STRING,
            "distribution": STRING,
            "url": STRING,
            "signing_key": STRING,
            "host_files": OBJECT,
            "history": ARRAY,
        },
    ),
)

BY_KIND: Mapping[str, Shape] = {shape.kind: shape for shape in SHAPES}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__  # not JSON: no shape accepts it


def _fits(value: Any, types: Types) -> bool:
    found = _json_type(value)
    return not types or found in types or (found == "integer" and "number" in types)


def check(kind: str, record: Mapping[str, Any]) -> None:
    """`record` (header included) has the shape of `kind`; RecordShapeError says what not."""
    shape = BY_KIND.get(kind)
    if shape is None:
        raise RecordShapeError(
            f"record kind {kind!r} has no shape in state/record_shapes.py "
            f"(the kinds: {', '.join(sorted(BY_KIND))})"
        )
    if record.get("kind") != kind or record.get("schema") != SCHEMA:
        raise RecordShapeError(f"{kind} record: its header is not schema {SCHEMA}, kind {kind}")
    required = {**HEADER} if shape.unless in record else {**HEADER, **shape.required}
    known = {**HEADER, **COMMON, **shape.required, **shape.optional}
    for key in required:
        if key not in record:
            raise RecordShapeError(f"{kind} record: required key {key!r} is missing")
    for key, value in record.items():
        types = known.get(key)
        if types is None:
            if shape.closed:
                raise RecordShapeError(
                    f"{kind} record: key {key!r} is not one of its documented keys "
                    "(docs/records.md, state/record_shapes.py)"
                )
            continue
        if not _fits(value, types):
            raise RecordShapeError(
                f"{kind} record: key {key!r} is {_json_type(value)}, "
                f"documented as {' or '.join(types)}"
            )


def _property(types: Types) -> dict[str, Any]:
    if not types:
        return {}
    return {"type": types[0] if len(types) == 1 else list(types)}


def json_schema(shape: Shape) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of `shape`: what check() holds a record to."""
    properties: dict[str, Any] = {
        "schema": {"const": SCHEMA},
        "kind": {"const": shape.kind},
        "xdnaforge": {"type": "string"},
    }
    for key, types in {**COMMON, **shape.required, **shape.optional}.items():
        properties[key] = _property(types)
    made: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://xdnaforge.invalid/schemas/records/{shape.kind}.schema.json",
        "title": f"xdnaforge record kind {shape.kind} ({shape.file})",
        "description": "generated from state/record_shapes.py (scripts/gen_schemas.py), the "
        "shape state/records.write_record checks before writing; only the top level: "
        "docs/records.md says what each key holds",
        "type": "object",
        "properties": properties,
        "required": list(HEADER) if shape.unless else [*HEADER, *shape.required],
        "additionalProperties": not shape.closed,
    }
    if shape.unless:
        made["if"] = {"required": [shape.unless]}
        made["else"] = {"required": list(shape.required)}
    return made
