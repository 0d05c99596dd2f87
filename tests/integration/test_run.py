"""run.run(): the one place processes start; real processes here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from xdnaforge.errors import ToolNotFound
from xdnaforge.process.run import CommandFailed, run


def test_environment_is_rebuilt_from_the_allowlist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LD_LIBRARY_PATH", "/stale/xrt/lib")
    result = run(
        [sys.executable, "-c", "import json, os; print(json.dumps(sorted(os.environ)))"],
        cwd=tmp_path,
        timeout=30,
        env={"EXTRA": "1"},
    )
    names = json.loads(result.stdout)
    assert "LD_LIBRARY_PATH" not in names
    assert {"EXTRA", "LC_ALL", "LANG", "PATH"} <= set(names)


def test_failure_shows_status_tail_and_log(tmp_path: Path) -> None:
    log = tmp_path / "logs/step.log"
    with pytest.raises(CommandFailed) as caught:
        run(
            [sys.executable, "-c", "import sys; print('line one'); sys.exit(3)"],
            cwd=tmp_path,
            timeout=30,
            log_file=log,
        )
    text = str(caught.value)
    assert "exit status 3" in text
    assert "| line one" in text
    assert f"full log: {log}" in text
    assert "line one" in log.read_text()
    assert log.read_text().startswith("+ ")


def test_ok_codes_accept_a_documented_nonzero_status(tmp_path: Path) -> None:
    result = run(
        [sys.executable, "-c", "raise SystemExit(1)"], cwd=tmp_path, timeout=30, ok_codes=(0, 1)
    )
    assert result.returncode == 1


def test_a_hung_command_is_stopped_and_said_so(tmp_path: Path) -> None:
    with pytest.raises(CommandFailed) as caught:
        run([sys.executable, "-c", "import time; time.sleep(60)"], cwd=tmp_path, timeout=0.5)
    assert "no answer within 0.5 s; terminated (SIGTERM)" in str(caught.value)


def test_a_command_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', flush=True); time.sleep(60)"
    )
    with pytest.raises(CommandFailed) as caught:
        run([sys.executable, "-c", code], cwd=tmp_path, timeout=1)
    assert "killed (SIGKILL)" in str(caught.value)


def test_missing_tool_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ToolNotFound, match="xrt-smi-nope not found on PATH"):
        run(["xrt-smi-nope", "examine"], cwd=tmp_path, timeout=5)
