"""xrt-smi and flm parsers on real outputs (field logs) and recordings."""

from __future__ import annotations

from tests.conftest import REPO
from tests.unit.diagnosis.test_knowledge import field_log
from xdnaforge.diagnosis.log_verdict import HEALTHY, judge
from xdnaforge.tools.xrt_smi import (
    parse_examine_json,
    parse_examine_text,
    parse_flm_validate,
    parse_validate_json,
    parse_validate_text,
)

RECORDINGS = REPO / "tests/fixtures/recordings"


def test_examine_text_npu4_with_driver_and_firmware() -> None:
    report = parse_examine_text(field_log("036"))
    assert report.xrt_version == "2.19.0"
    assert report.drivers["amdxdna"] == "2.19.0_20250330, 7c1d273ef9946848a9f236f1216cfda10d9465cb"
    assert [(d.bdf, d.name, d.firmware) for d in report.devices] == [
        ("0000:67:00.1", "RyzenAI-npu4", "1.0.0.63")
    ]


def test_examine_text_cut_off_before_the_devices() -> None:
    report = parse_examine_text(field_log("031"))
    assert report.xrt_version == "2.21.0"
    assert report.devices == ()


def test_examine_json_recording() -> None:
    report = parse_examine_json((RECORDINGS / "healthy-npu4/xrt-smi/examine.json").read_text())
    assert report.xrt_version == "2.20.0"
    assert report.firmware == "1.1.2.64"
    assert report.devices[0].name == "NPU Strix"
    assert report.drivers == {"amdxdna": "unknown, unknown"}


def test_validate_text_metrics_and_statuses() -> None:
    assert parse_validate_text(field_log("018")).metrics() == {"gemm_tops": 51.0}
    partial = parse_validate_text(field_log("046"))
    assert partial.platform == "RyzenAI-npu4"
    assert partial.metrics() == {"latency_us": 61.8, "throughput_ops": 65648.0}
    failed = parse_validate_text(field_log("017"))
    assert [(t.name, t.status) for t in failed.tests] == [
        ("gemm", "FAILED"),
        ("latency", "FAILED"),
        ("throughput", "FAILED"),
    ]
    assert failed.tests[1].errors == ("No archive found, skipping test",)
    assert failed.metrics() == {}


def test_validate_text_of_the_older_xbutil_layouts() -> None:
    # 2.8-2.9: numbered out of the suite, with the device; 2.7: without it, a bare status
    numbered = (
        "Starting validation for 1 devices\n\n"
        "1/2 Test #1 [0000:17:00.1]  : vcu\n"
        "    Description             : Run decoder test\n"
        "    Test Status             : [PASSED]\n"
        "-----------------------------------------------\n"
        "1/2 Test #2        : DMA\n"
        "    Details         : Host -> PCIe -> FPGA write bandwidth = 8421.2 MB/s\n"
        "    [FAILED]\n"
        "Validation failed\n"
    )
    tests = parse_validate_text(numbered).tests
    assert [(t.name, t.status) for t in tests] == [("vcu", "PASSED"), ("DMA", "FAILED")]
    # a program's own numbered steps are not validate's tests
    assert parse_validate_text("Test 1: Single Tile Performance\n  [PASSED]\n").tests == ()
    # the xbutil of 2018-2020: each check started, then its verdict
    legacy = (
        "INFO: Validating card[0]: xilinx_u200_xdma_201830_2\n"
        "INFO: == Starting AUX power connector check: \n"
        "AUX power connector not available. Skipping validation\n"
        "INFO: == AUX power connector check SKIPPED\n"
        "INFO: == Starting PCIE link check: \n"
        "WARN: == PCIE link check PASSED with warning\n"
        "INFO: == Starting verify kernel test: \n"
        "ERROR: == verify kernel test FAILED\n"
        "INFO: == Starting DMA test: \n"
    )
    assert [(t.name, t.status) for t in parse_validate_text(legacy).tests] == [
        ("AUX power connector check", "SKIPPED"),
        ("PCIE link check", "PASSED WITH WARNINGS"),
        ("verify kernel test", "FAILED"),
        ("DMA test", "UNKNOWN"),  # the log ends while it runs
    ]
    # every check that started has its verdict, one passed: a working card
    passed = legacy.split("INFO: == Starting verify")[0]
    assert judge(passed).status == HEALTHY
    assert judge(passed + "INFO: == Starting DMA test: \n").status != HEALTHY


def test_validate_json_recording_and_quoted_windows_numbers() -> None:
    report = parse_validate_json((RECORDINGS / "healthy-npu4/xrt-smi/validate.json").read_text())
    assert report.power_mode == "Performance"
    assert report.metrics() == {"gemm_tops": 51.0, "latency_us": 46.0, "throughput_ops": 80547.0}
    windows = (
        '{"logical_devices": [{"device_id": "x", "tests": [{"name": "latency", "log": '
        '[{"Details": "Average latency: \'127.2\' us"}], "status": "PASSED"}]}]}'
    )
    assert parse_validate_json(windows).metrics() == {"latency_us": 127.2}


def test_validate_json_after_an_exception_has_no_devices() -> None:
    report = parse_validate_json('{"logical_devices": ""}')
    assert report.tests == ()


def test_flm_validate() -> None:
    healthy = parse_flm_validate(field_log("016"))
    assert (healthy.node, healthy.firmware, healthy.driver_version, healthy.memlock) == (
        "/dev/accel/accel0",
        "1.1.2.64",
        "0.6",
        "infinity",
    )
    old = parse_flm_validate(field_log("039"))
    assert old.firmware == "1.0.0.63"
    assert old.errors == (
        "NPU firmware version on /dev/accel/accel0 is incompatible. Please update NPU firmware!",
    )
