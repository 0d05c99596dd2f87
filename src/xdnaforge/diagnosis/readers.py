"""What the output shapes of the NPU tools say beyond single lines: positive evidence of a
working stack, and findings that need numbers compared (FastFlowLM's floors).

Pure. Shapes read: xrt-smi/xbutil validate text (2.17 "Performance Mode" .. 2.25 "Power
Mode", Linux and Windows, and a report cut off after a test's details) and JSON, the
examine host report (diagnosis/examine_report.py), `flm validate` (its text shapes and
`--json`), the xdna-driver example tests ("TEST PASSED!" with its latency), the shim's
debug output of a created hardware context, FastFlowLM runs and servers that generated
tokens, Lemonade's backend table, telemetry and CLI status block, mlir-aie's lit
configuration finding the NPU, test runners (ctest,
gtest, pytest, lit, shim_test, mlir-aie's programs) whose every test passed, a DKMS build
and install of amdxdna, lspci's bound driver, and in a kernel log the driver's probe:
completed ("[drm] Initialized amdxdna ..."), or deferred (EPROBE_DEFER) and then carried
on; last, what any other program says of its own run (diagnosis/run_outcomes.py). A
degenerate generation, a failed test run, an unbound NPU, a not-ready `flm validate
--json` or a backtrace blocked in the shim's waits is a finding. Findings are returned as
`xdnaforge: ...` lines that knowledge.yaml entries match, so the knowledge base stays the
one place that names causes and fixes.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING

from xdnaforge.diagnosis import examine_report
from xdnaforge.diagnosis.knowledge import ANNOTATION, NPU_RE, looks_failed
from xdnaforge.host import NPU_GENERATIONS

if TYPE_CHECKING:
    from xdnaforge.tools.xrt_smi import TestResult, Validation

# xdnaforge.tools.xrt_smi (its parsers) is imported by the readers that parse tool output,
# when a log has some: a journal has none, and its start-up is part of doctor's time there

# FastFlowLM's floors (its `flm validate`: firmware major.minor >= 1.1, amdxdna DRM >= 0.6)
FLM_FIRMWARE_FLOOR = (1, 1)
FLM_DRIVER_FLOOR = (0, 6)
_NOOP_LATENCY_RE = re.compile(r"Host test average latency: (\d+(?:\.\d+)?) us/iter")
_NOOP_PASSED_RE = re.compile(r"^TEST PASSED!?\s*$", re.MULTILINE)
# FastFlowLM (run, serve, bench) reports each generation's speed when it completed one; its
# server's API answers carry it in `usage` as "decoding_speed_tps", a field of FastFlowLM's
# own (Lemonade reads it from FLM only: src/cpp/server/streaming_proxy.cpp, cli/bench.cpp)
_FLM_DECODED_RE = re.compile(
    r"(?i)\bdecoding speed:\s*([0-9.]+)\s*tokens?/s"
    r'|"decoding_speed_tps"\s*:\s*([0-9.]*[1-9][0-9.]*)'
)
# the shim's debug output (XRT's verbose mode; xdna-driver src/shim/hwctx.cpp and
# umq/hwctx.cpp, every 1.x branch and main: shim_debug("Created KMQ HW context (%d)")): the
# firmware gave the program a hardware context
_SHIM_CONTEXT_RE = re.compile(r"\bCreated (KMQ|UMQ) HW context \((\d+)\)")
# ... and device.cpp's shim_debug("Created device (%s) ...") (1.4: "Created KMQ device"):
# the shim opened the NPU and read what it is
_SHIM_DEVICE_RE = re.compile(r"\bCreated (?:KMQ |UMQ )?device \(([\w:.]+)\) \.\.\.")
# the driver's probe in a kernel log ("amdxdna 0000:c5:00.1: ..." or "amdxdna axi:ve2: ..."),
# and drm_dev_register's "Initialized %s %d.%d.%d [%s ]for %s on minor %d" (the date went in
# 6.14; a paste may end the line at the device)
_PROBED_RE = re.compile(
    r"\[drm\] Initialized amdxdna\S* (\S+) (?:\S+ )?for (\S+?)(?: on minor (\d+)|\s*$)"
)
_DRIVER_DEVICE_RE = re.compile(r"\bamdxdna ([\w:.-]+): ")
# mlir-aie's and mlir-air's lit configurations (lit.cfg.py, python/.../lit_config_helpers.py,
# every release since 2023) run `xrt-smi examine` (before that xbutil) and print this only
# for a row of its device table that names an NPU ("|[0000:41:00.1]  |NPU Phoenix  |")
_LIT_FOUND_NPU_RE = re.compile(
    r"^Found Ryzen AI device:? \|?\[?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\]?",
    re.M,
)
# a PCI address, its domain left out: what a kernel line names a PCI device by
BDF_RE = re.compile(r"\b(?:[0-9a-f]{4}:)?([0-9a-f]{2}:[0-9a-f]{2}\.[0-7])\b")
_ADDRESSES = 256  # distinct addresses a watch keeps (bounded on a hostile journal)
_DEFERRED_RE = re.compile(r"ret -517\b|(?i:deferring probe)")
# FastFlowLM's own lines or its command typed at a prompt (a line that only suggests "Run:
# flm run x" is no run of it), and the marks of an XDNA1 NPU (Phoenix, Hawk Point): its PCI id,
# firmware directory and the platform names XRT and the driver give it
_FLM_RE = re.compile(
    r"^\[(?:FLM|Linux)\]  "
    r"|^[^\w\n]{0,4}(?:(?:PS )?[\w@:~/.\\-]*[$#>][ \t]*)?flm (?:validate|run|serve)\b",
    re.M,
)
_XDNA1_RE = re.compile(
    r"amdnpu/1502_00|RyzenAI-npu1\b|\b1022:1502\b|(?i:\bphoenix\b|\bhawk point\b)"
)


# the output of a program whose shapes the readers know: xrt-smi/xbutil examine's report,
# FastFlowLM, the Vitis AI EP's summary
_OTHER_KNOWN_PROGRAM_RE = re.compile(
    r"^\s*(?:System Configuration|Device\(s\) Present)\s*$|\[Vitis AI EP\]", re.M
)
_KNOWN_PROGRAM_RE = re.compile(_OTHER_KNOWN_PROGRAM_RE.pattern + "|" + _FLM_RE.pattern, re.M)


def _hex(text: str) -> bool:
    return re.fullmatch(r"0x[0-9a-fA-F]+", text) is not None


# Lemonade's backend support check (src/cpp/server/system_info.cpp): "Requires " + the NPU
# family + " NPU"
_LEMONADE_REQUIRES_RE = re.compile(r"\bRequires ((?:AMD )?XDNA ?\d\S*(?: AMD)?) NPU\b")


def _version(text: str | None) -> tuple[int, ...] | None:
    match = re.match(r"\s*(\d+)\.(\d+)", text or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def _body(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith(ANNOTATION))


# the step of a pyxrt call a traceback ends in (tools/backtrace.python_xrt_call), as the
# knowledge's entries read it
_PYXRT_STEPS = {
    "wait": "an XRT run's wait ({at}): the command sent to the NPU did not complete",
    "hw_context": "creating an XRT hardware context ({at})",
    "bo": "allocating an XRT buffer ({at})",
    "device": "opening an XRT device ({at})",
    "xclbin": "loading an xclbin ({at})",
}


# the step of XRT's API a crash's backtrace ends in (tools/backtrace.crashed_in_xrt)
_CRASH_STEPS = {
    "run": "setting up or running an XRT kernel ({at})",
    "hw_context": "creating an XRT hardware context ({at})",
    "bo": "allocating an XRT buffer ({at})",
    "device": "opening an XRT device ({at})",
    "xclbin": "loading an xclbin ({at})",
}


def findings(text: str) -> list[str]:
    """Evidence lines for what only a comparison or a whole run shows: FastFlowLM floors, a
    test runner's failures, a degenerate generation (one token repeated)."""
    body = _body(text)
    if not body:
        return []
    from xdnaforge.diagnosis.build_errors import findings as build_findings
    from xdnaforge.tools.llm_servers import degenerate
    from xdnaforge.tools.test_runners import summaries
    from xdnaforge.tools.xrt_smi import parse_flm_validate

    flm = parse_flm_validate(body)
    lines = [f"xdnaforge: {s.describe()}" for s in summaries(body) if s.failed]
    lines += build_findings(body)  # CMake's find_package blocks, kbuild's two compilers
    required = _LEMONADE_REQUIRES_RE.search(body)
    if required:
        xdna1 = _XDNA1_RE.search(body)
        if xdna1:
            lines.append(
                f"xdnaforge: Lemonade requires an {required.group(1)} NPU; this log shows an "
                f"XDNA1 NPU ({xdna1.group(0)})"
            )
    if _FLM_RE.search(body):
        xdna1 = _XDNA1_RE.search(body)
        if xdna1:
            lines.append(
                "xdnaforge: FastFlowLM runs on XDNA2 NPUs only; this log shows an XDNA1 NPU "
                f"({xdna1.group(0)})"
            )
    empty = examine_report.no_devices(body) or examine_report.no_json_devices(body)
    if empty is not None:
        lines.append(
            f"xdnaforge: xrt-smi examine failed to find a device: no devices found ({empty})"
        )
    lines += _flm_not_ready(body)
    lines += [
        f"xdnaforge: xrt-smi context health: context {ctx} reported fatal error type {fatal}"
        for ctx, fatal in examine_report.context_health(body)
        if _hex(fatal) and int(fatal, 16) != 0
    ]
    lines += _unbound_npus(body)
    if "System compatibility check for VitisAI EP" in body:
        from xdnaforge.tools.vitis_ai import npu_checks

        checks = npu_checks(body)[-1:]  # the newest release it checked: what an install uses
        lines += [
            f"xdnaforge: Ryzen AI's npu_check refused VitisAI EP {release}: {status}"
            for release, status in checks
            if status != "OK!"
        ]
    if "Traceback (most recent" in body:
        from xdnaforge.tools.backtrace import (
            python_build_step,
            python_compile_step,
            python_missing_program,
            python_xrt_call,
        )

        called = python_xrt_call(body)
        if called is not None:
            call, at = called
            step = _PYXRT_STEPS[call].format(at=at)
            lines.append(f"xdnaforge: a Python traceback ends in {step}")
        program = python_missing_program(body)
        if program is not None:
            lines.append(
                f"xdnaforge: a Python traceback ends in starting a program that is not there "
                f"({program})"
            )
        compiling = python_compile_step(body)
        if compiling is not None:
            lines.append(
                f"xdnaforge: a Python traceback ends in mlir-aie's compiler ({compiling}): "
                "building the design failed"
            )
        building = python_build_step(body)
        if building is not None:
            lines.append(
                f"xdnaforge: a Python traceback ends in a build script's step ({building}): "
                "a program it ran exited with an error"
            )
    if "#0 " in body or "#1 " in body:
        from xdnaforge.tools.backtrace import blocked_in_shim, crashed_in_xrt

        crashed = crashed_in_xrt(body)
        if crashed is not None:
            step, function = crashed
            lines.append(f"xdnaforge: a crash ends in {_CRASH_STEPS[step].format(at=function)}")

        waiting = blocked_in_shim(body)
        if waiting is not None:
            lines.append(
                f"xdnaforge: a backtrace shows the process blocked in {waiting}, waiting for "
                "the NPU to complete a command"
            )
    failed = _failed_run(body)
    if failed is not None:
        # the mirror of a pass, which needs no name of the NPU either: what a log given to
        # doctor runs is the stack's; the line says "on the NPU" only when the log does
        where = " on the NPU" if NPU_RE.search(body) else ""
        lines.append(f"xdnaforge: the program's own check failed after its run{where}: {failed}")
    if "FullyQualifiedErrorId" in body:
        from xdnaforge.tools.powershell import stopped_errors

        lines += [
            f"xdnaforge: PowerShell stopped on an error: {m[:300]}" for m in stopped_errors(body)
        ]
    stuck = degenerate(body)
    if stuck is not None:
        lines.append(f"xdnaforge: degenerate generation, one token repeated: {stuck[:120]}")
    firmware = _version(flm.firmware)
    if firmware is not None and firmware < FLM_FIRMWARE_FLOOR:
        lines.append(f"xdnaforge: NPU firmware {flm.firmware} is below FastFlowLM's 1.1")
    driver = _version(flm.driver_version)
    if driver is not None and driver < FLM_DRIVER_FLOOR:
        lines.append(f"xdnaforge: amdxdna version {flm.driver_version} is below FastFlowLM's 0.6")
    return lines


