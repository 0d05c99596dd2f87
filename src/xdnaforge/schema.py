"""Checking plain YAML data against what a loader expects, collecting every problem.

Messages describe a refused value by its type and size and never repeat what the file says:
a recipe or site.yaml may be a link to a file that holds a secret, and what a message prints
lands in terminals and CI logs. So a value is "a string of 7 characters", an unknown key is
named only when it looks like an identifier (yamlfile.shown_key), and a did-you-mean names
only the known choice it suggests.

Pure: takes a Document and returns values plus Problems; knows no recipe or matrix field.
"""

from __future__ import annotations

import datetime
import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from xdnaforge.errors import ConfigError, Problem
from xdnaforge.yamlfile import Document, KeyPath, describe, format_path, shown_key

COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_HEX = re.compile(r"[0-9a-f]*")
# values YAML makes of unquoted text that was meant as a string (ref: 1.6, ref: no)
_UNQUOTED = (
    (bool, "a boolean"),
    (int, "an integer"),
    (float, "a number"),
    (datetime.date, "a date"),
)


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """` (did you mean 'order'?)` when a known choice is close to `value`, else ``."""
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def not_hex(value: str, length: int) -> str:
    """Why `value` is not `length` lowercase hex characters, without showing it."""
    text = describe(value)
    if len(value) != length:
        return text
    return f"{text}, not all of them 0-9 or a-f" if not _HEX.fullmatch(value) else text


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
        return describe(value, self.document.scalars.get(path))

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
                suggestion = did_you_mean(key, known)
                self.problem(
                    (*path, key),
                    f"unknown key {shown_key(key)}{suggestion}",
                    hint=None if suggestion else f"known keys here: {', '.join(sorted(known))}",
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
        kind = next((kind for made, kind in _UNQUOTED if isinstance(value, made)), None)
        hint = f"YAML read the unquoted text as {kind}; quote it" if kind else None
        self.problem(path, f"expected a string, got {self._describe(value, path)}", hint=hint)
        return None

    def commit(self, parent: Mapping[str, Any], key: str, path: KeyPath) -> str | None:
        """A full 40-hex git commit; branches, tags and short hashes are not pins."""
        value = self.string(parent, key, path)
        if value is None:
            return None
        if not COMMIT_RE.match(value):
            self.problem(
                (*path, key),
                f"expected a full commit id (40 lowercase hex), got {not_hex(value, 40)}",
                hint="a branch, tag or short hash can move or collide; "
                "pin the full id, e.g. from `git rev-parse <ref>`",
            )
            return None
        return value

    def sha256(
        self,
        parent: Mapping[str, Any],
        key: str,
        path: KeyPath,
        *,
        unpinned: str | None = None,
        hint: str | None = None,
    ) -> str | None:
        """A sha256 in 64 lowercase hex characters (or the word `unpinned`, where allowed)."""
        value = self.string(parent, key, path)
        if value is None or value == unpinned or SHA256_RE.match(value):
            return value
        self.problem(
            (*path, key), f"expected a sha256 (64 lowercase hex), got {not_hex(value, 64)}", hint
        )
        return None

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
            self.problem((*path, key), f"must be at least {minimum}")
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
            self.problem(
                (*path, key),
                f"expected one of {', '.join(options)}, got {describe(value)}"
                f"{did_you_mean(value, options)}",
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
