"""The knowledge base on real logs (tests/fixtures/field, from users' public threads)."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from xdnaforge.knowledge import diagnose, load_knowledge, parse_knowledge, unexplained_failures
from xdnaforge.stage_validate import healthy_evidence

FIELD = REPO / "tests/fixtures/field"
EXPECTED = {
    "001": ["set-state-needs-root"],
    "002": ["cma-heap-bo"],
    "003": ["iommu-pasid"],
    "004": ["fw-not-alive", "smu-init-failed"],
    "005": ["fw-missing"],
    "006": ["fw-protocol-mismatch"],
    "007": ["smu-init-failed"],
    "010": ["hwctx-create-failed"],
    "013": ["exec-cmd-eio"],
    "015": ["render-group"],
    "017": ["validate-archive-missing"],
    "022": ["build-missing-cstdint"],
    "024": ["build-cmake3-required"],
    "026": ["build-boost-system"],
    "027": ["build-pybind11-python-mix"],
    "033": ["dpm-hclock-timeout"],
    "035": ["sva-bind-unsupported"],
    "039": ["flm-firmware-floor"],
    "043": ["memlock"],
    "045": ["no-devices-found"],
    "048": ["get-info-unsupported"],
}
HEALTHY = {"016", "018", "036", "046", "050"}


def field_log(case: str) -> str:
    folder = next(FIELD.glob(f"{case}-*"))
    return (folder / "input.txt").read_text()


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_each_failure_class_is_recognised_on_its_real_log(case: str) -> None:
    found = [d.code for d in diagnose(field_log(case)) if d.severity != "info"]
    assert found == EXPECTED[case]


@pytest.mark.parametrize("case", sorted(HEALTHY))
def test_healthy_logs_have_no_error_and_positive_evidence(case: str) -> None:
    text = field_log(case)
    diagnoses = diagnose(text)
    assert [d for d in diagnoses if d.severity == "error"] == []
    assert unexplained_failures(text, diagnoses) == []
    assert healthy_evidence(text) is not None


def test_a_cut_off_failing_log_is_not_called_healthy() -> None:
    # 031: the firmware line that showed the problem was not captured
    text = field_log("031")
    assert diagnose(text) == []
    assert healthy_evidence(text) is None


def test_every_entry_is_exercised_by_a_log() -> None:
    seen = {code for codes in EXPECTED.values() for code in codes}
    synthetic = {  # entries whose evidence a gate writes, or from driver source text
        "no-plugin",
        "xrt-smi-hang",
        "accel-node-missing",
        "psp-start-failed",
        "exec-cmd-cmd-bo-limit",
        "hwctx-not-ready",
        "xclmgmt-unknown-harmless",
        "nonroot-default-power-mode",
    }
    assert {e.code for e in load_knowledge()} == seen | synthetic


def test_annotation_lines_are_ignored() -> None:
    text = "#### [block 1 - DRM_IOCTL_AMDXDNA_GET_INFO IOCTL failed (err=95)]\nall good\n"
    assert diagnose(text) == []


def test_unseen_variants_of_known_failures() -> None:
    # the same failures as printed by other kernels, devices and tools
    samples = {
        "[   12.000001] amdxdna 0000:04:00.1: [drm] *ERROR* aie2_check_protocol: "
        "Incompatible firmware protocol major 8 minor 1": "fw-protocol-mismatch",
        "kernel: amdxdna 0000:c4:00.1: Direct firmware load for amdnpu/17f0_11/npu.dev.sbin "
        "failed with error -2": "fw-missing",
        "RuntimeError: DRM_IOCTL_AMDXDNA_EXEC_CMD IOCTL failed (err=22): Invalid argument": (
            "exec-cmd-cmd-bo-limit"
        ),
        "amdxdna 0000:c5:00.1: [drm] *ERROR* aie2_error_async_cb: HW Context is not ready": (
            "hwctx-not-ready"
        ),
        "amdxdna 0000:c5:00.1: aie2_hw_start: failed to start psp, ret -110": "psp-start-failed",
        "/opt/xrt/src/runtime_src/core/common/elf/x.h:12:3: error: 'uint64_t' does not name a "
        "type": "build-missing-cstdint",
    }
    for line, code in samples.items():
        assert [d.code for d in diagnose(line)] == [code], line


def test_unknown_failures_are_said_to_be_unknown() -> None:
    text = "amdxdna 0000:c5:00.1: [drm] *ERROR* aie2_frobnicate: something new failed, ret -5\n"
    diagnoses = diagnose(text)
    assert diagnoses == []
    assert unexplained_failures(text, diagnoses) == [text.strip()]


def test_bad_knowledge_files_are_rejected_with_positions() -> None:
    with pytest.raises(Exception, match=r"knowledge.yaml:4:5: entries\[0\]\.severity"):
        parse_knowledge(
            "schema: 1\nentries:\n  - code: x\n    severity: fatal\n    title: t\n"
            "    signatures: ['(']\n    cause: c\n    fix: f\n",
            "knowledge.yaml",
        )
