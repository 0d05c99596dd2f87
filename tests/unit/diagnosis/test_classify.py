"""Classifying lines by the catalogue: a template's family from where it is thrown, the ioctl
a wrapper line names, and callers that only pass their callee's failure up."""

from __future__ import annotations

import pytest

from xdnaforge.diagnosis.classify import diagnose
from xdnaforge.diagnosis.ioctls import (
    FAMILIES,
    MEANINGS,
    accel_open_family,
    canonical,
    describe_ioctl,
    history,
    ioctl_family,
)
from xdnaforge.diagnosis.log_verdict import FAILURE, HEALTHY, UNKNOWN, UNKNOWN_FAILURE, judge

SMU = "amdxdna 0000:c6:00.1: [drm] *ERROR* aie2_smu_init: Access power failed, ret -22\n"
CALLER = "amdxdna 0000:c6:00.1: [drm] *ERROR* aie2_init: start npu failed, ret -22\n"


def test_a_callers_report_is_dropped_beside_its_callees_diagnosis() -> None:
    codes = [d.code for d in diagnose(SMU + CALLER)]
    assert codes == ["smu-init-failed"]  # the SMU entry; "start npu failed" adds nothing


def test_a_callers_report_alone_still_names_its_family() -> None:
    (only,) = diagnose(CALLER)
    assert only.family == "firmware"


def test_the_ioctl_a_wrapper_line_names_decides_its_family() -> None:
    line = "[ERROR]  Failed to load model: DRM_IOCTL_AMDXDNA_CREATE_HWCTX IOCTL failed (err=-22)"
    assert ioctl_family(line) == "hwctx"
    assert ioctl_family("DRM_IOCTL_AMDXDNA_SYNC_BO IOCTL failed (err=-5)") == "memory"
    assert ioctl_family("no ioctl here") == ""
    assert [d.family for d in diagnose(line + "\n")] == ["hwctx"]


def test_opening_the_accel_node_not_supported_is_the_iommus_sva() -> None:
    # amdxdna_drm_open: iommu_sva_bind_device is its only step that can answer EOPNOTSUPP
    line = "[xrt-smi] ERROR: Open /dev/accel/accel0 failed (err=-95): Operation not supported"
    assert accel_open_family(line) == "iommu"
    assert accel_open_family("open /dev/accel/accel0: Operation not supported") == "iommu"
    assert [d.family for d in diagnose(line + "\n")] == ["iommu"]
    # a node that is missing or not permitted says nothing of the IOMMU
    assert accel_open_family("Open /dev/accel/accel0 failed (err=-13): Permission denied") == ""
    assert accel_open_family("Open /dev/accel/accel0 failed (err=-2)") == ""
    # EOPNOTSUPP from something else than the node's open
    assert accel_open_family("DRM_IOCTL_AMDXDNA_SET_STATE IOCTL failed (err=-95)") == ""


def test_chess_compilers_warnings_are_warnings_whatever_their_words() -> None:
    line = (
        'Warning in "": (imprecise line-number, the error occurred somewhere in this '
        "function): loop with essential overflow in loop count computation\n"
    )
    assert judge(line).status == UNKNOWN  # news, not an unexplained failure
    assert judge(line.replace("Warning in", "Error in")).status == UNKNOWN_FAILURE


def test_what_is_missing_is_no_failure_when_the_program_fetches_it_next() -> None:
    fetched = "  nomic-embed-text-v1.5 is not installed. Fetching it from nomic-ai/nomic.\n"
    assert judge(fetched).status == UNKNOWN
    assert judge("  nomic-embed-text-v1.5 is not installed.\n").status == UNKNOWN_FAILURE
    fallback = "NPU driver is not installed. Using CPU instead.\n"  # a fallback: no recovery
    assert judge(fallback).status == UNKNOWN_FAILURE


def test_llama_cpps_warning_level_is_no_failure_and_its_error_level_is() -> None:
    warned = "0.00.554.525 W common_fit_params: failed to fit params to free device memory\n"
    assert judge(warned).status == UNKNOWN
    assert judge(warned.replace(" W ", " E ")).status == UNKNOWN_FAILURE


def test_the_source_line_under_a_python_warning_is_no_failure() -> None:
    warned = (
        "C:\\env\\torch\\utils\\cpp_extension.py:380: UserWarning: Error checking compiler "
        "version for cl: [WinError 2] The system cannot find the file specified\n"
        "  warnings.warn(f'Error checking compiler version for {compiler}: {error}')\n"
    )
    assert judge(warned).status == UNKNOWN  # a warning and its code, no failure
    # the same words printed, not shown as code, are the program's failure
    printed = "Error: checking compiler version for cl failed\n"
    assert judge(printed).status == UNKNOWN_FAILURE