def _failed_run(body: str) -> str | None:
    """A program's own verdict that its result was wrong ("Failed.", "Status: ❌ FAIL"):
    what `run_outcomes.failed_verdict` reads, the mirror of its pass; or its own `assert`
    that failed (`backtrace.python_own_assertion`)."""
    from xdnaforge.diagnosis.run_outcomes import failed_verdict

    said = next((line.strip()[:160] for line in body.splitlines() if failed_verdict(line)), None)
    if said is not None:
        return said
    if "FAIL" in body:
        from xdnaforge.diagnosis.run_outcomes import tabled_verdicts

        tabled = tabled_verdicts(body)
        if tabled is not None and tabled[0] == "failed":
            return tabled[1]
    if "AssertionError" in body:
        from xdnaforge.tools.backtrace import python_own_assertion

        return python_own_assertion(body)
    return None


def _unbound_npus(body: str) -> list[str]:
    """lspci -k: an NPU amdxdna could drive, with no driver bound (the probe failed or the
    module is not loaded); lspci -vnn: an NPU whose memory no driver has enabled."""
    found = []
    if "Kernel modules:" in body:
        from xdnaforge.tools.lspci import devices

        found = [
            f"xdnaforge: lspci: no driver bound to the NPU at {d.slot} (Kernel modules: "
            f"{', '.join(d.modules)})"
            for d in devices(body)
            if "amdxdna" in d.modules and not d.driver
        ]
    if not found and "[disabled]" in body:
        from xdnaforge.host import AMD_VENDOR, NPU_DEVICE_IDS
        from xdnaforge.tools.lspci import memory_disabled

        found = [
            f"xdnaforge: lspci: the NPU at {slot} has its memory disabled: no driver has "
            "enabled the device"
            for slot in memory_disabled(body, AMD_VENDOR, NPU_DEVICE_IDS)
        ]
    return found


