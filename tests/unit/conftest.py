"""Unit tests test the pure core: any attempt to start a process fails the test."""

from __future__ import annotations

import os
import subprocess
from typing import NoReturn

import pytest


def _refuse(*_args: object, **_kwargs: object) -> NoReturn:
    raise AssertionError("unit tests must not run processes; move this test to tests/integration")


@pytest.fixture(autouse=True)
def no_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subprocess.Popen, "__init__", _refuse)
    for name in ("system", "fork", "execv", "execve", "execvp", "posix_spawn", "posix_spawnp"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, _refuse)
