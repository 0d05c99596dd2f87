"""Timing helpers shared by the bench scripts (not a test: scripts print figures)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best(repeat: int, action: Callable[[], object]) -> float:
    """The shortest wall time of `repeat` runs of action: the least disturbed by the machine."""
    times = []
    for _ in range(repeat):
        started = time.monotonic()
        action()
        times.append(time.monotonic() - started)
    return min(times)
