"""JSON Schemas of recipes, matrices and site.yaml, made by the loaders themselves: the project
is loaded with every schema.Reader call noted (each mapping's accepted and required keys, each
value's type, choices, commit and digest patterns), and the notes become the schemas. One
source of truth: a key the loader accepts is in the schema, a key it refuses is not.

Keys no loaded file uses are in the schema with any value (the loader names them, the samples
do not show their type). scripts/gen_schemas.py writes schemas/*.schema.json from this.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdnaforge import schema
from xdnaforge.config.project import load_project
from xdnaforge.yamlfile import KeyPath

Pattern = tuple[str, ...]
ANY_ITEM, ANY_KEY = "*", "?"
DOCUMENTS = ("recipe", "matrix", "site")
TITLES = {
    "recipe": "xdnaforge recipe (recipes/<name>.yaml)",
    "matrix": "xdnaforge matrix (matrices/<name>.yaml)",
    "site": "xdnaforge site settings (site.yaml)",
}


@dataclass
class Node:
    kinds: set[str] = field(default_factory=set)  # object, array, string, integer, ...
    keys: dict[str, None] = field(default_factory=dict)  # accepted keys, in the loader's order
    required: set[str] | None = None  # required in every mapping() call seen
    free: bool = False  # keys are the user's (a table of URLs)
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    minimum: int | float | None = None


@dataclass
class Trace:
    nodes: dict[str, dict[Pattern, Node]] = field(
        default_factory=lambda: {name: {} for name in DOCUMENTS}
    )

    def node(self, document: str, path: KeyPath) -> Node:
        nodes = self.nodes[document]
        pattern: list[str] = []
        for part in path:
            parent = nodes.get(tuple(pattern))
            if isinstance(part, int):
                pattern.append(ANY_ITEM)
            elif parent is not None and parent.free:
                pattern.append(ANY_KEY)
            else:
                pattern.append(str(part))
        return nodes.setdefault(tuple(pattern), Node())


def _document(reader: schema.Reader) -> str | None:
    source = reader.source
    if source.startswith("recipes/"):
        return "recipe"
    if source.startswith("matrices/"):
        return "matrix"
    if Path(source).name.endswith("site.yaml"):
        return "site"
    return None


def _noting(trace: Trace, cls: type, name: str, note: Callable[..., None]) -> Callable[..., Any]:
    original = cls.__dict__[name]

    @functools.wraps(original)
    def method(self: schema.Reader, *args: Any, **kwargs: Any) -> Any:
        document = _document(self)
        if document is not None:
            note(trace, document, *args, **kwargs)
        return original(self, *args, **kwargs)

    return method


def _keyed(kind: str) -> Callable[..., None]:
    def note(
        trace: Trace, document: str, _parent: Any, key: str, path: KeyPath, *a: Any, **k: Any
    ) -> None:
        node = trace.node(document, (*path, key))
        node.kinds.add(kind)
        if kind == "integer" and k.get("minimum") is not None:
            node.minimum = k["minimum"]
        if kind == "enum":
            node.choices = tuple(a[0] if a else k.get("choices", ()))
        if kind == "commit":
            node.pattern = schema.COMMIT_RE.pattern

    return note


def _mapping(
    trace: Trace,
    document: str,
    _value: Any,
    path: KeyPath,
    *,
    required: Any = (),
    optional: Any = (),
    free_keys: bool = False,
) -> None:
    node = trace.node(document, path)
    node.kinds.add("object")
    required, optional = tuple(required), tuple(optional)
    node.keys.update(dict.fromkeys((*required, *optional)))
    node.required = set(required) if node.required is None else node.required & set(required)
    node.free = node.free or free_keys


def _as_string(trace: Trace, document: str, _value: Any, path: KeyPath) -> None:
    trace.node(document, path).kinds.add("string")


NOTES: dict[str, Callable[..., None]] = {
    "mapping": _mapping,
    "as_string": _as_string,
    "string": _keyed("string"),
    "commit": _keyed("commit"),
    "integer": _keyed("integer"),
    "number": _keyed("number"),
    "boolean": _keyed("boolean"),
    "choice": _keyed("enum"),
    "sequence": _keyed("array"),
    "strings": _keyed("strings"),
}


# the reader the loaders use; each method is noted where the class defines it
READERS = (schema.Reader,)


@contextlib.contextmanager
def tracing() -> Iterator[Trace]:
    """Every Reader call in the block noted (the classes are restored afterwards)."""
    trace = Trace()
    saved = [
        (cls, name, cls.__dict__[name]) for cls in READERS for name in NOTES if name in cls.__dict__
    ]
    try:
        for cls, name, _ in saved:
            setattr(cls, name, _noting(trace, cls, name, NOTES[name]))
        yield trace
    finally:
        for cls, name, method in saved:
            setattr(cls, name, method)


def _schema_of(nodes: Mapping[Pattern, Node], pattern: Pattern) -> dict[str, Any]:
    node = nodes.get(pattern)
    if node is None:
        return {}
    alternatives: list[dict[str, Any]] = []
    kinds = node.kinds
    if "object" in kinds:
        properties = {key: _schema_of(nodes, (*pattern, key)) for key in node.keys}
        shape: dict[str, Any] = {"type": "object"}
        if node.free:
            shape["additionalProperties"] = _schema_of(nodes, (*pattern, ANY_KEY))
        else:
            shape["properties"] = properties
            shape["additionalProperties"] = False
        if node.required:
            shape["required"] = [k for k in node.keys if k in node.required]
        alternatives.append(shape)
    if "array" in kinds or "strings" in kinds:
        items = (
            {"type": "string"} if "strings" in kinds else _schema_of(nodes, (*pattern, ANY_ITEM))
        )
        alternatives.append({"type": "array", "items": items})
    if "enum" in kinds:
        alternatives.append({"enum": list(node.choices)})
    elif "commit" in kinds:
        alternatives.append({"type": "string", "pattern": node.pattern})
    elif "string" in kinds:
        alternatives.append({"type": "string", "minLength": 1})
    if "integer" in kinds:
        number: dict[str, Any] = {"type": "integer"}
        if node.minimum is not None:
            number["minimum"] = node.minimum
        alternatives.append(number)
    elif "number" in kinds:
        alternatives.append({"type": "number"})
    if "boolean" in kinds:
        alternatives.append({"type": "boolean"})
    if len(alternatives) == 1:
        return alternatives[0]
    return {"anyOf": alternatives} if alternatives else {}


def generate(root: Path, site_sample: Path) -> dict[str, dict[str, Any]]:
    """The three schemas, from loading the project at `root` with `site_sample` as site.yaml."""
    with tracing() as trace:
        load_project(root, {"XDNAFORGE_SITE": str(site_sample)})
    return {
        name: {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"https://xdnaforge.invalid/schemas/{name}.schema.json",
            "title": TITLES[name],
            "description": "generated from xdnaforge's loader (scripts/gen_schemas.py); "
            "the loader also checks what a schema cannot (pins, files, cross-references)",
            **_schema_of(trace.nodes[name], ()),
        }
        for name in DOCUMENTS
    }