@pytest.mark.parametrize(
    "line",
    [
        "100% tests passed, 0 tests failed out of 200",  # ctest's count of none
        "Number of differences: 12, average L1 error: 1.868708",  # a measured error
        "max abs error = 2e-03",
        "max relative error vs CPU f32 reference = 0.31%   (bf16 inputs ~= 2-3 digits)",
        "relative error 1.2e-03",  # the figure after the words alone
        "RMS error (vs CPU): 0.01",
        "  pairwise-similarity error over 78 pairs:",  # the header of its figures below
        "WER>>>>>:0.1351, error scores: 5, total words in test set: 37",  # a metric
        "clang -O2 x.o -Wl,--orphan-handling=error -o core_0_2.elf",  # an option's value
        "g++ -Wall -Werror -c x.cpp",
    ],
)
def test_a_line_that_names_a_failure_it_denies_or_measures_is_none(line: str) -> None:
    assert judge(line + "\n").status not in (FAILURE, UNKNOWN_FAILURE)


@pytest.mark.parametrize(
    "line",
    [
        "2 tests failed out of 200",
        "x.cpp:3:1: error: 'y' was not declared in this scope [-Werror=format]",
        "Error: max abs error exceeded the tolerance",
        "relative error: device lost",  # a measure's words before no figure
        "quantization error: unsupported layer type Gelu",
        'time="2026-01-02T10:00:00Z" level=error msg="npu plugin: open /dev/accel/accel0"',
    ],
)
def test_a_failure_beside_such_words_is_still_one(line: str) -> None:
    assert judge(line + "\n").status in (FAILURE, UNKNOWN_FAILURE)


def test_a_path_named_npu_is_no_word_about_the_npu() -> None:
    line = "RuntimeError: Cannot find symtab/strtab in AIE ELF: /home/u/.npu/cache/k.o\n"
    assert [d.family for d in diagnose(line)] != ["device-access"]
    assert [d.family for d in diagnose("Error: cannot find the NPU\n")] == ["device-access"]


def test_a_templated_userspace_line_without_a_failure_word_is_a_failure() -> None:
    # XRT's loader (module_loader.cpp) throws it; nothing in the line says "error"
    (found,) = diagnose("  what():  No such library '/opt/xilinx/xrt/lib/libxrt_core.so.2'\n")
    assert found.family == "device-access"
    assert "module_loader.cpp" in found.source


def test_every_name_the_uapi_header_ever_gave_an_ioctl_has_a_family() -> None:
    # data/ioctls.json: every version of amdxdna_accel.h's enum (scripts/gen_ioctls.py)
    for name in history()["names"]:
        assert FAMILIES.get(canonical(name)), name
        assert canonical(name) in MEANINGS, name


def test_an_ioctl_by_the_name_it_had_in_early_2025_is_the_same_operation() -> None:
    line = "what():  DRM_IOCTL_AMDXDNA_CREATE_CTX IOCTL failed (err=28): No space left on device"
    assert canonical("CREATE_CTX") == "CREATE_HWCTX"
    assert ioctl_family(line) == "hwctx"
    assert "CREATE_HWCTX as the header named it 2025-01-15" in describe_ioctl(line)
    diagnoses = judge(line + "\n").diagnoses
    assert diagnoses[0].family == "hwctx"


def test_a_runtimes_own_errno_forms_are_decoded() -> None:
    from xdnaforge.diagnosis.errnos import decode

    rust = "called `Result::unwrap()` on an `Err` value: Os { code: 95, kind: Unsupported }"
    found = decode(rust)
    assert found is not None
    assert found.name == "EOPNOTSUPP"
    python = "PermissionError: [Errno 13] Permission denied: '/dev/accel/accel0'"
    found = decode(python)
    assert found is not None
    assert found.name == "EACCES"
    assert decode("Os { code: 9999 }") is None  # a number no errno has


