"""Modules imported at their first use (doit's start-up imports only what a command runs)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from xdnaforge.actions import lazy


def test_a_module_runs_when_one_of_its_attributes_is_first_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = tmp_path / "ran"
    (tmp_path / "lazy_probe.py").write_text(f"open({str(ran)!r}, 'a').write('x')\nVALUE = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lazy_probe", raising=False)
    probe = lazy.module("lazy_probe")
    assert not ran.exists()
    assert probe.VALUE == 7
    assert ran.read_text() == "x"
    assert lazy.module("lazy_probe") is probe  # once: the same module, not run again
    assert ran.read_text() == "x"
    monkeypatch.delitem(sys.modules, "lazy_probe")


def test_a_missing_module_is_an_error_at_once() -> None:
    with pytest.raises(ModuleNotFoundError, match="xdnaforge_no_such_module"):
        lazy.module("xdnaforge_no_such_module")
