"""A knowledge entry's signature: its regex and the plain text every match contains.

Pure. Each line doctor classifies is tried against every signature of the knowledge base;
most signatures start with words of the message they name ("Invalid mbox magic",
"DRM_IOCTL_AMDXDNA_EXEC_CMD IOCTL failed"), so a line without those words is passed by a
substring test, and the regex runs only on lines that contain them. The required text is
read from the regex's own source: the longest run of plain characters outside classes,
quantified characters and optional groups (a group in every match gives its own); a
case-insensitive regex ((?i) at its start, or (?i:...) around it) gives its lowered text,
looked for in the lowered line; none at all where the regex has a top-level alternation
or other inline flags (then the regex always runs). A regex is compiled when a line first
contains its text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

_SPECIAL = frozenset(".^$*+?{}[]|()\\")
_QUANTIFIERS = frozenset("?*{")  # the character before may be absent from a match
_FLAGS_RE = re.compile(r"\(\?[aiLmsux-]+[:)]")
_SCOPED_RE = re.compile(r"\(\?i:(.*)\)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Signature:
    regex: str
    literal: str  # in every match ("" when the regex's source does not tell)
    folded: bool = False  # a (?i) regex: `literal` is lowercase, in every match lowered

    @property
    def pattern(self) -> re.Pattern[str]:
        """Compiled on first use: most signatures never meet a line with their text."""
        return _compiled(self.regex)

    def search(self, line: str) -> re.Match[str] | None:
        if not contains(line, self.literal, self.folded):
            return None
        return self.search_regex(line)

    def search_regex(self, line: str) -> re.Match[str] | None:
        """The regex alone, for a caller that has looked for the text itself. A regex that
        begins with its text and then ".*" ("(?i)version.*(incompatible|...)") matches a
        line if and only if it matches from the text's first place in it, and the search
        would find that same match there: it is tried there alone, where the search tried
        it again from each later place (quadratic on a line of the text repeated). The same
        holds for a head of alternatives before the ".*" ("\\b(npu|xdna)\\b.*\\bnot found"):
        it is tried from the first place its head matches (`_head`)."""
        if _leads_with(self.regex, self.literal) and (not self.folded or line.isascii()):
            at = (line.lower() if self.folded else line).find(self.literal)
            return _compiled(self.regex).match(line, at) if at >= 0 else None
        head = _head(self.regex)
        if head is not None:
            return _from_head(_compiled(self.regex), head, line)
        return _compiled(self.regex).search(line)


def contains(line: str, literal: str, folded: bool) -> bool:
    """Whether `line` may match a regex whose required text is `literal` (False: it cannot).
    A folded literal is looked for in the lowered line where the line is ASCII: lowering
    other characters (U+0130) is not what the regex's case-insensitive match does."""
    if not folded:
        return literal in line
    return not line.isascii() or literal in line.lower()


def compile_signature(regex: str, *, check: bool = True) -> Signature:
    """Raises re.error for a bad regex (`check`: compiled now; else at its first use)."""
    if check:
        _compiled(regex)
    literal, folded = plain_text(regex)
    return Signature(regex, literal, folded)


def plain_text(regex: str) -> tuple[str, bool]:
    """(the text every match contains, whether it is lowercase for a case-insensitive
    match): a regex that starts with (?i) is read without it, and its text lowered."""
    if regex.startswith("(?i)"):
        literal = required_literal(regex[4:])
        return (literal.lower(), True) if literal.isascii() else ("", False)
    scoped = _SCOPED_RE.fullmatch(regex)  # (?i:...) around the whole regex
    if scoped and _after_group(regex, 0) == len(regex):
        literal = required_literal(scoped.group(1))
        return (literal.lower(), True) if literal.isascii() else ("", False)
    return required_literal(regex), False


@functools.cache
def _leads_with(regex: str, literal: str) -> bool:
    """Whether the regex (its "(?i)" aside) is its plain text, then ".*" not made lazy."""
    body = regex.removeprefix("(?i)")
    if not literal or body[: len(literal)].lower() != literal.lower():
        return False
    rest = body[len(literal) :]
    return rest.startswith(".*") and not rest.startswith(".*?")


