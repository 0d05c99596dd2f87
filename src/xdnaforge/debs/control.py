"""A binary package's control file: its one paragraph of fields, and relation names.

Not python-debian: importing debian.deb822 costs ~45 ms (email, charset detection,
logging), as much as the rest of an audit's start-up, and every audit needs the control
file. What is read here is the part of Debian Policy 5.1 that a binary package's
DEBIAN/control uses, which dpkg-deb checked when it built the package: "Name: value" lines,
continuation lines that start with white space, comment lines starting with "#". Values
are what python-debian's Deb822 gives (tests/unit/debs/test_control.py compares the two);
unlike Deb822, a line that is neither a field nor a continuation, a field given twice or a
second paragraph is an error here (dpkg refuses them too) instead of being passed over.
This module parses text only: no files, no tar, no rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import overload

# a field name is anything up to the colon but white space (Policy 5.1: printable ASCII)
# (the value ends at a non-blank: a lazy value before "\s*" would retry every run of
# blanks from each of its characters, quadratic on a crafted line)
_FIELD = re.compile(r"([^:\s]+)\s*:\s*((?:.*?\S)?)\s*\Z")
# a relation's package name: what comes before its architecture qualifier, version,
# architecture list or build profile ("libc6:amd64 (>= 2.38) [amd64] <!nocheck>")
_RELATION_NAME = re.compile(r"\s*([^\s:(\[<,|]+)")


class Fields(dict[str, str]):
    """A paragraph's fields; looked up by name case-insensitively, as dpkg and apt do
    ("depends: dkms" is enforced like "Depends: dkms"). Keys keep their spelling."""

    def _key(self, name: str) -> str:
        if dict.__contains__(self, name):
            return name
        lower = name.lower()
        return next((key for key in self if key.lower() == lower), name)

    def __getitem__(self, name: str) -> str:
        return dict.__getitem__(self, self._key(name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and dict.__contains__(self, self._key(name))

    @overload  # type: ignore[override]
    def get(self, name: str, /) -> str | None: ...

    @overload
    def get(self, name: str, default: str, /) -> str: ...

    def get(self, name: str, default: str | None = None, /) -> str | None:
        return dict.get(self, self._key(name), default)


class ControlError(ValueError):
    """The control file is not one well-formed paragraph; says which line and why."""


def parse(text: str) -> dict[str, str]:
    """The fields of the paragraph, in order; continuation lines joined with newlines."""
    fields: dict[str, str] = {}
    seen: set[str] = set()  # field names are case-insensitive
    name = ""
    ended = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            continue
        if not line.strip():
            ended = bool(fields)  # blank lines before the paragraph are allowed
            continue
        if ended:
            raise ControlError(f"line {number}: a second paragraph (one package per file)")
        if line[0].isspace():
            if not name:
                raise ControlError(f"line {number}: a continuation line before any field")
            fields[name] += "\n" + line
            continue
        match = _FIELD.match(line)
        if not match:
            raise ControlError(f"line {number}: not a 'Name: value' field: {line[:60]!r}")
        name = match[1]
        if name.lower() in seen:
            raise ControlError(f"line {number}: a second {name} field")
        seen.add(name.lower())
        fields[name] = match[2]
    return fields


def relation_names(text: str) -> Iterator[str]:
    """Package names in a relation field ("a (>= 1) | b, c"), alternatives included."""
    for group in text.split(","):
        for alternative in group.split("|"):
            match = _RELATION_NAME.match(alternative)
            if match:
                yield match[1]