# a bound PCI device's uevent in sysfs (/sys/bus/pci/devices/<slot>/uevent, or through the
# driver's directory): the driver core adds DRIVER= once a driver is bound (drivers/base/
# core.c dev_uevent), PCI's own keys follow (drivers/pci/pci-driver.c pci_uevent: PCI_CLASS,
# PCI_ID, PCI_SUBSYS_ID, PCI_SLOT_NAME)
_UEVENT_RE = re.compile(
    r"^DRIVER=amdxdna[ \t]*\n(?:[A-Z_]+=[^\n]*\n){0,3}?PCI_ID=(?i:1022):([0-9A-Fa-f]{4})[ \t]*$"
    r"(?:\n[A-Z_]+=[^\n]*){0,3}?\nPCI_SLOT_NAME=(\S+)",
    re.M,
)


def _bound_npu(body: str) -> str | None:
    if "DRIVER=amdxdna" in body:
        from xdnaforge.host import NPU_DEVICE_IDS

        slots = [
            m.group(2) for m in _UEVENT_RE.finditer(body) if m.group(1).lower() in NPU_DEVICE_IDS
        ]
        if slots:
            return f"sysfs: amdxdna bound to {', '.join(slots)}"
    if "Kernel driver in use: amdxdna" not in body:
        return None
    from xdnaforge.tools.lspci import devices

    bound = [d.slot for d in devices(body) if d.driver == "amdxdna"]
    return f"lspci: amdxdna bound to {', '.join(bound)}" if bound else None


