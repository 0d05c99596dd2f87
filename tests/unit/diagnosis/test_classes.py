"""Each class of issue 26 on real logs of the corpus (tests/fixtures/corpus: every file
names its source thread): the readers' healthy shapes, build logs' first errors, kernel
events, devices that are not there, and healthy output followed by a failure."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from xdnaforge.diagnosis.evaluate import Case, load_corpus
from xdnaforge.diagnosis.log_verdict import FAILURE, HEALTHY, Verdict, judge

CASES = {case.ident: case for case in load_corpus(REPO / "tests/fixtures/corpus")}


def verdict_of(ident: str) -> Verdict:
    case: Case = CASES[ident]
    return judge(case.text)


def first_error(verdict: Verdict) -> tuple[str, str]:
    error = next(d for d in verdict.diagnoses if d.severity == "error")
    return error.code, error.family


@pytest.mark.parametrize(
    ("ident", "evidence"),
    [
        # Windows layouts: xrt-smi validate (Phoenix) and xbutil.exe verify with Details
        ("c004", "xrt-smi validate: 3 test(s) passed"),
        ("c062", "xrt-smi validate: 1 test(s) passed"),
        # examine of an npu1 (Phoenix): the 2.17 list and the 2.18 "||Name" table
        ("c043", "xrt-smi examine: RyzenAI-npu1 present"),
        ("c052", "xrt-smi examine: RyzenAI-npu1 present"),
        # 2.25's table with Architecture and Topology, and the -r platform report header
        ("c075", "xrt-smi examine: NPU Strix present"),
        ("c042", "xrt-smi examine: NPU Strix present"),
        # flm validate inside a container
        ("c008", "flm validate: NPU /dev/accel/accel0, firmware 255.0.11.69"),
        # a probe deferred (-517) and then carried on
        (
            "c005",
            "amdxdna probe of axi:telluride_drm deferred (EPROBE_DEFER), then retried and "
            "carried on",
        ),
        # the noop example of xdna-driver on Phoenix
        ("c065", "example test PASSED, average latency 92 us"),
        # FastFlowLM generating at several context lengths (32k, 16k, 8k checkpoints)
        ("c103", "FastFlowLM generated on the NPU (decoding 4.14872 tokens/s)"),
    ],
)
def test_healthy_shapes_the_readers_know(ident: str, evidence: str) -> None:
    verdict = verdict_of(ident)
    assert (verdict.status, verdict.evidence) == (HEALTHY, evidence)
    assert not [d for d in verdict.diagnoses if d.severity == "error"]


def test_the_deferred_probe_is_a_note_not_a_failure() -> None:
    verdict = verdict_of("c005")
    assert [(d.code, d.severity) for d in verdict.diagnoses] == [("probe-deferred", "info")]
    assert verdict.unexplained == ()  # "Hardware init failed, ret -517" is no failure


@pytest.mark.parametrize(
    ("ident", "code", "named"),
    [
        ("c015", "build-missing-header", "boost/process/search_path.hpp; it comes from Boost"),
        ("c082", "build-missing-header", "CL/cl.h; it comes from the OpenCL headers"),
        ("c083", "build-missing-header", "CL/cl.h; it comes from the OpenCL headers"),
        ("c016", "build-dependency-api", "from Boost (libboost-dev)"),
        ("c017", "build-undefined-symbol", "OPENSSL_sk_new_null is defined by OpenSSL"),
        ("c018", "build-undefined-symbol", "is defined by XRT's libxrt_coreutil"),
        ("c038", "build-undefined-symbol", "PyThread_tss_get is defined by libpython"),
        ("c034", "build-library-not-found", "no libtest_utils"),
        ("c041", "build-werror", "-Wint-to-pointer-cast, which -Werror turns"),
        # the function without a declaration first, the -Werror that made it fatal after
        ("c050", "build-implicit-function", "kfree is called where no header declared it"),
        ("c094", "build-std-header-missing", "std::out_of_range is declared in <stdexcept>"),
        ("c095", "build-std-header-missing", "std::unique_ptr is declared in <memory>"),
        ("c096", "build-missing-header", "<version> is a C++20 header"),
        ("c021", "build-missing-header", "glibc has <endian.h> instead"),
        ("c040", "build-cmake-find-package", "find_package(pybind11 2.10.4) in python/"),
        ("c022", "build-kernel-headers-missing", "kernel 5.16.0-kali7-amd64 are not installed"),
        ("c068", "build-dkms-module-failed", "do not build for kernel 6.17.2-2-pve"),
        # the module a ctest needs comes first, the failed ctest after it
        ("c037", "build-python-module-missing", "Python found no module pyxrt"),
    ],
)
def test_a_build_log_is_diagnosed_by_what_its_first_error_names(
    ident: str, code: str, named: str
) -> None:
    verdict = verdict_of(ident)
    assert verdict.status == FAILURE
    error = next(d for d in verdict.diagnoses if d.severity == "error")
    assert (error.code, error.family) == (code, "build")
    assert named in error.cause


def test_a_failed_ctest_ranks_after_the_module_it_could_not_import() -> None:
    codes = [d.code for d in verdict_of("c037").diagnoses]
    assert codes.index("build-python-module-missing") < codes.index("build-ctest-failed")


def test_make_only_passes_a_failure_on() -> None:
    # a test run from make: the runtime error is the diagnosis, make's Error 134 after it
    verdict = verdict_of("c064")
    assert first_error(verdict) == ("command-timeout", "command")
    codes = [d.code for d in verdict.diagnoses]
    assert codes[0] == "command-timeout"
    assert "make-run-failed" in codes[1:]
    run = next(d for d in verdict.diagnoses if d.code == "make-run-failed")
    assert 'The "run" target ran a program' in run.cause
    assert "exited with status 134" in run.cause


@pytest.mark.parametrize(
    ("ident", "code", "family"),
    [
        ("c006", "iommu-page-fault", "iommu"),  # IO_PAGE_FAULT of the NPU's firmware
        ("c066", "iommu-page-fault", "iommu"),  # a flood of them (NVMe)
        ("c027", "command-timeout", "command"),  # validate: the test timed out
        ("c032", "command-timeout", "command"),  # runlist ERT_CMD_STATE_TIMEOUT
        ("c046", "kernel-warning", "kernel"),  # WARNING with its call trace
        ("c013", "kernel-oops", "kernel"),  # NULL dereference in aie2_cmdlist_fill_slot
        ("c012", "kernel-call-trace", "kernel"),  # an Oops whose first lines were not pasted
        ("c026", "module-unknown-symbol", "module"),  # built for another kernel
        ("c025", "module-vermagic", "module"),  # insmod's refusal ranks after the reason
        ("c076", "module-lockdown", "module"),  # Secure Boot rejects the key (EKEYREJECTED)
    ],
)
def test_kernel_events_by_class(ident: str, code: str, family: str) -> None:
    verdict = verdict_of(ident)
    assert verdict.status == FAILURE
    assert first_error(verdict) == (code, family)


def test_kernel_events_name_what_they_hit() -> None:
    warning = next(d for d in verdict_of("c046").diagnoses if d.code == "kernel-warning")
    assert "rn_clk_mgr_construct" in warning.cause
    symbol = next(d for d in verdict_of("c026").diagnoses if d.code == "module-unknown-symbol")
    assert "__devm_regmap_init_i3c" in symbol.cause
    magic = next(d for d in verdict_of("c025").diagnoses if d.code == "module-vermagic")
    assert "4.15.0-74-generic SMP mod_unload" in magic.cause
    assert "4.15.0-76-generic SMP mod_unload" in magic.cause


@pytest.mark.parametrize(
    "ident",
    [
        "c009",  # Incus container: flm validate finds no NPU
        "c011",  # Lemonade container: cannot use the NPU as an unprivileged user
        "c028",  # in-tree driver bound, xrt-smi: No devices found
        "c030",  # driver bound, XRT without the plugin: 0 devices found
        "c033",  # opening /dev/accel/accel0 fails with ENODEV
    ],
)
def test_no_device_is_family_device_access(ident: str) -> None:
    verdict = verdict_of(ident)
    assert verdict.status == FAILURE
    assert first_error(verdict)[1] == "device-access"


@pytest.mark.parametrize(
    ("ident", "family"),
    [
        ("c044", "command"),  # examine lists the NPU, then the example reports Failed.
        ("c045", "kernel"),  # the examples work, then a kernel BUG trace on close
        ("c011", "device-access"),  # a clean flm validate, then the NPU cannot be used
    ],
)
def test_a_failure_after_a_passing_check_is_never_healthy(ident: str, family: str) -> None:
    verdict = verdict_of(ident)
    assert verdict.status == FAILURE
    assert first_error(verdict)[1] == family


def test_an_ioctl_error_is_decoded_with_its_errno_and_meaning() -> None:
    error = next(d for d in verdict_of("c010").diagnoses if d.severity == "error")
    assert error.code == "hwctx-create-failed"
    assert error.errno == "EINVAL (22: Invalid argument)"
    assert error.ioctl == (
        "DRM_IOCTL_AMDXDNA_CREATE_HWCTX (create a hardware context (the firmware reserves "
        "columns for it))"
    )
