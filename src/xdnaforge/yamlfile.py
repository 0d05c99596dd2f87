"""Read a YAML file into plain data plus the line/column of every key; no schema knowledge.

PyYAML silently keeps the last of two equal keys; we reject them here, with both lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from xdnaforge.errors import ConfigError, Problem

KeyPath = tuple[str | int, ...]

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


def _walk(
    node: yaml.Node,
    path: KeyPath,
    positions: dict[KeyPath, tuple[int, int]],
    scalars: dict[KeyPath, str],
    problems: list[Problem],
    source: str,
) -> None:
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
            _walk(value_node, child, positions, scalars, problems, source)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            child = (*path, index)
            positions[child] = _mark(item)
            _walk(item, child, positions, scalars, problems, source)


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


def load(path: Path, source: str | None = None) -> Document:
    """Read and parse a YAML file; `source` is the name shown in messages."""
    name = source or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(
            [Problem(source=name, line=1, column=1, key_path="", message=f"cannot read: {error}")]
        ) from None
    return parse(text, name)
