"""The knowledge base on real logs (tests/fixtures/field, from users' public threads)."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from xdnaforge.diagnosis.classify import diagnose
from xdnaforge.diagnosis.errnos import decode
from xdnaforge.diagnosis.evaluate import load_corpus
from xdnaforge.diagnosis.knowledge import (
    known_codes,
    load_families,
    load_knowledge,
    looks_failed,
    parse_knowledge,
    unexplained_failures,
)
from xdnaforge.diagnosis.log_verdict import FAILURE, UNKNOWN, UNKNOWN_FAILURE, judge
from xdnaforge.diagnosis.log_verdict import HEALTHY as HEALTHY_VERDICT
from xdnaforge.diagnosis.upstream import catalogue
from xdnaforge.stages.validate import healthy_evidence

FIELD = REPO / "tests/fixtures/field"
CORPUS = REPO / "tests/fixtures/corpus"
EXPECTED = {
    "001": ["set-state-needs-root"],
    "002": ["cma-heap-bo"],
    "003": ["iommu-pasid", "kernel-call-trace"],  # the WARNING's trace after the probe
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
    "027": ["build-pybind11-python-mix", "build-dependency-api"],
    "033": ["dpm-hclock-timeout"],
    "035": ["sva-bind-unsupported"],
    "039": ["flm-firmware-floor"],
    "043": ["memlock"],
    "045": ["no-devices-found"],
    "048": ["get-info-unsupported"],
    "102": ["mailbox-timeout", "exec-cmd-eio"],
    "103": ["mailbox-timeout"],
    "104": ["tdr-no-progress"],
    "105": ["validate-xclbin-missing"],
}
GENERIC = {e.code for e in load_knowledge() if e.generic}
# codes other records and engineers refer to: never renamed (adding is fine)
STABLE_CODES = {
    "fw-protocol-mismatch", "fw-missing", "fw-not-alive", "smu-init-failed",
    "psp-start-failed", "iommu-pasid", "sva-bind-unsupported", "memlock", "render-group",
    "set-state-needs-root", "no-devices-found", "no-plugin", "cma-heap-bo",
    "validate-archive-missing", "get-info-unsupported", "exec-cmd-cmd-bo-limit",
    "exec-cmd-eio", "hwctx-create-failed", "hwctx-not-ready", "dpm-hclock-timeout",
    "flm-firmware-floor", "xclmgmt-unknown-harmless", "nonroot-default-power-mode",
    "build-boost-system", "build-missing-cstdint", "build-cmake3-required",
    "build-pybind11-python-mix", "xrt-smi-hang", "accel-node-missing",
}  # fmt: skip
HEALTHY = {"016", "018", "036", "046", "050"}


def field_log(case: str) -> str:
    folder = next(FIELD.glob(f"{case}-*"))
    return (folder / "input.txt").read_text()


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_each_failure_class_is_recognised_on_its_real_log(case: str) -> None:
    diagnoses = [d for d in diagnose(field_log(case)) if d.severity != "info"]
    # the specific entries, root-most first; generic ones may add other families' lines
    assert [d.code for d in diagnoses if d.code not in GENERIC] == EXPECTED[case]
    assert diagnoses[0].code == EXPECTED[case][0]


@pytest.mark.parametrize("case", sorted(HEALTHY))
def test_healthy_logs_have_no_error_and_positive_evidence(case: str) -> None:
    text = field_log(case)
    diagnoses = diagnose(text)
    assert [d for d in diagnoses if d.severity == "error"] == []
    assert unexplained_failures(text, diagnoses) == []
    assert healthy_evidence(text) is not None
    assert judge(text).status == HEALTHY_VERDICT


def test_a_cut_off_failing_log_is_not_called_healthy() -> None:
    # 031: the firmware line that showed the problem was not captured
    text = field_log("031")
    assert diagnose(text) == []
    assert healthy_evidence(text) is None


def test_every_entry_is_exercised_by_a_log() -> None:
    seen = {code for codes in EXPECTED.values() for code in codes}
    for case in load_corpus(CORPUS):  # the classes written for issue 26 show there
        seen |= {d.code for d in diagnose(case.text)}
    synthetic = {  # entries whose evidence a gate or reader writes, or from driver source
        "no-plugin",
        "xrt-smi-hang",
        "accel-node-missing",
        "psp-start-failed",
        "exec-cmd-cmd-bo-limit",
        "hwctx-not-ready",
        "xclmgmt-unknown-harmless",
        "nonroot-default-power-mode",
        "flm-driver-floor",
        "flm-memlock-finite",
        "example-test-failed",
        "module-unsigned-harmless",
        "driver-contract",  # validate's device gate, from the compat resolver
        "degenerate-output",  # readers: a generation that repeats one token
        "test-run-failed",  # readers: a runner's summary with failures
        "flm-xdna1-unsupported",  # readers: FastFlowLM output beside an XDNA1 NPU
        # readers: `flm validate --json` not ready (test_readers.py, Lemonade's contract)
        "flm-no-npu-found",
        # lspci -k (tests/unit/tools/test_lspci.py)
        "npu-driver-not-bound",
        "npu-memory-disabled",
        "lspci-libkmod-harmless",
        # XRT's environment (test_xrts_environment_missing_is_device_access)
        "xrt-library-not-found",
        "xrt-tools-not-on-path",  # the shells' words for XRT's tools not on PATH
        # wget's and curl's download errors, xrt-smi's unrecognized arguments (TOOLS below)
        "build-download-failed",
        "tool-unrecognized-arguments",
        # the shells' own words for a missing command or sourced file (TOOLS below)
        "build-command-not-found",
        "build-cmake-file-step-failed",
        "xclbin-file-missing",
        "cli-usage-error",
        "shared-library-missing",
        "pip-package-unbuildable",
        "lemonade-npu-family-unsupported",
        # the driver core's probe failure, kmod's missing module (KERNEL below)
        "driver-probe-failed",
        "module-not-found",
        "module-lockdown",
        "dpkg-file-conflict",
        "dpkg-install-failed",
        "command-hang-backtrace",  # tests/unit/tools/test_backtrace.py
        "context-fatal-error",  # readers: xrt-smi's context health (test_readers.py)
        "command-wait-raised",  # readers: a Python traceback in a run's wait (test_backtrace)
        "hwctx-create-raised",  # ... in creating a context, reading an xclbin, a buffer, a
        "xclbin-load-raised",  # device (TOOLS below)
        "bo-alloc-raised",
        "device-open-raised",
        "ryzenai-npu-check-refused",  # readers: Ryzen AI's npu_check (test_vitis_ai.py)
        "windows-dll-entry-point",
        "windows-video-memory",
        "windows-cm-access-denied",
        "ort-vitisai-provider-missing",
        "vitis-ai-target-unknown",
        "vitisai-config-unreadable",  # ONNX Runtime's fallback and the EP's config (TOOLS below)
        "windows-variable-unexpanded",  # cmd.exe's %NAME% left as typed (TOOLS below)
        "git-lfs-pointer-not-content",  # Git LFS's pointer file in place of a file (TOOLS below)
        "service-namespace-path-missing",  # systemd's namespace setup (TOOLS below)
        # the loader's, pybind11's, pip's and ONNX Runtime's version refusals (TOOLS below)
        "binary-symbol-version-missing",
        "python-version-unsupported",
        "pip-dependency-conflict",
        "onnx-ir-version-unsupported",
        # a version check's unmet requirement (test_a_version_check_that_is_not_met_is_versions)
        "version-requirement-unmet",
        # ninja's own messages (test_ninjas_messages_name_what_is_missing)
        "ninja-unknown-target",
        "ninja-missing-input",
        "ninja-no-build-file",
        "flm-kernel-unsupported",
        "flm-memlock-too-low",
        "build-werror-in-dependency",  # gcc's format: a -Werror diagnostic in a system header
        # the build-log formats of gcc, ld, kbuild and modpost (test_build_errors.py's real
        # lines, from threads the corpus does not cite)
        "module-compiler-differs",
        "build-cmake-find-package",  # build_errors: CMake's blocks (c040, read by judge)
        "build-error-by-default",
        "build-werror-unnamed",
        "build-unrecognized-option",
        "build-ld-relocation",
        "build-modpost-undefined",
        "build-modpost-license",
        # build_errors: CMake's own message formats, read by judge (test_build_errors.py's
        # synthetic blocks, written from Kitware/CMake's sources)
        "build-cmake-pkg-config",
        "build-cmake-subdirectory-missing",
        "build-cmake-policy-version-removed",
        "build-cmake-too-old",
        "build-cmake-no-compiler",
        "build-cmake-unknown-command",
        "build-cmake-project-error",
        "rmmod-not-loaded-harmless",  # kmod's rmmod, as kmod 30 prints it
        "build-toolchain-crashed",  # LLVM's crash banner (test_build_errors.py)
        "dpkg-dependency-missing",  # dpkg's depcon.c lines, as dpkg 1.22 prints them
        "hwctx-legacy-xclbin-load",  # XRT's noshim::load_axlf (TOOLS above)
        "python-library-not-loaded",  # CPython's ctypes on Windows (TOOLS above)
        "build-python-import-mismatch",  # CPython's import_from (TOOLS above)
        "cpp-bad-alloc",  # the C++ runtime's std::bad_alloc (TOOLS above)
        "xrt-run-crashed",  # tools/backtrace.crashed_in_xrt (test_backtrace.py)
        "build-compile-raised",  # tools/backtrace.python_compile_step (test_backtrace.py)
        "build-script-step-failed",  # tools/backtrace.python_build_step (test_backtrace.py)
        "build-nix-evaluation-error",  # Nix's evaluator (TOOLS below)
        "aie-tile-memory-exceeded",  # mlir-aie's AIEAssignBuffers.cpp (TOOLS below)
        "build-static-checker-warning",  # build_errors.smatch_warning (test_build_errors.py)
        "build-nix-builder-failed",  # Nix's store, 2.18 and 2.35 (TOOLS below)
        "build-robot-new-warning",  # build_errors.robot_warning (test_build_errors.py)
        "build-aiecc-cpp-step-failed",  # the C++ aiecc's own failures (TOOLS above)
        "toolchain-tests-failed",  # readers: lit's failed list of compiler tests (TOOLS above)
        "python-numpy-abi",
        "build-aiecc-step-failed",  # aiecc.py's step and FlexNet's refusal (test_build_errors)
        "build-toolchain-license",
        "package-dependency-unresolvable",  # apt, libsolv and pacman (TOOLS above)
        "yum-dependency-missing",
        "npu-run-check-failed",  # readers: a failing verdict after a run (test_run_outcomes)
    }
    assert {e.code for e in load_knowledge()} == seen | synthetic | GENERIC


def test_codes_are_stable_and_public() -> None:
    assert known_codes() >= STABLE_CODES
    assert len(known_codes()) == len(load_knowledge())


def test_every_entry_names_its_evidence_or_upstream_source() -> None:
    cases = {folder.name[:3] for folder in FIELD.iterdir() if folder.is_dir()}
    cases |= {case.ident for case in load_corpus(CORPUS)}
    located = {f"{m.file.rsplit('/', 1)[-1]}:{m.function}" for m in catalogue().messages}
    families = {f.id for f in load_families()}
    for entry in load_knowledge():
        assert entry.evidence or entry.upstream, entry.code
        assert set(entry.evidence) <= cases, entry.code
        for source in entry.upstream:
            assert source.startswith("xdnaforge:") or source in located, (entry.code, source)
        assert entry.family in families, entry.code


def test_the_catalogue_records_the_commits_it_read() -> None:
    commits = {s["commit"][:8] for s in catalogue().sources if s["repo"] == "amd/xdna-driver"}
    # the recipes' pins, beside every release the snapshots hold
    assert commits >= {"49c590dc", "f0b7bd5f", "ca5bce25", "beb9e450"}
    repos = {s["repo"] for s in catalogue().sources}
    assert repos == {
        "amd/xdna-driver",
        "Xilinx/XRT",
        "torvalds/linux",
        "ROCm/FastFlowLM",
        "lemonade-sdk/lemonade",
        "nod-ai/iree-amd-aie",
        "dkms-project/dkms",
        "Xilinx/aie-rt",
        "amd/gaia",
        "Xilinx/mlir-aie",
        "Xilinx/mlir-air",
        "AMDResearch/Riallto",
    }
    # the Python Lemonade's releases (5.0 to 9.1) beside the C++ server's
    lemonade = {s["label"] for s in catalogue().sources if s["repo"] == "lemonade-sdk/lemonade"}
    assert {"v5.0.0", "v8.1.0", "v9.1.4", "v10.0.0"} <= lemonade
    # mlir-aie's main branch at dates: forks whose main is at an upstream commit
    assert sum(s["repo"] == "Xilinx/mlir-aie" for s in catalogue().sources) >= 5
    labels = {s["label"] for s in catalogue().sources if s["repo"] == "Xilinx/XRT"}
    assert {"202410.2.17.319", "202510.2.19.194", "2.25.0"} <= labels
    # DKMS from 2.8 (Ubuntu 20.04) to 3.x, the releases distributions ship
    dkms = {s["label"] for s in catalogue().sources if s["repo"] == "dkms-project/dkms"}
    assert {"v2.8.1", "v3.0.10", "v3.2.0"} <= dkms
    assert not any(label.startswith(("v2.7", "v2.0")) for label in dkms)
    message = catalogue().locate("Error!  Build of zocl.ko failed for: 6.8.0-1019-xilinx (aarch64)")
    assert message is not None
    assert (message.component, message.family) == ("dkms", "build")
    assert message.function in ("actual_build", "do_build", "prepare_and_actual_build")
    located = catalogue().locate(
        "[AIE ERROR] _XAie_LoadProgMemSection():231: Overflow of program memory"
    )
    assert located is not None
    assert (located.component, located.family) == ("aie-rt", "build")
    message = catalogue().locate("amdxdna 0000:05:00.1: aie2_init: Enable PASID failed, ret -28")
    assert message is not None
    assert message.describe() == "amdxdna aie2_pci.c:aie2_init: Enable PASID failed, ret %d"


@pytest.mark.parametrize(
    ("line", "template"),
    [
        # the template's longest piece is "failed, 0x", not "d failed, 0x" (the d of %d)
        (
            "amdxdna 0000:c6:00.1: [drm] *ERROR* aie2_smu_exec: smu cmd 4 failed, 0xff",
            "smu cmd %d failed, 0x%x",
        ),
        # the shim's mmap error (corpus c060, field 043): its pieces sit between %p and %ld
        (
            "[xrt-smi] ERROR: mmap(addr=0x7f2dd0000000, len=67108864, prot=3, flags=8209, "
            "offset=4294967296) failed (err=-11): Resource temporarily unavailable",
            "mmap(addr=%p, len=%ld, prot=%d, flags=%d, offset=%ld) failed (err=%d)",
        ),
    ],
)
def test_a_line_is_located_past_its_templates_conversions(line: str, template: str) -> None:
    message = catalogue().locate(line)
    assert message is not None
    assert message.template == template


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("aie2_init: Enable PASID failed, ret -19", "ENODEV"),
        ("DRM_IOCTL_AMDXDNA_CREATE_BO IOCTL failed (err=-22): Invalid argument", "EINVAL"),
        ("DRM_IOCTL_AMDXDNA_SET_STATE IOCTL failed (err=13): Permission denied", "EACCES"),
        ("Direct firmware load for amdnpu/1502_00/npu.sbin failed with error -2", "ENOENT"),
        ("aie2_send_mgmt_msg_wait: command failed, ret 0xffffff92", "ETIMEDOUT"),
        ("Set hclock to 1600 failed, ret -110", "ETIMEDOUT"),
        ("amdxdna_drm_open: SVA bind device failed, ret -28", "ENOSPC"),
        ("aie2_smu_exec: smu cmd 4 failed, 0xff", None),
        ("command opcode 0x2 failed, status 0x2000003", None),
    ],
)
def test_errno_values_are_decoded(line: str, name: str | None) -> None:
    errno = decode(line)
    assert (errno.name if errno else None) == name


def test_same_driver_message_with_another_errno_is_still_known() -> None:
    # only "ret -95" was in a field log; -19 and -28 are the same driver message
    for ret, name in (("-19", "ENODEV"), ("-28", "ENOSPC")):
        line = (
            "amdxdna 0000:c5:00.1: [drm] *ERROR* amdxdna_drm_open: "
            f"SVA bind device failed, ret {ret}"
        )
        (diagnosis,) = diagnose(line)
        assert (diagnosis.family, diagnosis.errno.split()[0]) == ("iommu", name)
        assert (
            diagnosis.source
            == "amdxdna amdxdna_drm.c:amdxdna_drm_open: SVA bind device failed, ret %d"
        )
    (pasid,) = diagnose("amdxdna 0000:05:00.1: aie2_init: Enable PASID failed, ret -19")
    assert pasid.code == "iommu-pasid"
    assert pasid.cause.startswith("The IOMMU offers no PASID/SVA")  # the ENODEV refinement


def test_healthy_only_when_nothing_contradicts_it() -> None:
    healthy = field_log("036")  # an examine listing the NPU
    assert judge(healthy).status == HEALTHY_VERDICT
    unknown_line = "amdxdna 0000:67:00.1: [drm] *ERROR* aie2_frob: new failure, ret -5"
    assert judge(f"{healthy}\n{unknown_line}\n").status == UNKNOWN_FAILURE
    known_line = (
        "amdxdna 0000:67:00.1: [drm] *ERROR* amdxdna_drm_open: SVA bind device failed, ret -95"
    )
    assert judge(f"{healthy}\n{known_line}\n").status == FAILURE
    flm = field_log("016")
    assert judge(flm).status == HEALTHY_VERDICT
    assert judge(flm + "[ERROR]  something the flm tool could not do\n").status == UNKNOWN_FAILURE


def test_a_templated_driver_message_gets_its_sources_family_never_unknown() -> None:
    line = "amdxdna 0000:c5:00.1: [drm] *ERROR* aie2_init: pcim enable device failed, ret -5"
    verdict = judge(line + "\n")
    assert verdict.status == FAILURE
    assert verdict.unexplained == ()
    (diagnosis,) = verdict.diagnoses
    assert diagnosis.family == "firmware"  # aie2_pci.c: the device's bring-up (source table)
    assert diagnosis.source.startswith("amdxdna aie2_pci.c:aie2_init: pcim enable device failed")


def test_an_error_line_no_template_or_entry_knows_is_an_unknown_failure() -> None:
    line = "amdxdna 0000:c5:00.1: [drm] *ERROR* aie2_frobnicate: widget rebalance failed, ret -5"
    verdict = judge(line + "\n")
    assert verdict.status == UNKNOWN_FAILURE
    (item,) = verdict.unexplained
    assert "widget rebalance failed" in item.describe()


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
    text = "amdxdna 0000:c5:00.1: [drm] *ERROR* aie2_frobnicate: something new happened, ret -5\n"
    diagnoses = diagnose(text)
    assert diagnoses == []
    assert unexplained_failures(text, diagnoses) == [text.strip()]
    (item,) = judge(text).unexplained
    assert item.source is None
    assert item.describe() == f"no known signature explains: {text.strip()}"


def test_bad_knowledge_files_are_rejected_with_positions() -> None:
    with pytest.raises(Exception, match=r"knowledge.yaml:4:5: entries\[0\]\.severity"):
        parse_knowledge(
            "schema: 1\nentries:\n  - code: x\n    severity: fatal\n    title: t\n"
            "    signatures: ['(']\n    cause: c\n    fix: f\n",
            "knowledge.yaml",
        )


def test_generic_families_read_only_the_npu_stack_lines() -> None:
    other = "amdgpu 0000:c4:00.0: amdgpu: failed to load firmware amdgpu/gc_11_5_0_mes1.bin"
    assert diagnose(other) == []
    assert judge(other).status == UNKNOWN_FAILURE  # a failure, but not the NPU's firmware
    npu = "amdxdna 0000:c5:00.1: [drm] *ERROR* aie2_init: failed to load firmware, ret -2"
    (diagnosis,) = diagnose(npu)
    assert (diagnosis.family, diagnosis.errno.split()[0]) == ("firmware", "ENOENT")
    timed_out = "amdxdna 0000:c5:00.1: [drm] *ERROR* aie2_sched_job_timedout: Job timed out"
    assert [d.family for d in diagnose(timed_out)] == ["command"]
    build = "/src/driver/amdxdna/amdxdna_gem.c:12:5: error: too few arguments to function 'f'"
    assert [d.code for d in diagnose(build)] == ["build-kernel-api"]


def test_error_in_a_name_is_not_a_failure_word() -> None:
    # apt and dpkg output pasted beside an install of the stack's packages
    for line in (
        "Get:7 http://deb.debian.org/debian forky/main amd64 libgpg-error-dev amd64 1.51-4",
        "Setting up libgpg-error0:amd64 (1.51-4) ...",
        "CXX_FLAGS: -O2 -Wno-error=deprecated-declarations",
    ):
        assert not looks_failed(line), line
    for line in ("error: 'uint8_t' was not declared", "[ERROR]  No NPU device found.", "ERROR"):
        assert looks_failed(line), line


# what ninja 1.11.1 printed on Debian 13 for a target, an input and a build file it lacked
NINJA = {
    "ninja: error: unknown target 'npu_engine_universal'": "ninja-unknown-target",
    "ninja: error: 'missing.c', needed by 'other', missing and no known rule to make it": (
        "ninja-missing-input"
    ),
    "ninja: error: loading 'build.ninja': No such file or directory": "ninja-no-build-file",
    "[1/1] false\nFAILED: out.o \nfalse\nninja: build stopped: subcommand failed.": (
        "make-target-failed"
    ),
}


@pytest.mark.parametrize(("text", "code"), NINJA.items())
def test_ninjas_messages_name_what_is_missing(text: str, code: str) -> None:
    verdict = judge(text + "\n")
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].code == code
    assert verdict.diagnoses[0].family == "build"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (
            "./example: error while loading shared libraries: libxrt_coreutil.so.2: cannot "
            "open shared object file: No such file or directory",
            "xrt-library-not-found",
        ),
        # the shells' own messages for a command not on PATH (bash, zsh, cmd.exe, PowerShell)
        ("bash: xrt-smi: command not found", "xrt-tools-not-on-path"),
        ("zsh: command not found: flm", "xrt-tools-not-on-path"),
        (
            "'xrt-smi' is not recognized as an internal or external command,\n"
            "operable program or batch file.",
            "xrt-tools-not-on-path",
        ),
        (
            "xbutil : The term 'xbutil' is not recognized as the name of a cmdlet, function, "
            "script file, or operable program.",
            "xrt-tools-not-on-path",
        ),
    ],
)
def test_xrts_environment_missing_is_device_access(text: str, code: str) -> None:
    verdict = judge(text + "\n")
    assert [d.code for d in verdict.diagnoses] == [code]
    assert verdict.diagnoses[0].family == "device-access"


# wget 1.21 and curl 7.88 as they report a missing file; xrt-smi's top-level refusal
# (XBMain.cpp prints the program_options error bare)
TOOLS = {
    "2025-01-09 13:41:14 ERROR 404: Not Found.": "build-download-failed",
    "curl: (22) The requested URL returned error: 404": "build-download-failed",
    "Unrecognized arguments:\n  --v\n\nUSAGE: xrt-smi [--help] [--version]": (
        "tool-unrecognized-arguments"
    ),
    # dash and bash on Debian 13, and a wrapper script sourcing a file that is not there
    "[ERROR]  Failed to load model: No such file '/opt/flm/xclbins/Llama-3.2-1B/layer.xclbin'": (
        "xclbin-file-missing"
    ),
    # FastFlowLM 0.9.45's sanity check (src/src/main.cpp): an NPU of fewer than 8 columns
    "[Linux]  Kernel: 6.18.0\n[ERROR]  NPU /dev/accel/accel0 does not have enough columns "
    "(4 < 8)": "versions-mismatch",
    "sh: 1: chesscc: not found": "build-command-not-found",
    "/opt/flm/bin/flm-real: error while loading shared libraries: libreadline.so.8: cannot "
    "open shared object file: No such file or directory": "shared-library-missing",
    "E20260827 08:17:12.221364 10332 xclbin_fingerprint.cpp:71] Failed to open xclbin": (
        "xclbin-file-missing"
    ),
    "Failed to create GE handle: Error: No compatible xclbin file found": "xclbin-file-missing",
    # argparse's and Click's own refusals (CPython Lib/argparse.py, click/exceptions.py)
    "usage: gaia [-h] [-v] {prompt,chat}\ngaia: error: argument action: invalid choice: "
    "'init' (choose from prompt, chat)": "cli-usage-error",
    "lemonade-server: error: unrecognized arguments: --npu": "cli-usage-error",
    "NPU: PCI\\VEN_1022&DEV_1502 (1022:1502)\nError: Cannot install ryzenai-llm:npu on this "
    "system: Requires AMD XDNA 2 AMD NPU": "lemonade-npu-family-unsupported",
    "Usage: flm-tool [OPTIONS] COMMAND\nTry 'flm-tool --help' for help.\n\nError: No such "
    "command 'serv'.": "cli-usage-error",
    "modprobe: ERROR: could not insert 'amdxdna': Key was rejected by service": ("module-lockdown"),
    "bash: line 1: xchesscc: command not found": "build-command-not-found",
    # Windows' shells: cmd.exe's message 9009 (a path cut at its space: GAIA's installer under
    # "C:\\Users\\Paul Serdiuk") and PowerShell's CommandNotFoundException
    "'\"\"C:\\Users\\Paul' is not recognized as an internal or external command,\noperable "
    "program or batch file.": "build-command-not-found",
    "cmake : The term 'cmake' is not recognized as the name of a cmdlet, function, script "
    "file, or operable program.": "build-command-not-found",
    "xchesscc: line 53: /opt/aietools/tps/lnx64/target_aie2p/chess_env_LNa64.sh: No such file "
    "or directory": "build-command-not-found",
    # CMake's `cmake -E` file commands (Source/cmcmd.cxx), as a build step prints them
    'Error copying file (if different) from "/b/gen/ir.pyi" to "/b/python/".': (
        "build-cmake-file-step-failed"
    ),
    'Error creating directory "/opt/xilinx/xrt/share".': "build-cmake-file-step-failed",
    # pip's InvalidWheel and its summary of wheels it could not build (src/pip/_internal)
    "ERROR: Wheel 'mlir' located at /tmp/pip-unpack-kf2/mlir-22.0.0-py3-none-manylinux_2_28_"
    "x86_64.whl is invalid.": "pip-package-unbuildable",
    "ERROR: Could not build wheels for pyxrt, which is required to install pyproject.toml-"
    "based projects": "pip-package-unbuildable",
    # CPython's ctypes on Windows, and NumPy 2's check of a module built for NumPy 1
    "FileNotFoundError: Could not find module 'C:\\ryzenai\\lib\\tvm_ipu.dll' (or one of its "
    "dependencies). Try using the full path with constructor syntax.": "python-library-not-loaded",
    "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.2.1 as it may crash.": (
        "python-numpy-abi"
    ),
    # the C++ runtime's allocation failure, as XRT's message layer and libstdc++ print it
    "[XRT] ERROR: std::bad_alloc": "cpp-bad-alloc",
    "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc": (
        "cpp-bad-alloc"
    ),
    # mlir-aie's C++ aiecc (tools/aiecc: Actions.h, ExecutionEngine.h)
    "aiecc: '/opt/llvm-aie/bin/clang' failed: exit code 1": "build-aiecc-cpp-step-failed",
    "aiecc: edge 'elfs_{0}.elf' (key 'main_core_0_4') failed": "build-aiecc-cpp-step-failed",
    # an MLIR op's verifier, no location in the paste (mlir/lib/IR/Operation.cpp)
    "error: 'aie.dma_bd' op Size 1 exceeds the [0:1023] range.": "build-compile-failed",
    # an assertion in the compiler's code (glibc's assert, as LLVM's tools print it)
    "clang: /src/llvm/lib/Target/AIE/AIE2InstrInfo.cpp:512: virtual void "
    "llvm::AIE2InstrInfo::copyPhysReg() const: Assertion `false' failed.": (
        "build-toolchain-crashed"
    ),
    # LLVM's symbolized stack dump (Signals.cpp), its banner cut off; gdb's frames say " in "
    "  #9 0x00007ff643dd3043 mlir::iree_compiler::runIreecMain(int, char **) "
    "C:\\iree\\compiler\\Tools\\iree_compile_lib.cc:355:0": "build-toolchain-crashed",
    # the Microsoft C runtime's assertion message, in llvm-aie's tree, and wrapped by a paste
    'Assertion failed: isReg() && "not a register", file G:\\src\\llvm-aie\\llvm\\lib\\'
    "CodeGen\\MachineOperand.cpp, line 366": "build-toolchain-crashed",
    "file G:\\xmc\\src\\common\\llvm-aie\\llvm\\include\\llvm/ADT/STLExtras.h, line 867": (
        "build-toolchain-crashed"
    ),
    # ... its place shortened to path:line, the line a paste broke it on
    '&& "Iteratees do not have equal length", llvm-aie .../STLExtras.h:867': (
        "build-toolchain-crashed"
    ),
    # LLVM's pass manager's stack entry, the pass the crash stopped in
    "  Running pass 'InstructionSelect' on function '@main'": "build-toolchain-crashed",
    # CPython's import_from (Python/ceval.c): "cannot import name %R from %R (%S)"
    "ImportError: cannot import name '_is_integer_like_type' from 'aie.dialects.arith' "
    "(/venv/lib/python3.12/site-packages/aie/dialects/arith.py)": "build-python-import-mismatch",
    # lit's summary (lit/display.py) whose failed tests are all the compiler's own
    "Failed Tests (2):\n  LLVM :: CodeGen/AIE/aie2/set.ll\n  LLVM :: CodeGen/AIE/switch.ll\n\n"
    "Testing Time: 41.20s\n\nTotal Discovered Tests: 3120\n  Passed     : 3118 (99.94%)\n"
    "  Failed     :    2 (0.06%)": "toolchain-tests-failed",
    # a build script's own check for an NPU toolchain (1bit-MONSTER's build_xclbins.sh)
    "ERROR: MLIR-AIE toolchain not found at: /home/u/torch2aie/toolchain": (
        "build-command-not-found"
    ),
    # the package managers' unresolvable dependencies (apt's private-output.cc, libsolv's
    # problems.c for dnf and zypper, pacman's deps.c, yum's "Error: Package:" report)
    "The following packages have unmet dependencies:\n"
    " xrt : Depends: libboost-filesystem1.74.0 but it is not installable": (
        "package-dependency-unresolvable"
    ),
    " - nothing provides libyaml-devel >= 0.1.4 needed by xrt-2.7.766-1.x86_64": (
        "package-dependency-unresolvable"
    ),
    ":: unable to satisfy dependency 'xrt>=2.19' required by xrt-plugin-amdxdna": (
        "package-dependency-unresolvable"
    ),
    "Error: Package: xrt-2.7.766-1.x86_64 (/xrt_202010.2.7.766-xrt)\n"
    "           Requires: pkgconfig(yaml-0.1) >= 0.1.4": "yum-dependency-missing",
    # glibc's loader (elf/dl-version.c), pybind11's and pip's Python checks, pip's conflict
    # report and ONNX Runtime's model loader (model.cc), as they print them
    "./flm: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by "
    "./flm)": "binary-symbol-version-missing",
    "ImportError: Python version mismatch: module was compiled for Python 3.10, but the "
    "interpreter version is incompatible: 3.12.3.": "python-version-unsupported",
    "ERROR: Package 'ryzenai' requires a different Python: 3.13.1 not in '<3.13,>=3.10'": (
        "python-version-unsupported"
    ),
    "voe 1.5.0 requires numpy<2, but you have numpy 2.1.0 which is incompatible.": (
        "pip-dependency-conflict"
    ),
    "[ONNXRuntimeError] : 1 : FAIL : Load model from m.onnx failed:Unsupported model IR "
    "version: 10, max supported IR version: 9": "onnx-ir-version-unsupported",
    # ONNX Runtime's Python API falling back to the CPU, and the EP's parser in a stack
    "EP Error [json.exception.parse_error.101] parse error at line 1, column 1: syntax error "
    "while parsing value - unexpected end of input; expected '[', '{', or a literal when using "
    "['VitisAIExecutionProvider']": "vitisai-config-unreadable",
    "public: static class vaip_core::ConfigProto __cdecl vaip_core::Config::parse_from_string("
    "char const * __ptr64)": "vitisai-config-unreadable",
    # systemd's journal of a packaged service whose unit names a directory never created
    "(lemond)\tlemonade-server.service: Failed to set up mount namespacing: /var/lib/lemonade: "
    "No such file or directory": "service-namespace-path-missing",
    # ls -l of a clone whose LFS files were never fetched: a link to the pointer's text
    "lrwxrwxrwx. 1 u u 127 Feb  2 11:37 lib/libonnxruntime.so -> 'version "
    "https://git-lfs.github.com/spec/v1'$'\\n''oid sha256:d02fbef250cc'": (
        "git-lfs-pointer-not-content"
    ),
    # a path made at cmd.exe's prompt with an undefined variable, as Vitis AI's loader reads it
    "E20240925 01:51:43.794515 10400 xclbin_file.cpp:101] Failed to open xclbin C:\\Windows\\"
    "System32\\AMD\\%RYZEN_AI_INSTALLATION_PATH%/voe-4.0-win_amd64/xclbins/phoenix/1x4.xclbin": (
        "windows-variable-unexpanded"
    ),
    # Nix 2.35 evaluating a NixOS module, and its store building a derivation (2.18, 2.35)
    "error: attribute 'xrt' missing\n       at /nix/store/w-source/modules/npu.nix:10:18:": (
        "build-nix-evaluation-error"
    ),
    "error: undefined variable 'xdna-driver'": "build-nix-evaluation-error",
    "error: builder for '/nix/store/abcdefghijklmnopqrstuvwxyz012345-xrt-2.19.0.drv' failed "
    "with exit code 2;": "build-nix-builder-failed",
    "error: Cannot build '/nix/store/abcdefghijklmnopqrstuvwxyz012345-xrt-2.19.0.drv'.\n"
    "       Reason: builder failed with exit code 2.": "build-nix-builder-failed",
    # mlir-aie's aie-assign-buffer-addresses pass, as aiecc prints MLIR's diagnostics
    "aie.mlir:2:3: error: 'aie.tile' op Basic sequential allocation failed.": (
        "aie-tile-memory-exceeded"
    ),
    'error: unknown: Failed to allocate buffer: "out0_buff_0" with size: 256000 bytes.': (
        "aie-tile-memory-exceeded"
    ),
    # XRT's noshim::load_axlf (ishim.h), as pybind11 raises it from pyxrt's device.load_xclbin
    "RuntimeError: load_axlf: Operation not supported": "hwctx-legacy-xclbin-load",
    # a Python traceback cut after its innermost frame, a pyxrt call (pyxrt.cpp's classes)
    **{
        "Traceback (most recent call last):\n"
        '  File "/w/run.py", line 8, in <module>\n    main()\n'
        f'  File "/w/npu.py", line 40, in setup\n    {code}': entry
        for code, entry in (
            ("self.ctx = xrt.hw_context(self.device, uuid)", "hwctx-create-raised"),
            ("uuid = device.register_xclbin(xrt.xclbin(path))", "xclbin-load-raised"),
            ("bo = xrt.bo(device, 4096, xrt.bo.host_only, k.group_id(0))", "bo-alloc-raised"),
            ("device = xrt.device(0)", "device-open-raised"),
        )
    },
}


# the driver core (drivers/base/dd.c, before and after 5.x) and kmod, as the kernel and
# modprobe print them
KERNEL = {
    "[    5.1] amdxdna 0000:c5:00.1: probe with driver amdxdna failed with error -110": (
        "driver-probe-failed"
    ),
    "[    5.1] amdxdna: probe of 0000:c5:00.1 failed with error -22": "driver-probe-failed",
    "modprobe: FATAL: Module amdxdna not found in directory /lib/modules/6.8.0-45-generic": (
        "module-not-found"
    ),
    "`modinfo: ERROR: Module amdxdna not found.`": "module-not-found",
    "[XRT] ERROR: Failed to submit the command to the hw queue (0xc01e0200):\nEven after the "
    "video memory manager split the DMA buffer, the video memory manager\ncould not page-in "
    "all of the required allocations into video memory at the same time.": ("windows-video-memory"),
    "Refreshing device list.\nCM_Reenumerate_DevNode failed : 0x33\nFailed to refresh device "
    "list.": "windows-cm-access-denied",
    "UserWarning: Specified provider 'VitisAIExecutionProvider' is not in available provider "
    "names.Available providers: 'CPUExecutionProvider'": "ort-vitisai-provider-missing",
    "The procedure entry point could not be located in the dynamic link library "
    "C:\\Windows\\System32\\AMD\\xrt_coreutil.dll": "windows-dll-entry-point",
    "[ 3.1] Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7": (
        "module-lockdown"
    ),
    # the Vitis AI runtime's target factory (Xilinx/Vitis-AI target_factory.cpp), as glog
    # prints its fatal line in a Ryzen AI run
    "F20260102 10:00:00.000001  4242 target_factory.cpp:161] Cannot find or create target "
    "with fingerprint=0x0a000205001c8d4c": "vitis-ai-target-unknown",
    "dpkg: error processing archive xrt_202510.2.19.0_24.04-amd64-npu.deb (--install):\n"
    " trying to overwrite '/opt/xilinx/xrt/lib/libxrt_coreutil.so', which is also in package "
    "xrt-base 2.19.0": "dpkg-file-conflict",
}


@pytest.mark.parametrize(("text", "code"), [*TOOLS.items(), *KERNEL.items()])
def test_the_tools_and_the_kernels_own_refusals_name_their_entry(text: str, code: str) -> None:
    verdict = judge(text + "\n")
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].code == code


def test_the_npu_stacks_own_missing_command_is_not_a_build_step() -> None:
    # XRT not installed or its setup.sh not sourced: not a toolchain of a build
    verdict = judge("bash: xrt-smi: command not found\n")
    assert "build-command-not-found" not in [d.code for d in verdict.diagnoses]


def test_the_probe_failure_stands_only_without_the_drivers_own_line() -> None:
    text = (
        "amdxdna 0000:c5:00.1: aie2_check_protocol: Incompatible firmware protocol major 7 "
        "minor 2\namdxdna 0000:c5:00.1: probe with driver amdxdna failed with error -22\n"
    )
    # a caller: what it says, the driver's line says better
    assert [d.code for d in judge(text).diagnoses] == ["fw-protocol-mismatch"]
    alone = text.split("\n", 1)[1]
    assert [d.code for d in judge(alone).diagnoses] == ["driver-probe-failed"]


def test_a_line_the_program_marks_as_a_warning_is_not_a_failure() -> None:
    # FastFlowLM's "[Warning]", a tool's "Warning:"; the kernel's WARNING report stays one
    assert judge(
        "[Warning]  Version check timed out; continuing without update info.\n"
    ).status == ("unknown")
    assert judge("Warning: could not reach the update server: timed out\n").status == "unknown"
    # CPython's warnings module: the file, its line and the category before the message
    python = (
        "C:\\envs\\x\\Lib\\site-packages\\torch\\utils\\cpp_extension.py:380: UserWarning: "
        "Error checking compiler version for cl: [WinError 2] The system cannot find the file\n"
    )
    assert judge(python).status == "unknown"
    stdin = "<stdin>:52: DeprecationWarning: passing copy=False failed. __array__ must ...\n"
    assert judge(stdin).status == "unknown"
    assert judge("/x/run.py:12: RuntimeError: failed\n").status == UNKNOWN_FAILURE
    kernel = "WARNING: CPU: 3 PID: 1 at drivers/accel/amdxdna/amdxdna_gem.c:12 f+0x1/0x2\n"
    assert judge(kernel).status == FAILURE


def test_a_failure_word_the_line_denies_is_no_failure() -> None:
    for line in ("# No *ERROR* lines — clean", "finished without error", "5 passed, 0 failed"):
        assert judge(line + "\n").status == "unknown", line
    # a measured error: a figure with a fraction, or an array of them, after the word
    for line in ("  Error:    [0.010805  0.036375  0.020953]", "max abs error = 2e-3"):
        assert judge(line + "\n").status == "unknown", line
    # ... but an error code or a version is none, and what follows the figure still counts
    for line in ("Error: -22", "Error: 0x80004005", "Error: 1.5.2 is not supported"):
        assert judge(line + "\n").status == UNKNOWN_FAILURE, line
    assert judge("Error: 2.5 GB allocation failed\n").status == UNKNOWN_FAILURE
    # what it does not deny still counts
    assert judge("open failed with no error code\n").status == UNKNOWN_FAILURE
    assert judge("Error: no errors allowed here\n").status == UNKNOWN_FAILURE


def test_a_line_the_program_marks_as_news_is_not_a_failure_unless_it_relays_an_error() -> None:
    # Lemonade's model manager says at Info that no NVIDIA GPU is there
    info = "[Info] (ModelManager)   - NVIDIA GPU: detection error: No NVIDIA discrete GPU found\n"
    assert judge(info).status == "unknown"
    assert judge("INFO: reading the device failed, trying the next one\n").status == "unknown"
    # ... and relays FastFlowLM's own error at Info: the error mark inside is the program's
    relayed = "[Info] (FLM) [ERROR]  Model not found: models--Qwen3-NPU2; Please check\n"
    assert judge(relayed).failing
    assert judge(info.replace("[Info]", "[Error]")).status == UNKNOWN_FAILURE


def test_an_npu_tools_own_error_lines_are_the_npu_stacks() -> None:
    # FastFlowLM's run on Windows: its error names no NPU, but the run is FastFlowLM's
    line = "Error: Failed to create context virtual (0xc01e0009): There was an error creating it"
    run = "[FLM]  Loading model: C:\\models\\Qwen3-0.6B-NPU2\n" + line + "\n"
    verdict = judge(run)
    assert [(d.code, d.line) for d in verdict.diagnoses] == [("hwctx-failed", 2)]
    # alone, the NTSTATUS in it is the Windows NPU driver's answer to XRT's shim ...
    assert judge(line + "\n").diagnoses[0].code == "hwctx-failed"
    # ... but without one, another program's "create context" is not the NPU's
    bare = "Error: Failed to create context virtual: There was an error creating it\n"
    assert judge(bare).status == UNKNOWN_FAILURE
    # an exception XRT threw makes the program's lines the stack's too
    thrown = "terminate called after throwing an instance of 'xrt_core::system_error'\n"
    assert judge(thrown + line + "\n").diagnoses[0].code == "hwctx-failed"
    # so does a program that loads an xclbin (pyxrt's RuntimeError on Windows)
    loads = "Loading XCLBIN: kernels\\4x4.xclbin\n"
    assert judge(loads + "RuntimeError: " + line[len("Error: ") :] + "\n").diagnoses[0].code == (
        "hwctx-failed"
    )


def test_an_errno_chain_passes_through_any_line_of_an_entry() -> None:
    # the context's first line carries no errno, its second does; the resume after it
    # passes the same errno up, and the shim's ioctl returns it to userspace
    log = (
        "what():  DRM_IOCTL_AMDXDNA_GET_INFO IOCTL failed (err=-22): Invalid argument\n"
        "amdxdna 0000:c5:00.1: [drm] *ERROR* aie2_config_cu: Lookup GEM object failed\n"
        "amdxdna 0000:c5:00.1: [drm] *ERROR* aie2_hwctx_restart: Config cu failed, ret -22\n"
        "amdxdna 0000:c5:00.1: [drm] *ERROR* amdxdna_pm_resume_get: Resume failed: -22\n"
    )
    families = [d.family for d in judge(log).diagnoses]
    assert families[0] == "hwctx"
    assert set(families) == {"hwctx", "versions", "power"}
    # pasted without the kernel log's prefix, the driver's templates still make the chain
    bare = "".join("  " + line.split("*ERROR* ")[1] + "\n" for line in log.splitlines()[1:])
    assert next(d.family for d in judge(bare).diagnoses) == "hwctx"
    # a line no driver template prints does not pass an errno up
    other = "  aie2_config_cu: Lookup GEM object failed\n  my_resume: Resume failed: -22\n"
    assert "power" not in [d.family for d in judge(other).diagnoses][:1]


def test_an_unload_of_a_module_that_was_not_loaded_is_no_failure() -> None:
    # kmod's rmmod, as a package's postinst runs it before it installs the new module
    log = "Unloading old modules\nrmmod: ERROR: Module zocl is not currently loaded\n"
    verdict = judge(log)
    assert verdict.status == UNKNOWN  # no failure, and no evidence either
    assert [(d.code, d.severity) for d in verdict.diagnoses] == [
        ("rmmod-not-loaded-harmless", "info")
    ]
    # another rmmod error is still one
    assert judge("rmmod: ERROR: Module amdxdna is in use\n").status != UNKNOWN


def test_dpkg_names_the_dependency_that_is_not_installed() -> None:
    log = (
        "dpkg: dependency problems prevent configuration of fastflowlm:\n"
        " fastflowlm depends on libxrt2 (>= 1:2.21.75); however:\n"
        "  Package libxrt2 is not installed.\n"
    )
    (diagnosis,) = [d for d in judge(log).diagnoses if d.severity == "error"]
    assert diagnosis.code == "dpkg-dependency-missing"
    assert "libxrt2" in diagnosis.cause
    assert "fastflowlm" in diagnosis.cause


def test_a_programs_refusal_of_an_unknown_argument_is_usage() -> None:
    # CMake's cmakemain.cxx, after a build that finished: the later command failed
    log = "[37/37] Linking CXX executable flm\n$ cmake --install --preset x\nUnknown argument x\n"
    verdict = judge(log)
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].family == "usage"
    # a kernel module's unknown parameter is ignored, not refused
    assert judge("amdxdna: unknown parameter 'fw_patches_enable' ignored\n").status == UNKNOWN


def test_windows_video_memory_text_is_read_where_a_paste_wraps_it() -> None:
    log = (
        "[XRT] ERROR: Failed to submit command to hw queue (0xc01e0200):\n"
        "Even after the video memory manager split the DMA buffer, the video \n"
        "memory manager could not page-in all of the required allocations into\n"
        "video memory at the same time. The device is unable to continue.\n"
    )
    assert judge(log).diagnoses[0].code == "windows-video-memory"


@pytest.mark.parametrize(
    "line",
    [
        # GAIA's installer, FastFlowLM on loading a model, Lemonade's driver check, and the
        # words any version check uses
        "- Current driver version (32.0.203.242) is not the recommended version 32.0.203.240",
        "[WARNING]  Local model qwen3:8b version: 0.9.45 < 1.0.2",
        "Warning: NPU driver not found. NPU inference requires NPU driver version 32.0.203.280.",
        "⚠️  Version mismatch detected!",
        "xrt version 2.19.0 is too old for this plugin",
    ],
)
def test_a_version_check_that_is_not_met_is_versions(line: str) -> None:
    verdict = judge(line + "\n")
    assert verdict.status == FAILURE
    assert [(d.code, d.family) for d in verdict.diagnoses][:1] == [
        ("version-requirement-unmet", "versions")
    ]


@pytest.mark.parametrize(
    "line",
    [
        # a requirement stated, met, or denied: no finding
        "No version mismatch detected",
        "FastFlowLM requires NPU driver version 32.0.203.304 or newer",
        "Version check passed: 1.0.2 >= 0.9.45",
        "Driver version: 32.0.203.240 (recommended)",
    ],
)
def test_a_version_check_that_is_met_is_no_finding(line: str) -> None:
    assert "version-requirement-unmet" not in [d.code for d in judge(line + "\n").diagnoses]


def test_a_weak_symbol_version_or_a_met_python_is_no_refusal() -> None:
    # glibc prints the weak form only as a warning (ldd -v); pip's list of none skipped
    assert judge("weak version `GLIBC_2.2.5' not found (required by ./x)\n").status != FAILURE
    ignored = "INFO: Ignored the following versions that require a different python version: none\n"
    assert judge(ignored).status != FAILURE


def test_gdbs_frames_are_not_llvms_stack_dump() -> None:
    frame = "#1  0x00007f0a1b2c3d4e in llvm::sys::RunSignalHandlers() () from /lib/libLLVM.so\n"
    assert "build-toolchain-crashed" not in [d.code for d in judge(frame).diagnoses]


def test_aiecc_pys_probe_for_the_optional_chess_compiler_is_no_failure() -> None:
    probe = "xchesscc not found.\nCould not find aietools from Vitis or Ryzen AI Software.\n"
    assert "build-command-not-found" not in [d.code for d in judge(probe).diagnoses]
    checked = "ERROR: xchesscc not found. Install Vitis AIE tools.\n"  # a script's own check
    assert "build-command-not-found" in [d.code for d in judge(checked).diagnoses]


def test_a_buffer_sync_as_the_windows_shim_names_it_is_memory() -> None:
    # XRT's Windows shim: a sync from the device invalidates the host's cache
    line = "error: Failed to invalidate cache (0xc000000d): The parameter is incorrect.\n"
    assert judge(line).diagnoses[0].family == "memory"
    # a web application's cache, with no NTSTATUS and no NPU, is nobody's buffer
    assert judge("ERROR: failed to invalidate cache for user 12\n").status == UNKNOWN_FAILURE


def test_an_uncaught_exception_restating_an_earlier_errno_is_that_error_passed_up() -> None:
    # XRT refused the buffer; the HIP layer above it threw, and its what() ends in the same
    # strerror: the buffer's refusal is the root, whatever the families' order
    log = (
        "[XRT] ERROR: XRT bo creation doesn't support WriteCombined flag.: "
        "Operation not permitted\n"
        "terminate called after throwing an instance of 'HIPError'\n"
        "  what():  : hipErrorInvalidValue (hipErrorInvalidValue): Operation not permitted\n"
    )
    assert [d.family for d in judge(log).diagnoses] == ["memory", "device-access"]
    # another errno in the what() is a failure of its own, in the families' order
    other = log.replace("(hipErrorInvalidValue): Operation not permitted", "(x): Permission denied")
    assert next(d.family for d in judge(other).diagnoses) == "device-access"


def test_a_windows_variable_in_a_path_is_unexpanded_only_where_something_failed() -> None:
    # the command that stored it, and a line that only shows it, are no failure
    assert judge(
        "C:\\x>set XLNX_VART_FIRMWARE=%RYZEN_AI_INSTALLATION_PATH%/voe/1x4.xclbin\n"
    ).status == ("unknown")
    # a progress figure is no variable
    assert "windows-variable-unexpanded" not in {
        d.code for d in judge("ERROR: failed at 50%/100% of the copy\n").diagnoses
    }
