"""The commands a dodo module defines, read from its task creators (name, doc line, options),
for the overview, shell completion and the man page; runs no task."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Command:
    name: str
    doc: str
    params: tuple[dict[str, Any], ...]


def commands(dodo: ModuleType) -> list[Command]:
    """Every public task of `dodo`, in the order dodo.py defines them."""
    found = []
    for attribute, creator in vars(dodo).items():
        if not attribute.startswith("task_") or not callable(creator):
            continue
        made: Callable[[], dict[str, Any]] = creator
        task = made()
        name = str(task.get("basename") or attribute.removeprefix("task_"))
        if name.startswith("_"):
            continue
        doc = (creator.__doc__ or "").strip().splitlines()
        found.append(
            Command(name=name, doc=doc[0] if doc else "", params=tuple(task.get("params", ())))
        )
    return found
