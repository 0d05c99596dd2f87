"""On a machine with an NPU and the stack installed (`pytest -m hardware`): the parsers read
what the real tools print, and the recordings in tests/fixtures/recordings can be refreshed
from it (set XDNAFORGE_RECORD=<scenario folder> to write them)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from xdnaforge.tools.xrt_smi import parse_examine_json, parse_validate_json

pytestmark = pytest.mark.hardware
XRT_SMI = shutil.which("xrt-smi") or "/opt/xilinx/xrt/bin/xrt-smi"


def _run(tmp_path: Path, sub: str) -> str:
    output = tmp_path / f"{sub}.json"
    subprocess.run(
        [XRT_SMI, sub, "--format", "JSON", "--output", str(output)], check=False, timeout=600
    )
    text = output.read_text()
    record = os.environ.get("XDNAFORGE_RECORD")
    if record:
        target = Path(record) / "xrt-smi" / f"{sub}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return text


def test_examine_reports_an_npu(tmp_path: Path) -> None:
    report = parse_examine_json(_run(tmp_path, "examine"))
    assert report.devices
    assert report.xrt_version


def test_validate_reports_figures(tmp_path: Path) -> None:
    report = parse_validate_json(_run(tmp_path, "validate"))
    assert report.tests
    assert report.metrics()
