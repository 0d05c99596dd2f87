"""A knowledge entry's signature: its regex and the plain text every match contains.

Pure. Each line doctor classifies is tried against every signature of the knowledge base;
most signatures start with words of the message they name ("Invalid mbox magic",
"DRM_IOCTL_AMDXDNA_EXEC_CMD IOCTL failed"), so a line without those words is passed by a
substring test, and the regex runs only on lines that contain them. The required text is
read from the regex's own source: the longest run of plain characters outside groups,
classes and quantified characters, and none at all where the regex has a top-level
alternation or inline flags (then the regex always runs). A regex is compiled when a
line first contains its text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

_SPECIAL = frozenset(".^$*+?{}[]|()\\")
_QUANTIFIERS = frozenset("?*{")  # the character before may be absent from a match
_FLAGS_RE = re.compile(r"\(\?[aiLmsux-]+[:)]")


@dataclass(frozen=True, slots=True)
class Signature:
    regex: str
    literal: str  # in every match ("" when the regex's source does not tell)

    @property
    def pattern(self) -> re.Pattern[str]:
        """Compiled on first use: most signatures never meet a line with their text."""
        return _compiled(self.regex)

    def search(self, line: str) -> re.Match[str] | None:
        if self.literal not in line:
            return None
        return _compiled(self.regex).search(line)


def compile_signature(regex: str, *, check: bool = True) -> Signature:
    """Raises re.error for a bad regex (`check`: compiled now; else at its first use)."""
    if check:
        _compiled(regex)
    return Signature(regex, required_literal(regex))


@functools.cache
def _compiled(regex: str) -> re.Pattern[str]:
    return re.compile(regex)


def required_literal(regex: str) -> str:
    """The longest run of plain characters that every match of `regex` contains."""
    if _FLAGS_RE.search(regex):
        return ""  # inline flags ((?i), (?x:...)) change what the characters match
    runs: list[str] = []
    run: list[str] = []
    index = 0
    while index < len(regex):
        char = regex[index]
        if char == "\\" and index + 1 < len(regex):
            escaped = regex[index + 1]
            index += 2
            if escaped.isalnum() or escaped == "_":  # \d, \s, \b, \n, \1, ...: not plain
                runs.append("".join(run))
                run = []
            else:
                run.append(escaped)
            continue
        if char in _QUANTIFIERS:
            if run:
                run.pop()  # "colou?r": the "u" may be missing
            runs.append("".join(run))
            run = []
            index = _after_quantifier(regex, index)
            continue
        if char == "|":
            return ""  # a top-level alternation: no run is in every match
        if char in _SPECIAL:
            runs.append("".join(run))
            run = []
            if char == "(":
                index = _after_group(regex, index)
            elif char == "[":
                index = _after_class(regex, index)
            else:  # . ^ $ + )
                index += 1
            continue
        run.append(char)
        index += 1
    runs.append("".join(run))
    return max(runs, key=len)


def _after_quantifier(regex: str, index: int) -> int:
    if regex[index] == "{":
        close = regex.find("}", index)
        return len(regex) if close == -1 else close + 1
    return index + 1


def _after_class(regex: str, index: int) -> int:
    """Index after the character class that starts at `index` ("[")."""
    index += 1
    if index < len(regex) and regex[index] == "^":
        index += 1
    if index < len(regex) and regex[index] == "]":
        index += 1  # "[]a]": a leading "]" is a member
    while index < len(regex):
        if regex[index] == "\\":
            index += 2
            continue
        if regex[index] == "]":
            return index + 1
        index += 1
    return index


def _after_group(regex: str, index: int) -> int:
    """Index after the group that starts at `index` ("("), classes and escapes skipped."""
    depth = 0
    while index < len(regex):
        char = regex[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            index = _after_class(regex, index)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return index


@dataclass(frozen=True, slots=True)
class Alternation:
    """A regex of many branches, as a test of a line: a branch with plain text is tried
    only on lines that contain it, the branches without as one regex. The same answer as
    the whole regex's search, without trying every branch at every position of a line."""

    guarded: tuple[tuple[str, str], ...]  # (plain text, branch), compiled at first use
    rest: Callable[[str], re.Match[str] | None] | None

    def found(self, line: str) -> bool:
        if self.rest is not None and self.rest(line):
            return True
        return any(text in line and _compiled(branch).search(line) for text, branch in self.guarded)


def alternation(pattern: re.Pattern[str]) -> Alternation:
    """`pattern` (no flags) split at its top-level `|`."""
    if pattern.flags & ~re.UNICODE:
        return Alternation((), pattern.search)
    guarded, rest = [], []
    for branch in branches(pattern.pattern):
        text = required_literal(branch)
        if text:
            guarded.append((text, branch))
        else:
            rest.append(branch)
    together = re.compile("|".join(rest)).search if rest else None
    return Alternation(tuple(guarded), together)


def branches(regex: str) -> list[str]:
    """The branches of `regex`'s top-level alternation (one when it has none)."""
    found = []
    start = index = 0
    while index < len(regex):
        char = regex[index]
        if char == "\\":
            index += 2
        elif char == "(":
            index = _after_group(regex, index)
        elif char == "[":
            index = _after_class(regex, index)
        elif char == "|":
            found.append(regex[start:index])
            index += 1
            start = index
        else:
            index += 1
    found.append(regex[start:])
    return found
