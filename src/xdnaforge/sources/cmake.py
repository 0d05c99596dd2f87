"""Reading CMake files without CMake: commands with their arguments and line numbers, and
a three-valued evaluation of simple if() conditions.

Pure: text in, data out. It understands what the survey needs (command calls, quoted
arguments, comments, `${VAR}`), not the CMake language; a condition it cannot decide is
None ("may be true"), so the survey errs on the side of reading a branch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_CALL_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_VAR_RE = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
FALSE_WORDS = {"", "0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND"}
TRUE_WORDS = {"1", "ON", "YES", "TRUE", "Y"}
# platform variables a Linux build sees
PLATFORM = {"WIN32": "0", "MSVC": "0", "APPLE": "0", "CYGWIN": "0", "MINGW": "0", "UNIX": "1"}
_OPERATORS = {
    "STREQUAL",
    "EQUAL",
    "VERSION_LESS",
    "VERSION_GREATER",
    "VERSION_EQUAL",
    "VERSION_GREATER_EQUAL",
    "VERSION_LESS_EQUAL",
    "MATCHES",
    "LESS",
    "GREATER",
}


@dataclass(frozen=True, slots=True)
class Command:
    name: str  # lowercased
    args: tuple[str, ...]
    line: int


def _strip_comments(text: str) -> str:
    """Comments become spaces (newlines kept, so line numbers stay right)."""
    out = []
    quoted = False
    index = 0
    while index < len(text):
        char = text[index]
        if char == '"' and (index == 0 or text[index - 1] != "\\"):
            quoted = not quoted
        if char == "#" and not quoted:
            end = text.find("\n", index)
            end = len(text) if end < 0 else end
            out.append(" " * (end - index))
            index = end
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _split_args(text: str) -> tuple[str, ...]:
    return tuple(
        match.group(1) if match.group(1) is not None else match.group(2)
        for match in re.finditer(r'"((?:[^"\\]|\\.)*)"|([^\s()"]+|[()])', text)
    )


def parse_commands(text: str) -> list[Command]:
    """Every command call in order, with its arguments (quotes removed) and its line."""
    clean = _strip_comments(text)
    commands: list[Command] = []
    position = 0
    while True:
        match = _CALL_RE.search(clean, position)
        if match is None:
            return commands
        depth = 1
        index = match.end()
        quoted = False
        while index < len(clean) and depth:
            char = clean[index]
            if char == '"' and clean[index - 1] != "\\":
                quoted = not quoted
            elif not quoted:
                depth += {"(": 1, ")": -1}.get(char, 0)
            index += 1
        body = clean[match.end() : index - 1]
        line = clean.count("\n", 0, match.start()) + 1
        commands.append(Command(match.group(1).lower(), _split_args(body), line))
        position = index


def expand(text: str, variables: Mapping[str, str]) -> str | None:
    """`${VAR}` replaced; None when a variable is unknown."""
    unknown = False

    def value(match: re.Match[str]) -> str:
        nonlocal unknown
        if match.group(1) not in variables:
            unknown = True
            return ""
        return variables[match.group(1)]

    result = _VAR_RE.sub(value, text)
    return None if unknown else result


def _atom(token: str, variables: Mapping[str, str]) -> bool | None:
    text = expand(token, variables)
    if text is None:
        return None
    if text.upper() in TRUE_WORDS:
        return True
    if text.upper() in FALSE_WORDS or text.upper().endswith("-NOTFOUND"):
        return False
    if text in variables:
        return variables[text].upper() not in FALSE_WORDS
    return None


def evaluate(args: tuple[str, ...], variables: Mapping[str, str]) -> bool | None:
    """True, False or None (cannot tell) for an if() condition: NOT, AND, OR, parentheses,
    STREQUAL, MATCHES and the VERSION_ comparisons."""
    known = {**PLATFORM, **variables}
    try:
        value, rest = _expression(list(args), known)
    except (IndexError, ValueError):
        return None
    return value if not rest else None


def _expression(tokens: list[str], known: Mapping[str, str]) -> tuple[bool | None, list[str]]:
    """OR of ANDs of (NOT) terms; returns the value and the tokens after it."""
    value, tokens = _term(tokens, known)
    while tokens and tokens[0] in ("AND", "OR"):
        join = tokens[0]
        right, tokens = _term(tokens[1:], known)
        value = _and(value, right) if join == "AND" else _or(value, right)
    return value, tokens


def _term(tokens: list[str], known: Mapping[str, str]) -> tuple[bool | None, list[str]]:
    if tokens[0] == "NOT":
        value, rest = _term(tokens[1:], known)
        return (None if value is None else not value), rest
    if tokens[0] == "(":
        value, rest = _expression(tokens[1:], known)
        if not rest or rest[0] != ")":
            raise ValueError("unbalanced")
        return value, rest[1:]
    if len(tokens) >= 3 and tokens[1] in _OPERATORS:
        left, op, right = tokens[0], tokens[1], tokens[2]
        a = expand(left, known) if "${" in left else known.get(left, left)
        b = expand(right, known) if "${" in right else right
        value = None if a is None or b is None else _compare(op, a, b)
        return value, tokens[3:]
    if tokens[0] in ("DEFINED", "TARGET", "EXISTS", "COMMAND", "POLICY"):
        return None, tokens[2:]
    return _atom(tokens[0], known), tokens[1:]


def _compare(op: str, a: str, b: str) -> bool | None:
    if op == "STREQUAL":
        return a == b
    if op == "MATCHES":
        try:
            return re.search(b, a) is not None
        except re.error:
            return None
    if op.startswith("VERSION_"):
        left = tuple(int(p) for p in re.findall(r"\d+", a))
        right = tuple(int(p) for p in re.findall(r"\d+", b))
        if not left or not right:
            return None
        return {
            "VERSION_LESS": left < right,
            "VERSION_GREATER": left > right,
            "VERSION_EQUAL": left == right,
            "VERSION_GREATER_EQUAL": left >= right,
            "VERSION_LESS_EQUAL": left <= right,
        }[op]
    return None


def _and(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return True if a and b else None


def _or(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    return False if a is False and b is False else None