# rocminfo (ROCm/rocminfo) lists each HSA agent's "Name:" and "Marketing Name:"; ROCr's AIE
# agent is named for the NPU's architecture and takes its marketing name from the files
# amdxdna publishes in sysfs once it has probed the device ("rocr/aie: Detect AIE
# architecture and marketing name")
_ROCM_AIE_AGENT_RE = re.compile(
    r"^[ \t]*Name:[ \t]+(aie2p?|aie4)[ \t]*\n(?:[ \t]*\w[^\n]*\n){0,3}"
    r"[ \t]*Marketing Name:[ \t]+(NPU\b[^\n]*\S)[ \t]*$",
    re.M,
)


# the driver's own names for an NPU that only its releases gave (its `vbnv`, from 1.6
# `default_vbnv`, in src/driver/amdxdna/npu*_regs.c of every tag and branch): the current
# ones, in host.NPU_GENERATIONS, and RyzenAI-npu1/2/4/5/6, which 1.4 and earlier gave the
# devices now named "NPU Phoenix" .. "NPU Krackan" (those the examine and validate readers
# read). A program prints one only once amdxdna has probed the device and answered its
# query or its sysfs `vbnv`
_VBNVS = frozenset(
    {g.name for g in NPU_GENERATIONS if g.name.startswith("RyzenAI-")}
    | {f"RyzenAI-npu{n}" for n in (1, 2, 4, 5, 6)}
)
_VBNV_RE = re.compile(
    r"(?<![\w-])(" + "|".join(sorted(map(re.escape, _VBNVS), key=len, reverse=True)) + r")(?![\w-])"
)


