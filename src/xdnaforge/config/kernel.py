"""Kernel release strings and version ranges (`>=7.0, <7.1`); pure."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

_RELEASE_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:[-.+](\d+))?")
_CONSTRAINT_RE = re.compile(r"^\s*(>=|<=|==|>|<)\s*(\d+(?:\.\d+){0,3})\s*$")
_OPERATORS: dict[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    ">": operator.gt,
    "<": operator.lt,
}


def parse_release(release: str) -> tuple[int, int, int, int] | None:
    """`7.0.0-27-generic` -> (7, 0, 0, 27); None when it does not start like a kernel release."""
    match = _RELEASE_RE.match(release.strip())
    if not match:
        return None
    major, minor, patch, abi = match.groups()
    return int(major), int(minor), int(patch or 0), int(abi or 0)


@dataclass(frozen=True, slots=True)
class KernelRange:
    """A conjunction of constraints on the numeric kernel version."""

    text: str
    constraints: tuple[tuple[str, tuple[int, ...]], ...]

    def contains(self, release: str) -> bool:
        version = parse_release(release)
        if version is None:
            return False
        # compare only as many components as the bound names: "<7.1" ignores the patch level
        return all(_OPERATORS[op](version[: len(bound)], bound) for op, bound in self.constraints)


def parse_range(text: str) -> KernelRange:
    """Parse `>=7.0, <7.1`; raise ValueError naming which part is wrong (not what it says)."""
    constraints = []
    for number, part in enumerate(text.split(","), start=1):
        match = _CONSTRAINT_RE.match(part)
        if not match:
            which = f"part {number} " if "," in text else ""
            raise ValueError(f"{which}is not a constraint like '>=7.0' (operators: >= > <= < ==)")
        op, version = match.groups()
        constraints.append((op, tuple(int(x) for x in version.split("."))))
    return KernelRange(text=text, constraints=tuple(constraints))