def test_an_npu_tools_error_with_no_family_words_takes_its_errnos() -> None:
    # amdgpu_top's XDNA query on an in-tree driver without that query (a run whose command
    # line names the NPU): EOPNOTSUPP is a request this driver does not implement
    run = (
        "root@evo:~# amdgpu_top --xdna\n"
        "thread 'main' panicked at src/dump_xdna_device.rs:20:35:\n"
        "called `Result::unwrap()` on an `Err` value: Os { code: 95, kind: Unsupported }\n"
    )
    verdict = judge(run)
    assert [d.family for d in verdict.diagnoses] == ["versions"]
    # the same lines of a program nothing says is the NPU's: no family is guessed
    other = run.replace("amdgpu_top --xdna", "mytool --fast").replace("xdna", "abc")
    assert judge(other).diagnoses == ()
    # an errno that says nothing of where (EINVAL) names no family either
    assert judge(run.replace("code: 95", "code: 22")).diagnoses == ()


def test_a_strerror_text_ending_a_message_is_its_errno() -> None:
    from xdnaforge.diagnosis.errnos import from_text

    found = from_text("load_axlf: Operation not supported")
    assert found is not None
    assert found.name == "EOPNOTSUPP"
    assert from_text("open /dev/accel/accel0: Permission denied.") is not None
    assert from_text("Operation not supported here, retrying") is None  # not its end
    assert from_text("status: Good") is None


def test_an_errno_in_either_form_is_reported_the_number_first() -> None:
    from xdnaforge.diagnosis.errnos import reported

    def name(line: str) -> str | None:
        found = reported(line)
        return found.name if found is not None else None

    assert name("IOCTL failed (err=-22): Operation not permitted") == "EINVAL"  # the number
    assert name("XRT bo creation refused: Operation not permitted") == "EPERM"  # the text
    assert name("status: Good") is None


def test_a_kernel_log_line_prints_only_a_drivers_template() -> None:
    # the shim's "Failed to open %s (err=%d)" is a userspace message: never dmesg's
    line = "Failed to open TEE session err:0x0, rc:-12"
    assert judge(line).status != HEALTHY  # a userspace line: the shim's template
    assert diagnose(f"[    4.331693] {line}") == []
    assert diagnose(f"nov 04 13:18:03 host kernel: {line}") == []


def test_another_drivers_failure_in_a_kernel_log_is_not_the_npus() -> None:
    dmesg = (
        "[    4.254317] amdxdna 0000:c4:00.1: enabling device (0000 -> 0002)\n"
        "[    4.284151] cfg80211: failed to load regulatory.db\n"
        "[    4.332537] amd-pmf AMDI0105:00: Failed to open TA session (-12)\n"
        "[    4.356598] [drm] Initialized amdxdna_accel_driver 0.0.0 for 0000:c4:00.1 on minor 0\n"
    )
    verdict = judge(dmesg)
    assert (verdict.status, verdict.unexplained) == (HEALTHY, ())
    # the same failure printed by a program (no kernel prefix) is still a failure
    assert judge(dmesg + "cfg80211: failed to load regulatory.db\n").status == UNKNOWN_FAILURE
    # an untagged kernel line naming the NPU stays the NPU's
    npu = dmesg + "[    5.1] failed to load amdnpu/17f0_10/npu.sbin\n"
    assert judge(npu).status != HEALTHY
    # so does a line naming the NPU's PCI device by its address only (amdxdna's lines, or
    # the PCI core's enumeration of an NPU device id, show which one it is)
    probe = "[  100.1] pci 0000:c4:00.1: probe of 0000:c4:00.1 failed with error -22\n"
    assert judge(dmesg + probe).status == UNKNOWN_FAILURE
    listed = "[    0.5] pci 0000:c4:00.1: [1022:17f0] type 00 class 0x118000\n"
    assert judge(listed + probe).status == UNKNOWN_FAILURE
    other = "[  100.1] pci 0000:c3:00.0: probe of 0000:c3:00.0 failed with error -22\n"
    assert judge(dmesg + other).status == HEALTHY


def test_counts_of_none_and_a_timeout_setting_are_no_failure() -> None:
    for line in (
        "(WARNING:43, CRITICAL-WARNING:0, ERROR:0)",
        "errors=0, warnings=2",
        "replay: dispatching (timeout 10s)...",
        "run with timeout=30",
        "  Expectedly Failed:   1",  # lit's tally of the failures it expected
        "  Expected Failures  : 2 (1.00%)",
    ):
        assert judge(line).status == UNKNOWN, line
    # a count that is not zero, a zero that begins a message, a timeout that happened
    for line in (
        "ERROR: 0x1c load failed",
        "ERROR: 0 devices found",
        "command timeout 10s exceeded",
        "  Failed     : 1",
        "Expectedly Failed tests were re-run and failed: 1",
    ):
        assert judge(line).status != UNKNOWN, line