def _driver_named_npu(body: str) -> str | None:
    found = _VBNV_RE.search(body)
    return f"the driver named the NPU ({found.group(0)})" if found else None


def _rocm_aie_agent(body: str) -> str | None:
    found = _ROCM_AIE_AGENT_RE.search(body)
    if found is None:
        return None
    return f"rocminfo: ROCm enumerated the NPU as an HSA agent ({found.group(1)}, {found.group(2)})"


def _flm_not_ready(body: str) -> list[str]:
    """`flm validate --json` that said not ready: a line per check that failed, or one line
    when it named none."""
    from xdnaforge.tools.llm_servers import FLM_CHECKS, flm_validate_json

    checks = flm_validate_json(body)
    if checks is None or checks["ready"]:
        return []
    failed = [key for key in FLM_CHECKS if checks.get(key) is False]
    if not failed:
        return ["xdnaforge: flm validate --json: not ready, no check named (NPU validation failed)"]
    return [f"xdnaforge: flm validate --json: not ready, {key} is false" for key in failed]


class ProbeWatch:
    """The driver's probe as a kernel log tells it, fed line by line (journals stream)."""

    def __init__(self) -> None:
        self.probed: str | None = None
        self._deferred: set[str] = set()
        self.retried: str | None = None
        self.addresses: set[str] = set()  # the NPU's PCI addresses, as BDF_RE reads them

    def feed(self, message: str) -> None:
        """One kernel message (no dmesg/journal prefix) that names amdxdna."""
        probed = _PROBED_RE.search(message)
        if probed:
            self._address(probed.group(2))
            if self.probed is None:
                minor = f" (minor {probed.group(3)})" if probed.group(3) else ""
                self.probed = f"amdxdna {probed.group(1)} probed {probed.group(2)}{minor}"
        device = _DRIVER_DEVICE_RE.search(message)
        if device is None:
            return
        name = device.group(1)
        self._address(name)
        if _DEFERRED_RE.search(message):
            self._deferred.add(name)
        elif name in self._deferred and not looks_failed(message) and self.retried is None:
            self.retried = (
                f"amdxdna probe of {name} deferred (EPROBE_DEFER), then retried and carried on"
            )

    def evidence(self) -> str | None:
        return self.probed or self.retried

    def _address(self, name: str) -> None:
        address = BDF_RE.fullmatch(name)
        if address is not None and len(self.addresses) < _ADDRESSES:
            self.addresses.add(address.group(1))


def _validation(body: str) -> Validation:
    from xdnaforge.tools.xrt_smi import parse_validate_json, parse_validate_text

    validation = parse_validate_text(body)
    if "{" in body and not validation.tests:
        with contextlib.suppress(ValueError):
            validation = parse_validate_json(body[body.index("{") :])
    return validation


def _ran_then_cut_off(test: TestResult) -> bool:
    """A text report's last test with its details but no status line: validate prints a
    test's log (SubCmdValidate.cpp, pretty_print_test_run: Details, Error(s), then "Test
    Status") only once the test has run, so a log that ends there was cut off, not hung."""
    return test.status == "UNKNOWN" and bool(test.details) and not test.errors


def _measured(test: TestResult) -> bool:
    """A test's details carry a measured figure (validate's latency, throughput, TOPS)."""
    return any(
        re.search(r"\d", d) and re.search(r"(?i)latency|throughput|tops|ops/s|bandwidth", d)
        for d in test.details
    )