def _from_head(regex: re.Pattern[str], head: re.Pattern[str], line: str) -> re.Match[str] | None:
    """`regex.search(line)` for a regex that is `head`, ".*", then the rest. Tried from the
    head's first place (start s, end e): a match there is the leftmost one. If there is
    none, the rest matches nowhere from e on (the ".*" reached every place), so a later
    head can only help if it ends before e: one that starts inside the first one's span
    (the head repeats nothing, so the span is a few characters). Linear in the line, where
    the search retried the ".*" from every later head (quadratic on a line of them)."""
    first = head.search(line)
    if first is None:
        return None
    found = regex.match(line, first.start())
    end, at = first.end(), first.start() + 1
    while found is None and at < end:
        inner = head.search(line, at)
        if inner is None or inner.start() >= end:
            return None
        if inner.end() < end:
            found = regex.match(line, inner.start())
        at = inner.start() + 1
    return found


@functools.cache
def _head(regex: str) -> re.Pattern[str] | None:
    """The part of a regex before its first top-level greedy ".*", compiled, when that part
    repeats nothing (no "*", "+" or "{n,m}" outside its classes, escapes and lookarounds)
    and has no top-level alternation (`_from_head` searches from it); None for any other
    regex. A regex led by its plain text has a head too, but `search_regex` takes the
    cheaper `_leads_with` path for it first."""
    flags = "(?i)" if regex.startswith("(?i)") else ""
    body = regex[len(flags) :]
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            index = _after_class(body, index)
            continue
        if char == "(":
            group = body[index : _after_group(body, index)]
            if any(c in group for c in "*+{") and not group.startswith(("(?<", "(?=", "(?!")):
                return None
            index += len(group)
            continue
        if char in "*+{|":
            return None
        if body.startswith(".*", index):
            head = body[:index]
            if body.startswith(".*?", index) or not head:
                return None
            return _compiled(flags + head)
        index += 1
    return None


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
                close = _after_group(regex, index)
                runs.append(_group_literal(regex, index, close))
                index = close
            elif char == "[":
                index = _after_class(regex, index)
            else:  # . ^ $ + )
                index += 1
            continue
        run.append(char)
        index += 1
    runs.append("".join(run))
    return max(runs, key=len)


def _group_literal(regex: str, start: int, close: int) -> str:
    """The text every match of the group regex[start:close] contains, when the group is in
    every match: not quantified to be absent, not a lookaround, not a conditional."""
    if close < len(regex) and regex[close] in _QUANTIFIERS:
        return ""
    inner = regex[start + 1 : close - 1]
    if inner.startswith("?"):
        named = re.match(r"\?P<\w+>|\?:", inner)
        if named is None:  # (?=...), (?!...), (?<=...), (?#...), (?(1)...)
            return ""
        inner = inner[named.end() :]
    return required_literal(inner)


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

    # (plain text, branch), each branch compiled at first use; folded: lowercase texts of
    # case-insensitive branches
    guarded: tuple[tuple[str, str], ...]
    folded: tuple[tuple[str, str], ...]
    rest: Callable[[str], re.Match[str] | None] | None

    def found(self, line: str) -> bool:
        if self.rest is not None and self.rest(line):
            return True
        candidates = [branch for text, branch in self.guarded if text in line]
        if self.folded:
            lowered = line.lower() if line.isascii() else None
            candidates += [b for text, b in self.folded if lowered is None or text in lowered]
        return any(_compiled(branch).search(line) for branch in candidates)


def alternation(pattern: re.Pattern[str]) -> Alternation:
    """`pattern` (no flags) split at its top-level `|`."""
    if pattern.flags & ~re.UNICODE:
        return Alternation((), (), pattern.search)
    guarded: list[tuple[str, str]] = []
    folded: list[tuple[str, str]] = []
    rest: list[str] = []
    for branch in branches(pattern.pattern):
        text, lowered = plain_text(branch)
        if not text:
            rest.append(branch)
        else:
            (folded if lowered else guarded).append((text, branch))
    together = re.compile("|".join(rest)).search if rest else None
    return Alternation(tuple(guarded), tuple(folded), together)


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
