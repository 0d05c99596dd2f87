"""The compat verdict of the host a command runs on: its facts read under the site's sysroot
(compat/observe.py), judged against the shipped upstream facts (compat/resolver.py)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from xdnaforge.compat.facts import load_upstream
from xdnaforge.compat.observe import observe
from xdnaforge.compat.resolver import Verdict, resolve
from xdnaforge.config.recipe import Recipe
from xdnaforge.host import HostFacts


def verdict_here(
    sysroot: Path, host: HostFacts, recipes: Iterable[Recipe], kernel_log: str | None = None
) -> Verdict:
    """`host`: its facts as the command read them; `kernel_log`: a log already read (else
    observe reads the sysroot's)."""
    return resolve(observe(sysroot, kernel_log, host=host), load_upstream(), list(recipes))