def skipped_messages(text: str) -> frozenset[str]:
    """What validate said about the tests it skipped, when the others passed: a test whose
    archive or xclbin this install lacks is not a failure of the NPU (its entry becomes a
    warning); when nothing passed, the skips are the failure (validate-files)."""
    body = _body(text)
    if not body:
        return frozenset()
    validation = _validation(body)
    statuses = [t.status for t in validation.tests]
    if not any(s.startswith("PASSED") for s in statuses) or any(
        s in ("FAILED", "UNKNOWN") for s in statuses
    ):
        return frozenset()
    return frozenset(
        message
        for test in validation.tests
        if test.status == "SKIPPED"
        for message in (*test.details, *test.errors)
        if message
    )


def healthy_evidence(text: str, probe: ProbeWatch | None = None) -> str | None:
    """Positive signs of a working stack; without them a log is not called healthy."""
    body = _body(text)
    if not body:  # a journal: no tool output, only the driver's probe
        return probe.evidence() if probe is not None else None
    from xdnaforge.tools.xrt_smi import parse_examine_text, parse_flm_validate

    validation = _validation(body)
    tests = list(validation.tests)
    cut = ""
    if tests and _ran_then_cut_off(tests[-1]):
        tests, cut = tests[:-1], f"; cut off after test {len(tests)}'s details"
    statuses = [t.status for t in tests]
    passed = [s for s in statuses if s.startswith("PASSED")]
    if passed and not any(s in ("FAILED", "UNKNOWN") for s in statuses):
        skipped = statuses.count("SKIPPED")
        also = f", {skipped} skipped" if skipped else ""
        return f"xrt-smi validate: {len(passed)} test(s) passed{also}{cut}"
    if cut and not tests and _measured(validation.tests[-1]):
        # the only test ran and reported its figures; the log ends before its status
        return (
            f"xrt-smi validate: test 1 ran and measured ({validation.tests[-1].details[-1]}){cut}"
        )
    if not validation.tests and validation.device and NPU_RE.search(validation.platform or ""):
        # the header validate prints once it has opened the device and asked the driver for
        # its BDF and name (SubCmdValidate.cpp, get_platform_info: pcie_bdf, rom_vbnv); the
        # log ends before the first test began
        return (
            f"xrt-smi validate opened the NPU [{validation.device}] "
            f"(Platform: {validation.platform}); the log ends before its first test"
        )
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
    found = _LIT_FOUND_NPU_RE.search(body)
    if found:
        return (
            f"mlir-aie's test configuration found the NPU [{found.group(1)}] in xrt-smi "
            "examine's device table"
        )
    listed = examine_report.json_devices(body)
    if listed:
        return f"xrt-smi examine (JSON): {listed} present"
    table = examine_report.listed_table(body)
    if table is not None:
        return f"xrt-smi examine: its {table} table is printed (the log ends before its rows)"
    fatal = [int(kind, 16) for _, kind in examine_report.context_health(body) if _hex(kind)]
    if fatal and not any(fatal):
        return f"xrt-smi context health: {len(fatal)} context(s) on the NPU, no fatal error"
    platform = examine_report.platform_report(body)
    if platform is not None:
        return f"xrt-smi examine --report platform: the NPU's driver answered ({platform})"
    power = examine_report.estimated_power(body)
    if power is not None:
        return power
    answered = examine_report.npu_report(body) or examine_report.event_trace(body)
    if answered is not None:
        return answered
    firmware = examine_report.enumerated_npu(body)
    if firmware is not None:
        return f"xrt-smi examine: XRT enumerated an NPU (firmware {firmware})"
    flm = parse_flm_validate(body)
    if flm.node and not flm.errors:
        return f"flm validate: NPU {flm.node}, firmware {flm.firmware}"
    from xdnaforge.tools.llm_servers import flm_validate_json

    checks = flm_validate_json(body)
    if checks is not None and checks["ready"] and not [v for v in checks.values() if not v]:
        return f"flm validate --json: ready ({', '.join(k for k in checks if k != 'ready')})"
    decoded = _FLM_DECODED_RE.search(body)
    if decoded:
        speed = decoded.group(1) or decoded.group(2)
        return f"FastFlowLM generated on the NPU (decoding {speed} tokens/s)"
    context = _SHIM_CONTEXT_RE.search(body)
    if context:
        return f"the shim created {context.group(1)} hardware context {context.group(2)}"
    opened = _SHIM_DEVICE_RE.search(body)
    if opened:
        return f"the shim opened the NPU device {opened.group(1)}"
    known = (
        _other_evidence(body)
        or (probe.evidence() if probe is not None else None)
        or _bound_npu(body)
        or _rocm_aie_agent(body)
    )
    from xdnaforge.diagnosis.run_outcomes import measured_rate, outcome

    if known is not None or validation.tests:
        return known
    if _KNOWN_PROGRAM_RE.search(body):
        # a program a reader knows (validate, examine, flm, Vitis AI's summary) said what
        # it says of its run; a figure or a pass word beside it does not overrule it, but
        # FastFlowLM runs on the NPU only: a rate of work measured beside its lines alone
        # (its test programs, src/test) is the NPU's
        if _OTHER_KNOWN_PROGRAM_RE.search(body) is None:
            return measured_rate(body)
        return None
    if _INACCURATE_RE.search(body):
        return None  # the program itself doubts its result: its pass word is no evidence
    # the last: a program no reader knows printed the driver's name for the NPU
    return outcome(body) or _driver_named_npu(body)


