"""The one place that decides whether xdnaforge may change the system: only when the user
said --yes (or XDNAFORGE_ALLOW_SYSTEM_CHANGES=1), and only as root when the target is /."""

from __future__ import annotations

import os
from pathlib import Path

from xdnaforge.errors import StageFailed

ALLOW_ENV = "XDNAFORGE_ALLOW_SYSTEM_CHANGES"


def authorised(yes: bool) -> bool:
    return yes or os.environ.get(ALLOW_ENV) == "1"


def require(yes: bool, refused: str, shown: str = "the commands above") -> None:
    """Stop with `refused` unless the change was authorised; `shown` says what was printed."""
    if not authorised(yes):
        raise StageFailed(refused, hint=f"rerun with --yes (or {ALLOW_ENV}=1) to run {shown}")


def require_root(root: Path, task: str) -> None:
    if root == Path("/") and os.geteuid() != 0:
        raise StageFailed(
            "changing / needs root",
            hint=f"rerun with sudo, e.g. `sudo -E .venv/bin/doit {task} --yes`",
        )
