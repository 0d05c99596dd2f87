"""Readers and verdict on tool outputs written from upstream format strings (2.17..2.21,
text and JSON, Linux and Windows, example tests, CMake, flm): tests/fixtures/shapes."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from xdnaforge.diagnosis.log_verdict import FAILURE, HEALTHY, judge
from xdnaforge.diagnosis.readers import findings, healthy_evidence
from xdnaforge.tools.xrt_smi import parse_validate_json, parse_validate_text

SHAPES = REPO / "tests/fixtures/shapes"
# file -> (verdict, family of the first error or the healthy evidence)
EXPECTED = {
    "xrt-smi-2.17-validate-text.txt": (HEALTHY, "xrt-smi validate: 2 test(s) passed"),
    "xrt-smi-2.19-validate-text-nonroot.txt": (HEALTHY, "xrt-smi validate: 2 test(s) passed"),
    "xrt-smi-2.21-validate-text-windows.txt": (HEALTHY, "xrt-smi validate: 1 test(s) passed"),
    "example-noop-passed.txt": (HEALTHY, "example test PASSED, average latency 140 us"),
    "xrt-smi-2.20-validate-json-skipped.json": (
        HEALTHY,
        "xrt-smi validate: 1 test(s) passed, 1 skipped",
    ),
    "xrt-smi-2.21-validate-text-failed.txt": (FAILURE, "hwctx"),
    "xrt-smi-examine-0-devices.txt": (FAILURE, "device-access"),
    "example-noop-failed.txt": (FAILURE, "hwctx"),
    "cmake-boost-not-found.txt": (FAILURE, "build"),
    "flm-validate-old-driver.txt": (FAILURE, "versions"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_shape_gets_its_verdict(name: str) -> None:
    verdict = judge((SHAPES / name).read_text())
    status, what = EXPECTED[name]
    assert verdict.status == status
    if status == HEALTHY:
        assert verdict.evidence == what
    else:
        assert next(d.family for d in verdict.diagnoses if d.severity == "error") == what


def test_validate_text_of_2_17_reads_performance_mode() -> None:
    report = parse_validate_text((SHAPES / "xrt-smi-2.17-validate-text.txt").read_text())
    assert report.power_mode == "Default"
    assert [(t.name, t.status) for t in report.tests] == [("verify", "PASSED"), ("df-bw", "PASSED")]


def test_windows_quoted_figures_are_metrics() -> None:
    report = parse_validate_text((SHAPES / "xrt-smi-2.21-validate-text-windows.txt").read_text())
    assert report.metrics() == {"latency_us": 127.2}


def test_a_skipped_test_beside_passed_ones_is_a_warning_not_a_failure() -> None:
    # issue 26: a run whose other tests pass is healthy; the skipped one is still shown
    text = (SHAPES / "xrt-smi-2.20-validate-json-skipped.json").read_text()
    assert [t.status for t in parse_validate_json(text).tests] == ["SKIPPED", "PASSED"]
    verdict = judge(text)
    assert verdict.status == HEALTHY
    assert [(d.code, d.severity) for d in verdict.diagnoses] == [
        ("validate-xclbin-missing", "warning")
    ]
    # when nothing passed, the skips are the failure (field case 105)
    nothing_passed = text.replace('"status": "passed"', '"status": "skipped"')
    verdict = judge(nothing_passed)
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].code == "validate-xclbin-missing"


def test_flm_floors_and_memlock_are_named_findings() -> None:
    text = (SHAPES / "flm-validate-old-driver.txt").read_text()
    assert findings(text) == ["xdnaforge: amdxdna version 0.5 is below FastFlowLM's 0.6"]
    codes = [d.code for d in judge(text).diagnoses]
    assert codes == ["flm-driver-floor", "flm-memlock-finite"]
    old_firmware = text.replace("1.1.0.59", "1.0.0.63").replace("0.5", "0.6")
    assert [d.code for d in judge(old_firmware).diagnoses] == [
        "flm-firmware-floor",
        "flm-memlock-finite",
    ]
    unlimited = old_firmware.replace("1.0.0.63", "1.1.2.64").replace("8 MB", "infinity")
    verdict = judge(unlimited)
    assert (verdict.status, verdict.diagnoses) == (HEALTHY, ())


def test_a_finite_memlock_alone_is_a_warning_not_a_failure() -> None:
    # field case 016's second paste: sudo flm validate, 10008 MB (root ignores the limit)
    text = "[Linux]  NPU: /dev/accel/accel0 with 8 columns\n[Linux]  Memlock Limit: 10008 MB\n"
    verdict = judge(text)
    assert verdict.status == HEALTHY
    assert [(d.code, d.severity) for d in verdict.diagnoses] == [("flm-memlock-finite", "warning")]


def test_healthy_evidence_needs_no_failed_test() -> None:
    text = (SHAPES / "xrt-smi-2.19-validate-text-nonroot.txt").read_text()
    assert healthy_evidence(text) is not None
    broken = text.replace("[PASSED]", "[FAILED]", 1)
    assert healthy_evidence(broken) is None


def test_a_skipped_test_in_validate_text_is_reported_as_skipped_never_as_a_pass() -> None:
    # the text form of a run where one test's file is missing (XRT d76d588 (before
    # a513cb0) TestValidateUtilities.cpp findXclbinPath: "%s not available. Skipping
    # validation.", status skipped) beside tests that pass: no real log of it was found in
    # the public threads the library holds (issue 26), so it is written from the format
    text = (SHAPES / "xrt-smi-2.19-validate-text-nonroot.txt").read_text()
    skipped = text.replace(
        "Validation completed",
        "Test 3 [0000:c5:00.1]     : gemm \n"
        "    Details               : gemm.xclbin not available. Skipping validation.\n"
        "    Test Status           : [SKIPPED]\n"
        f"{'-' * 79}\n"
        "Validation completed",
    )
    report = parse_validate_text(skipped)
    assert [t.status for t in report.tests] == ["PASSED", "PASSED", "SKIPPED"]
    verdict = judge(skipped)
    assert (verdict.status, verdict.evidence) == (
        HEALTHY,
        "xrt-smi validate: 2 test(s) passed, 1 skipped",
    )
    assert ("validate-xclbin-missing", "warning") in [
        (d.code, d.severity) for d in verdict.diagnoses
    ]
    # healthy only if what ran passed: the same skip beside a failed test is a failure
    failed = skipped.replace("[PASSED]", "[FAILED]", 1)
    assert judge(failed).status == FAILURE
    # and a run in which nothing ran is no evidence of health
    assert judge(skipped.replace("[PASSED]", "[SKIPPED]")).status == FAILURE
