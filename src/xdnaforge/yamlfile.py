"""Read a YAML file into plain data plus the line/column of every key; no schema knowledge.

PyYAML silently keeps the last of two equal keys; we reject them here, with both lines.
Aliases are bounded: PyYAML shares an aliased node, so a 400-byte "billion laughs" of
nested aliases is small to parse but expands into billions of values for whoever walks it
(this walk, then the schema); a document that expands past MAX_VALUES values, nests deeper
than MAX_DEPTH or contains itself through an alias is refused with the anchor's line.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from xdnaforge.errors import ConfigError, Problem

KeyPath = tuple[str | int, ...]
MAX_VALUES = 100_000  # values after alias expansion; the project's largest file has ~2,000
MAX_DEPTH = 100

try:  # the C loader is faster and behaves the same for safe loading (pre-commit does this too)
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader


@dataclass(frozen=True, slots=True)
class Document:
    """Parsed YAML: the data, where each key stands, and the name to show in messages."""

    source: str
    data: Any
    positions: dict[KeyPath, tuple[int, int]] = field(default_factory=dict)
    # the text of every scalar as written, so a message can say `quote it: "2.10"`
    scalars: dict[KeyPath, str] = field(default_factory=dict)
    # duplicate keys: reported with the schema's problems so a user sees everything at once
    problems: tuple[Problem, ...] = ()

    def where(self, path: KeyPath) -> tuple[int, int]:
        """Line and column of the nearest known key on `path` (1-based)."""
        probe = path
        while probe:
            if probe in self.positions:
                return self.positions[probe]
            probe = probe[:-1]
        return self.positions.get((), (1, 1))


def format_path(path: KeyPath) -> str:
    """`("build", "steps", 0, "argv")` -> `build.steps[0].argv`."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Bound:
    """What the walk has seen: values so far, and the nodes on the current path."""

    __slots__ = ("on_path", "values")

    def __init__(self) -> None:
        self.values = 0
        self.on_path: set[int] = set()


def _refuse(node: yaml.Node, source: str, path: KeyPath, message: str, hint: str) -> ConfigError:
    line, column = _mark(node)
    return ConfigError(
        [
            Problem(
                source=source,
                line=line,
                column=column,
                key_path=format_path(path),
                message=message,
                hint=hint,
            )
        ]
    )


def _walk(
    node: yaml.Node,
    path: KeyPath,
    positions: dict[KeyPath, tuple[int, int]],
    scalars: dict[KeyPath, str],
    problems: list[Problem],
    source: str,
    bound: _Bound | None = None,
) -> None:
    bound = bound or _Bound()
    bound.values += 1
    if bound.values > MAX_VALUES:
        raise _refuse(
            node,
            source,
            path,
            f"aliases expand this document past {MAX_VALUES} values",
            "an alias (*name) repeats its anchor's value; write the values out, or use fewer",
        )
    if len(path) > MAX_DEPTH:
        raise _refuse(node, source, path, f"nested deeper than {MAX_DEPTH} levels", "flatten it")
    if id(node) in bound.on_path:
        raise _refuse(
            node,
            source,
            path,
            "an alias refers to a value that contains it (a recursive alias)",
            "an alias must not point at its own enclosing anchor",
        )
    if isinstance(node, yaml.ScalarNode):
        scalars[path] = str(node.value)
    elif isinstance(node, yaml.MappingNode):
        seen: dict[str, tuple[int, int]] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            here = _mark(key_node)
            child = (*path, key)
            if key in seen:
                problems.append(
                    Problem(
                        source=source,
                        line=here[0],
                        column=here[1],
                        key_path=format_path(child),
                        message=f"duplicate key '{key}' (first defined on line {seen[key][0]})",
                        hint="YAML would silently keep only the last one; delete or merge one",
                    )
                )
                continue
            seen[key] = here
            positions[child] = here
            bound.on_path.add(id(node))
            _walk(value_node, child, positions, scalars, problems, source, bound)
            bound.on_path.discard(id(node))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            child = (*path, index)
            positions[child] = _mark(item)
            bound.on_path.add(id(node))
            _walk(item, child, positions, scalars, problems, source, bound)
            bound.on_path.discard(id(node))


def parse(text: str, source: str) -> Document:
    """Parse YAML text; raise ConfigError for syntax errors, record duplicate keys."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Document(source=source, data=None, positions={(): (1, 1)})
        positions: dict[KeyPath, tuple[int, int]] = {(): _mark(node)}
        scalars: dict[KeyPath, str] = {}
        problems: list[Problem] = []
        _walk(node, (), positions, scalars, problems, source)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        reason = error.problem or error.context or "invalid YAML"
        raise ConfigError(
            [
                Problem(
                    source=source,
                    line=line,
                    column=column,
                    key_path="",
                    message=f"YAML syntax error: {reason}",
                    hint="check indentation and quoting around this line",
                )
            ]
        ) from None
    except yaml.YAMLError as error:
        raise ConfigError(
            [Problem(source=source, line=1, column=1, key_path="", message=f"YAML error: {error}")]
        ) from None
    finally:
        loader.dispose()
    return Document(
        source=source, data=data, positions=positions, scalars=scalars, problems=tuple(problems)
    )


def read_config_text(path: Path, source: str, root: Path | None = None) -> str:
    """A configuration file's text, or a ConfigError that says why not without showing it:
    a link that leaves `root` (a credentials file would land in CI logs), something that is
    not a regular file (a directory, a FIFO), bytes that are not UTF-8."""

    def refuse(message: str, hint: str | None = None) -> ConfigError:
        return ConfigError(
            [Problem(source=source, line=1, column=1, key_path="", message=message, hint=hint)]
        )

    if root is not None:
        resolved = path.resolve()
        if not resolved.is_relative_to(root.resolve()):
            raise refuse(
                f"is a link to {resolved}, outside the project: not read",
                "configuration files live in the project; copy the file in instead of linking",
            )
    try:
        # O_NONBLOCK: a FIFO must not block the read; then only a regular file is read
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise refuse(f"cannot read: {error.strerror}") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise refuse("not a regular file", "a configuration file is a plain text file")
    os.set_blocking(descriptor, True)
    with os.fdopen(descriptor, "rb") as handle:
        data = handle.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ConfigError(
            [
                Problem(
                    source=source,
                    line=line,
                    column=error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1,
                    key_path="",
                    message=f"not UTF-8 text (byte 0x{data[error.start]:02x})",
                    hint="save the file as UTF-8",
                )
            ]
        ) from None


def load(path: Path, source: str | None = None, root: Path | None = None) -> Document:
    """Read and parse a YAML file; `source` is the name shown in messages; a link that
    leaves `root` is refused (read_config_text)."""
    name = source or str(path)
    return parse(read_config_text(path, name, root), name)
