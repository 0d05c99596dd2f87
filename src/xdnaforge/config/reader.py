"""The Reader configuration files are read with: schema.Reader's checks, with messages that
describe a refused value by its type and size and never repeat what the file says.

A recipe or site.yaml may be a link to a file that holds a secret; what a message prints
lands in terminals and CI logs. So a value is "a string of 7 characters", an unknown key is
named only when it looks like an identifier (yamlfile.shown_key), and a did-you-mean names
only the known choice it suggests. Pure, like schema.py.
"""

from __future__ import annotations

import datetime
import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from xdnaforge.schema import COMMIT_RE, SHA256_RE, Reader
from xdnaforge.yamlfile import KeyPath, describe, shown_key

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


class ConfigReader(Reader):
    """schema.Reader whose messages describe values instead of quoting them."""

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
        value = super().integer(parent, key, path, default=default)
        if value is not None and minimum is not None and value < minimum:
            self.problem((*path, key), f"must be at least {minimum}")
            return None
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
