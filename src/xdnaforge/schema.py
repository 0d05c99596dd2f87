"""Checking plain YAML data against what a loader expects, collecting every problem.

Pure: takes a Document and returns values plus Problems; knows no recipe or matrix field.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from xdnaforge.errors import ConfigError, Problem
from xdnaforge.yamlfile import Document, KeyPath, format_path

COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


def _article(noun: str) -> str:
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"


class Reader:
    """Reads typed values out of a Document, recording a Problem for each mistake."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self.problems: list[Problem] = list(document.problems)

    @property
    def source(self) -> str:
        return self.document.source

    def problem(self, path: KeyPath, message: str, hint: str | None = None) -> None:
        line, column = self.document.where(path)
        self.problems.append(
            Problem(
                source=self.source,
                line=line,
                column=column,
                key_path=format_path(path),
                message=message,
                hint=hint,
            )
        )

    def raise_if_any(self) -> None:
        if self.problems:
            raise ConfigError(self.problems)

    def _describe(self, value: Any, path: KeyPath) -> str:
        kind = {bool: "bool", int: "int", float: "float"}.get(type(value), type(value).__name__)
        if value is None:
            return "nothing (null)"
        if isinstance(value, dict):
            return "a mapping"
        if isinstance(value, list):
            return "a list"
        written = self.document.scalars.get(path, str(value))
        return f"{kind} {written}"

    def mapping(
        self,
        value: Any,
        path: KeyPath,
        *,
        required: Iterable[str] = (),
        optional: Iterable[str] = (),
        free_keys: bool = False,
    ) -> dict[str, Any] | None:
        """Check that `value` is a mapping with known keys; None (and a problem) if not."""
        if not isinstance(value, dict):
            self.problem(path, f"expected a mapping, got {self._describe(value, path)}")
            return None
        required = tuple(required)
        known = (*required, *optional)
        for key in value:
            if not isinstance(key, str):
                self.problem(
                    (*path, str(key)),
                    f"keys must be strings, got {self._describe(key, (*path, str(key)))}",
                    hint="quote the key",
                )
            elif not free_keys and key not in known:
                close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
                suggestion = f" (did you mean '{close[0]}'?)" if close else ""
                self.problem(
                    (*path, key),
                    f"unknown key '{key}'{suggestion}",
                    hint=None if close else f"known keys here: {', '.join(sorted(known))}",
                )
        for key in required:
            if key not in value:
                self.problem(path, f"missing required key '{key}'")
        return value

    def string(
        self, parent: Mapping[str, Any], key: str, path: KeyPath, *, default: str | None = None
    ) -> str | None:
        """A string field; numbers and bools YAML made out of unquoted text are rejected."""
        if key not in parent:
            return default
        return self.as_string(parent[key], (*path, key))

    def as_string(self, value: Any, path: KeyPath) -> str | None:
        if isinstance(value, str):
            if not value.strip():
                self.problem(path, "must not be empty")
                return None
            return value
        if isinstance(value, bool | int | float):
            written = self.document.scalars.get(path, str(value))
            self.problem(
                path,
                f"expected a string, got {self._describe(value, path)}",
                hint=f"YAML read the unquoted text as {_article(type(value).__name__)}; "
                f'quote it: "{written}"',
            )
            return None
        self.problem(path, f"expected a string, got {self._describe(value, path)}")
        return None

    def commit(self, parent: Mapping[str, Any], key: str, path: KeyPath) -> str | None:
        """A full 40-hex git commit; branches, tags and short hashes are not pins."""
        value = self.string(parent, key, path)
        if value is None:
            return None
        if not COMMIT_RE.match(value):
            self.problem(
                (*path, key),
                f"'{value}' is not a full commit id (40 lowercase hex characters)",
                hint="a branch, tag or short hash can move or collide; "
                "pin the full id, e.g. from `git rev-parse <ref>`",
            )
            return None
        return value

    def integer(
        self,
        parent: Mapping[str, Any],
        key: str,
        path: KeyPath,
        *,
        minimum: int | None = None,
        default: int | None = None,
    ) -> int | None:
        if key not in parent:
            return default
        value = parent[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(
                (*path, key), f"expected an integer, got {self._describe(value, (*path, key))}"
            )
            return None
        if minimum is not None and value < minimum:
            self.problem((*path, key), f"must be at least {minimum}, got {value}")
            return None
        return value

    def number(
        self, parent: Mapping[str, Any], key: str, path: KeyPath, *, default: float | None = None
    ) -> float | None:
        if key not in parent:
            return default
        value = parent[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.problem(
                (*path, key), f"expected a number, got {self._describe(value, (*path, key))}"
            )
            return None
        return float(value)

    def boolean(self, parent: Mapping[str, Any], key: str, path: KeyPath, *, default: bool) -> bool:
        if key not in parent:
            return default
        value = parent[key]
        if not isinstance(value, bool):
            self.problem(
                (*path, key),
                f"expected true or false, got {self._describe(value, (*path, key))}",
            )
            return default
        return value

    def choice(
        self, parent: Mapping[str, Any], key: str, path: KeyPath, choices: Iterable[str]
    ) -> str | None:
        value = self.string(parent, key, path)
        options = tuple(choices)
        if value is not None and value not in options:
            close = difflib.get_close_matches(value, options, n=1, cutoff=0.6)
            suggestion = f" (did you mean '{close[0]}'?)" if close else ""
            self.problem(
                (*path, key),
                f"'{value}' is not one of {', '.join(options)}{suggestion}",
            )
            return None
        return value

    def sequence(self, parent: Mapping[str, Any], key: str, path: KeyPath) -> list[Any]:
        """A list field (missing means empty)."""
        if key not in parent:
            return []
        value = parent[key]
        if not isinstance(value, list):
            self.problem(
                (*path, key), f"expected a list, got {self._describe(value, (*path, key))}"
            )
            return []
        return value

    def strings(self, parent: Mapping[str, Any], key: str, path: KeyPath) -> tuple[str, ...]:
        """A list of strings; each wrong item is its own problem."""
        items = []
        for index, item in enumerate(self.sequence(parent, key, path)):
            text = self.as_string(item, (*path, key, index))
            if text is not None:
                items.append(text)
        return tuple(items)
