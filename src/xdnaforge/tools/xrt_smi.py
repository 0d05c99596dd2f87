"""xrt-smi (and FastFlowLM's `flm validate`): argv builders and pure parsers.

JSON is preferred (`--format JSON --output FILE`: every scalar is a string; key names
differ between the 1.6 line and main), text is understood too, older xbutil-era layouts
included, and logs cut off mid-way are parsed as far as they go.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# key and value end at a non-blank (linear: see run_outcomes._BUILT_RES)
_KEY_VALUE_RE = re.compile(r"^\s{2,}(\S(?:.*?\S)?)\s*: ((?:.*?\S)?)\s*$")
_BDF = r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F]"
# "|[0000:c5:00.1]  |NPU Strix  |" (2.18 wrote "||Name", 2.25 adds Architecture, Topology)
_ROW_RE = re.compile(rf"^\|\[?({_BDF})\]?\s*\|+\s*([^|]*?)\s*\|")
# 2.17 "Devices present" list ("[0000:c7:00.1]  :  RyzenAI-npu1") and the header of an
# `examine -r platform` report ("[0000:c5:00.1] : NPU Strix" between dashed lines)
_LISTED_RE = re.compile(rf"^\[({_BDF})\]\s+:\s+(\S(?:.*?\S)?)\s*$")
# a test's header: "Test 1 [0000:c5:00.1]     : latency" (2.11 on); 2.8-2.9 numbered it out of
# the suite ("1/5 Test #1 [0000:17:00.1]  : vcu"), 2.7 without the device ("1/5 Test #1
# : Kernel version")
_TEST_RE = re.compile(r"^(?:Test \d+ \[(\S+)\]|\d+/\d+ Test #\d+(?: \[(\S+)\])?)\s*: (\S+)")
# 2.7 printed a test's status alone, without its tag ("    [PASSED]")
_BARE_STATUS_RE = re.compile(r"^\[(PASSED|FAILED|SKIPPED|PASSED WITH WARNINGS)\]$")
# the xbutil of 2018-2020 (core/pcie/tools/xbutil/xbutil.cpp, runOneTest): "INFO: == Starting
# PCIE link check: ", then "INFO: == PCIE link check PASSED" (SKIPPED; "WARN: == ... PASSED
# with warning", "ERROR: == ... FAILED")
_LEGACY_START_RE = re.compile(r"^INFO: == Starting (\S.*?):\s*$")
_LEGACY_STATUS_RE = re.compile(
    r"^(?:INFO|WARN|ERROR): == (\S.*?) (PASSED|SKIPPED|FAILED|PASSED with warning)\s*$"
)
# a wrapped log entry of validate (SubCmdValidate.cpp: boost::format("    %-22s  %s\n") % "")
_CONTINUED_RE = re.compile(r"^\s{24,}\S")
# the tags validate prints a test's log and header with: a line under one of them that is
# none of them continues it (its indentation may be lost in a paste)
_VALIDATE_TAGS = frozenset(
    {
        "Test Status",
        "Details",
        "Error(s)",
        "Warning(s)",
        "Description",
        "Xclbin",
        "Testcase",
        "DPU-Sequence",
        "Benchmarks",
        "Validate Device",
        "Platform",
        "Power Mode",
        "Performance Mode",
        "SC Version",
    }
)
_STATUS_RE = re.compile(r"Test Status\s*: \[(PASSED|FAILED|SKIPPED|PASSED WITH WARNINGS)\]")
_NUMBER = r"'?([0-9]+(?:\.[0-9]+)?)'?"
METRICS = {
    # validate Details strings (%.1f), Windows builds quote the number: "'127.2' us"
    "gemm_tops": (re.compile(rf"TOPS: {_NUMBER}"), "TOPS"),
    "latency_us": (re.compile(rf"Average latency: {_NUMBER} us"), "us"),
    # "op/s" (v16), "ops/s" (runlist tests), plain "ops" in some builds' text output
    "throughput_ops": (re.compile(rf"Average throughput: {_NUMBER} ops?(?:/s)?"), "op/s"),
}


def examine_argv(output: Path) -> list[str]:
    return ["xrt-smi", "examine", "--format", "JSON", "--output", str(output)]


def validate_argv(output: Path) -> list[str]:
    return ["xrt-smi", "validate", "--format", "JSON", "--output", str(output)]


@dataclass(frozen=True, slots=True)
class Device:
    bdf: str
    name: str
    firmware: str | None = None


@dataclass(frozen=True, slots=True)
class Examine:
    xrt_version: str | None
    drivers: dict[str, str] = field(default_factory=dict)  # name -> "version, hash"
    devices: tuple[Device, ...] = ()
    firmware: str | None = None


@dataclass(frozen=True, slots=True)
class TestResult:
    name: str
    status: str  # PASSED, FAILED, SKIPPED, PASSED WITH WARNINGS
    details: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Validation:
    device: str | None
    platform: str | None
    power_mode: str | None
    tests: tuple[TestResult, ...]

    def metrics(self) -> dict[str, float]:
        """gemm_tops, latency_us, throughput_ops from the tests of those names."""
        found: dict[str, float] = {}
        wanted = {"gemm": "gemm_tops", "latency": "latency_us", "throughput": "throughput_ops"}
        for test in self.tests:
            metric = wanted.get(test.name)
            if metric is None or test.status not in ("PASSED", "PASSED WITH WARNINGS"):
                continue
            pattern = METRICS[metric][0]
            for detail in test.details:
                match = pattern.search(detail)
                if match:
                    found[metric] = float(match.group(1))
        return found


def parse_examine_json(text: str) -> Examine:
    data: dict[str, Any] = json.loads(text)
    host = data.get("system", {}).get("host", {})
    xrt = host.get("xrt", {}) if isinstance(host, dict) else {}
    drivers = {}
    for driver in xrt.get("drivers", []) or []:
        if isinstance(driver, dict) and driver.get("name"):
            drivers[driver["name"]] = f"{driver.get('version', '')}, {driver.get('hash', '')}"
    devices = []
    firmware = None
    # ReportHost::getPropertyTree20202 writes host.devices; a ptree's empty list is ""
    listed = host.get("devices") if isinstance(host, dict) else None
    for device in listed or xrt.get("devices", []) or data.get("devices", []) or []:
        if not isinstance(device, dict):
            continue
        fw = device.get("firmware_version") or None
        firmware = firmware or fw
        devices.append(
            Device(
                bdf=str(device.get("bdf") or device.get("device_id") or ""),
                name=str(device.get("name") or device.get("vbnv") or ""),
                firmware=fw,
            )
        )
    return Examine(
        xrt_version=xrt.get("version") or None,
        drivers=drivers,
        devices=tuple(devices),
        firmware=firmware,
    )


def parse_examine_text(text: str) -> Examine:
    section = ""
    values: dict[str, str] = {}
    drivers: dict[str, str] = {}
    devices = []
    for line in text.splitlines():
        row = _ROW_RE.match(line.strip()) or _LISTED_RE.match(line.strip())
        if row:
            devices.append(Device(bdf=row.group(1), name=row.group(2).strip()))
            continue
        if line and not line.startswith((" ", "|", "WARNING")):
            section = line.strip()
            continue
        match = _KEY_VALUE_RE.match(line)
        if not match:
            continue
        key, value = match.group(1), match.group(2)
        if section == "XRT" and key.split()[0] in ("amdxdna", "xocl", "xclmgmt", "virtio-pci"):
            drivers[key.split()[0]] = value
        values.setdefault(key, value)
    firmware = values.get("NPU Firmware Version")
    if devices and firmware:
        devices = [Device(bdf=d.bdf, name=d.name, firmware=firmware) for d in devices]
    return Examine(
        xrt_version=values.get("Version"),
        drivers=drivers,
        devices=tuple(devices),
        firmware=firmware,
    )


def parse_validate_json(text: str) -> Validation:
    data: dict[str, Any] = json.loads(text)
    devices = data.get("logical_devices") or []
    if not isinstance(devices, list) or not devices:
        # validate stopped on an exception: the report has "logical_devices": ""
        return Validation(device=None, platform=None, power_mode=None, tests=())
    device = devices[0]
    tests = []
    for test in device.get("tests", []) or []:
        details, errors = [], []
        for entry in test.get("log", []) or []:
            for tag, message in entry.items() if isinstance(entry, dict) else []:
                if tag == "Details":
                    details.append(str(message))
                elif tag in ("Error", "Error(s)"):
                    errors.append(str(message))
        tests.append(
            TestResult(
                name=str(test.get("name", "")),
                status=str(test.get("status", "")).upper(),
                details=tuple(details),
                errors=tuple(errors),
            )
        )
    return Validation(
        device=device.get("device_id"),
        platform=device.get("platform"),
        power_mode=device.get("power_mode"),
        tests=tuple(tests),
    )


def _continues(line: str, stripped: str) -> bool:
    """A line that continues the entry above it rather than starting a new one."""
    if _CONTINUED_RE.match(line):
        return True
    key = stripped.split(":", 1)[0].strip() if ":" in stripped else ""
    return (
        bool(key)
        and key not in _VALIDATE_TAGS
        and not key.startswith(("Error", "Warning"))
        and not stripped.startswith(("-", "Test "))
    )


def parse_validate_text(text: str) -> Validation:
    device = platform = power = None
    tests: list[TestResult] = []
    current: dict[str, Any] | None = None

    def close() -> None:
        if current is not None:
            tests.append(
                TestResult(
                    name=current["name"],
                    status=current["status"],
                    details=tuple(current["details"]),
                    errors=tuple(current["errors"]),
                )
            )

    continued = ""  # the log tag a wrapped entry continues ("    %-22s  %s": 28 columns in)
    for line in text.splitlines():
        stripped = line.strip()
        test = _TEST_RE.match(stripped) or _LEGACY_START_RE.match(stripped)
        if test:
            close()
            name = test.group(test.lastindex or 1)
            current = {"name": name, "status": "UNKNOWN", "details": [], "errors": []}
            continued = ""
            continue
        legacy = _LEGACY_STATUS_RE.match(stripped) if stripped.endswith(("D", "g")) else None
        if legacy and current is not None and legacy.group(1) == current["name"]:
            status_word = legacy.group(2).upper()
            current["status"] = "PASSED WITH WARNINGS" if " " in status_word else status_word
            continue
        if current is not None and continued and stripped and _continues(line, stripped):
            current[continued].append(stripped)
            continue
        status = _STATUS_RE.search(stripped) or _BARE_STATUS_RE.match(stripped)
        if status and current is not None:
            current["status"] = status.group(1)
            continue
        match = _KEY_VALUE_RE.match(line) or re.match(r"^(\S(?:.*?\S)?)\s*: (.*)$", stripped)
        if not match:
            continue
        key, value = match.group(1).strip(), match.group(2).strip()
        if key == "Validate Device":
            device = value.strip("[]")
        elif key == "Platform":
            platform = value
        elif key in ("Power Mode", "Performance Mode"):  # 2.17 (2024.1) said "Performance Mode"
            power = value
        elif current is not None and key == "Details":
            current["details"].append(value)
            continued = "details"
        elif current is not None and key.startswith("Error"):
            current["errors"].append(value)
            continued = "errors"
        else:
            continued = ""
    close()
    return Validation(device=device, platform=platform, power_mode=power, tests=tuple(tests))


@dataclass(frozen=True, slots=True)
class FlmValidate:
    node: str | None
    firmware: str | None
    driver_version: str | None
    memlock: str | None
    errors: tuple[str, ...]


def parse_flm_validate(text: str) -> FlmValidate:
    """FastFlowLM's `flm validate` ("[Linux]  NPU FW Version: 1.1.2.64", "[ERROR] ..."), in
    the shapes its public sample outputs show: Lemonade's guide ("[Linux]  NPU:
    /dev/accel/accel0 with 8 columns") and the pull request that added the command
    ("[Linux]  Kernel Version: ...", "[Linux]  Found AMD NPU at /dev/accel/accel0"); no
    source of FastFlowLM after 0.9.2 is public."""
    values: dict[str, str] = {}
    errors = []
    for line in text.splitlines():
        match = re.match(r"^\[(Linux|ERROR)\]\s+(.*)$", line.strip())
        if not match:
            continue
        if match.group(1) == "ERROR":
            errors.append(match.group(2).strip())
            continue
        key, _, value = match.group(2).partition(":")
        values.setdefault(key.strip(), value.strip())
    node = values.get("NPU", "").split(" with ")[0] or None
    if node is None:  # the first release's shape (FastFlowLM pull request #365, Feb 2026)
        found = next((k for k in values if k.startswith("Found AMD NPU at ")), "")
        node = found.removeprefix("Found AMD NPU at ").strip() or None
    return FlmValidate(
        node=node,
        firmware=values.get("NPU FW Version"),
        driver_version=values.get("amdxdna version"),
        memlock=values.get("Memlock Limit"),
        errors=tuple(errors),
    )