# a program's own warning that its result may be wrong ("⚠️  Accuracy warning: Correlation
# below 0.99"): the warning sign or the words, then what the result was judged by
_INACCURATE_RE = re.compile(
    r"(?im)^[^\w\n]*(?:\u26a0\ufe0f?[ \t]*[^\n]{0,40}?\b(?:accuracy|correlation|mismatch(?:es)?)\b"
    r"|accuracy warning\b)"
)


def _other_evidence(body: str) -> str | None:
    """FastFlowLM serving and downloads, Lemonade's FLM backend and telemetry, test runners,
    DKMS."""
    from xdnaforge.tools.dkms import stack_module_installed
    from xdnaforge.tools.llm_servers import (
        flm_pulled,
        flm_serving,
        lemonade_bench,
        lemonade_flm_backend,
        lemonade_inferences,
        lemonade_npu_available,
        lemonade_prompted,
    )
    from xdnaforge.tools.test_runners import summaries

    serving = flm_serving(body)
    if serving:
        return serving
    pulled = flm_pulled(body)
    if pulled:
        return pulled
    inferences = [(model, out) for model, out in lemonade_inferences(body) if out > 0]
    if inferences:
        model, out = inferences[0]
        named = f"model {model}, " if model else ""
        return f"Lemonade completed {len(inferences)} inference(s) ({named}{out} tokens)"
    if "[Vitis AI EP]" in body:
        from xdnaforge.tools.vitis_ai import on_npu

        placed = on_npu(body)
        if placed is not None:
            return placed
    if '"deviceStat"' in body:
        from xdnaforge.tools.vitis_ai import report_on_npu

        reported = report_on_npu(body)
        if reported is not None:
            return reported
    if "System compatibility check for VitisAI EP" in body:
        from xdnaforge.tools.vitis_ai import npu_checks

        checks = npu_checks(body)  # the last is the newest release, what an install uses
        if checks and checks[-1][1] == "OK!":
            return f"Ryzen AI's npu_check: the NPU and its driver suit VitisAI EP {checks[-1][0]}"
    if "Vitis AI EP running" in body:
        from xdnaforge.tools.vitis_ai import nodes_running

        running = nodes_running(body)
        if running is not None:
            return running
    if "VitisAIExecutionProvider" in body:
        from xdnaforge.tools.vitis_ai import provider_listed

        listed = provider_listed(body)
        if listed is not None:
            return listed
    prompted = lemonade_prompted(body)
    if prompted is not None:
        return f"Lemonade loaded and prompted a model on device {prompted}"
    bench = lemonade_bench(body)
    if bench is not None:
        return f"Lemonade generated on device {bench[0]} ({bench[1]:g} tokens/s)"
    backend = lemonade_flm_backend(body)
    if backend is not None and backend.status == "installed":
        return f"lemonade backends: FastFlowLM NPU backend installed {backend.version}".rstrip()
    available = lemonade_npu_available(body)
    if available is not None:
        return available
    runs = summaries(body)
    if runs and all(s.all_passed for s in runs):
        return "; ".join(s.describe() for s in runs)
    return stack_module_installed(body)
