"""What the output shapes of the NPU tools say beyond single lines: positive evidence of a
working stack, and findings that need numbers compared (FastFlowLM's floors).

Pure. Shapes read: xrt-smi/xbutil validate text (2.17 "Performance Mode" .. 2.21 "Power
Mode", Linux and Windows) and JSON, xrt-smi examine (devices listed, "0 devices found"),
`flm validate`, the xdna-driver example tests ("TEST PASSED!" with its latency). Findings
are returned as `xdnaforge: ...` lines that knowledge.yaml entries match, so the knowledge
base stays the one place that names causes and fixes.
"""

from __future__ import annotations

import contextlib
import re

from xdnaforge.diagnosis.knowledge import ANNOTATION
from xdnaforge.tools.xrt_smi import (
    parse_examine_text,
    parse_flm_validate,
    parse_validate_json,
    parse_validate_text,
)

# FastFlowLM's floors (its `flm validate`: firmware major.minor >= 1.1, amdxdna DRM >= 0.6)
FLM_FIRMWARE_FLOOR = (1, 1)
FLM_DRIVER_FLOOR = (0, 6)
_NOOP_LATENCY_RE = re.compile(r"Host test average latency: (\d+(?:\.\d+)?) us/iter")
_NOOP_PASSED_RE = re.compile(r"^TEST PASSED!?\s*$", re.MULTILINE)


def _version(text: str | None) -> tuple[int, ...] | None:
    match = re.match(r"\s*(\d+)\.(\d+)", text or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def _body(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith(ANNOTATION))


def findings(text: str) -> list[str]:
    """Evidence lines for what only a comparison shows (FastFlowLM floors)."""
    flm = parse_flm_validate(_body(text))
    lines = []
    firmware = _version(flm.firmware)
    if firmware is not None and firmware < FLM_FIRMWARE_FLOOR:
        lines.append(f"xdnaforge: NPU firmware {flm.firmware} is below FastFlowLM's 1.1")
    driver = _version(flm.driver_version)
    if driver is not None and driver < FLM_DRIVER_FLOOR:
        lines.append(f"xdnaforge: amdxdna version {flm.driver_version} is below FastFlowLM's 0.6")
    return lines


def healthy_evidence(text: str) -> str | None:
    """Positive signs of a working stack; without them a log is not called healthy."""
    body = _body(text)
    validation = parse_validate_text(body)
    if "{" in body and not validation.tests:
        with contextlib.suppress(ValueError):
            validation = parse_validate_json(body[body.index("{") :])
    statuses = [t.status for t in validation.tests]
    passed = [s for s in statuses if s.startswith("PASSED")]
    if passed and not any(s in ("FAILED", "UNKNOWN") for s in statuses):
        return f"xrt-smi validate: {len(passed)} test(s) passed"
    # a JSON report cut off mid-way: count the statuses it did record
    recorded = [s.upper() for s in re.findall(r'"status":\s*"([\w ]+)"', body)]
    if recorded and all(s.startswith("PASSED") for s in recorded):
        return f"xrt-smi validate (JSON): {len(recorded)} test(s) passed"
    if _NOOP_PASSED_RE.search(body):
        latency = _NOOP_LATENCY_RE.search(body)
        figure = f", average latency {latency.group(1)} us" if latency else ""
        return f"example test PASSED{figure}"
    examine = parse_examine_text(body)
    if examine.devices:
        return f"xrt-smi examine: {', '.join(d.name for d in examine.devices)} present"
    flm = parse_flm_validate(body)
    if flm.node and not flm.errors:
        return f"flm validate: NPU {flm.node}, firmware {flm.firmware}"
    return None
