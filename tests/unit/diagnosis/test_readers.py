"""The readers on whole runs: shapes of working tools are healthy on their own, an
anomaly after a passing check is never healthy, and every validate layout XRT's releases
print (data/report_layouts.json, generated from their format strings by
scripts/gen_report_layouts.py) is read by its structure."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO
from xdnaforge.diagnosis.log_verdict import FAILURE, HEALTHY, judge
from xdnaforge.tools.xrt_smi import parse_validate_text

FLM_VALIDATE = """[Linux]  Kernel: 6.17.0-14-generic
[Linux]  NPU: /dev/accel/accel0 with 8 columns
[Linux]  NPU FW Version: 1.1.2.64
[Linux]  amdxdna version: 0.6
[Linux]  Memlock Limit: infinity
"""


def test_a_clean_validate_then_a_degenerate_generation_is_a_failure() -> None:
    assert judge(FLM_VALIDATE).status == HEALTHY
    run = FLM_VALIDATE + "[FLM]  Loading model: Qwen3-4B-NPU2\n" + "hello " * 30 + "\n"
    verdict = judge(run)
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].code == "degenerate-output"


def test_a_failed_test_run_after_a_passing_one_is_a_failure() -> None:
    text = (
        "100% tests passed, 0 tests failed out of 4\n\n75% tests passed, 1 tests failed out of 4\n"
    )
    verdict = judge(text)
    assert verdict.status == FAILURE
    assert "test-run-failed" in [d.code for d in verdict.diagnoses]


def test_runs_in_shapes_of_working_tools_are_healthy() -> None:
    samples = {
        "[==========] 3 tests from 1 test suite ran. (5 ms total)\n"
        "[  PASSED  ] 3 tests.\n": "gtest",
        "===== 5 passed in 0.42s =====\n": "pytest",
        "Building module(s)... done.\n"
        "Installing /lib/modules/6.17.0/updates/dkms/amdxdna.ko.zst\n": "DKMS",
        "[LOG]  WebServer started on port 52625 with 4 I/O threads\n"
        "[🟡 ]  Dequeuing NPU request (0 remaining)...\n": "FastFlowLM serving",
        "[Telemetry] Inference completed: model=qwen3-FLM, tokens=50 (in=10, out=40), "
        "ttft=0.2s, tps=20\n": "Lemonade",
    }
    for text, shape in samples.items():
        verdict = judge(text)
        assert verdict.status == HEALTHY, shape
        assert verdict.evidence is not None
        assert shape in verdict.evidence


def test_a_server_that_only_started_is_not_healthy() -> None:
    assert judge("[LOG]  WebServer started on port 52625 with 4 I/O threads\n").status != HEALTHY


DATA = REPO / "src/xdnaforge/diagnosis/data/report_layouts.json"
LAYOUTS = json.loads(DATA.read_text())["layouts"]
BDF = "0000:c5:00.1"


def render(layout: dict[str, object], status: str) -> str:
    """A validate report of one test, printed with the layout's own format strings."""
    lines = layout["lines"]
    assert isinstance(lines, list)
    values = {
        "Validate Device": BDF,
        "Platform": "NPU Strix",
        "Power Mode": "Default",
        "Performance Mode": "Default",
    }
    out = []
    header_done: set[str] = set()
    for line in lines:
        label = line["label"]
        if (
            label in values
            and label not in header_done
            and line["format"].startswith(("%-26s", "    %"))
        ):
            header_done.add(label)
            out.append(line["format"] % (label, values[label]))
    test = str(layout["test_header"]) % (1, BDF)
    out.append(str(layout["test_line"]) % (test, "latency"))
    out.append(f"    {'Details':<22}: Average latency: 90.0 us\n")  # validate's redirect_log
    status_format = next(x["format"] for x in lines if x["label"] == "Test Status")
    out.append(status_format % ("Test Status", status))
    return "".join(out)


def releases(layout: dict[str, object]) -> str:
    found = layout["releases"]
    assert isinstance(found, list)
    return ",".join(r["label"] for r in found)


def test_the_layouts_cover_the_npu_releases() -> None:
    labels = {r["label"] for layout in LAYOUTS for r in layout["releases"]}
    assert {"202410.2.17.319", "202510.2.19.194", "2.25.0"} <= labels


@pytest.mark.parametrize("layout", LAYOUTS, ids=releases)
def test_a_passing_run_in_every_releases_layout_is_healthy(layout: dict[str, object]) -> None:
    text = render(layout, "PASSED")
    validation = parse_validate_text(text)
    assert validation.device == BDF
    assert [t.status for t in validation.tests] == ["PASSED"]
    verdict = judge(text)
    assert verdict.status == HEALTHY
    assert verdict.evidence == "xrt-smi validate: 1 test(s) passed"


@pytest.mark.parametrize("layout", LAYOUTS, ids=releases)
def test_a_failing_run_in_every_releases_layout_is_not_healthy(layout: dict[str, object]) -> None:
    text = render(layout, "FAILED")
    assert [t.status for t in parse_validate_text(text).tests] == ["FAILED"]
    assert judge(text).status != HEALTHY


def test_fastflowlm_on_an_xdna1_npu_is_this_npu_not_supported_first() -> None:
    text = (
        "[Linux]  Kernel: 6.17.0-14-generic\n"
        "[FLM]  Loading model: /root/.config/flm/models/Llama-3.2-1B-NPU2\n"
        "[ERROR]  Failed to load model: DRM_IOCTL_AMDXDNA_CREATE_HWCTX IOCTL failed (err=-22)\n"
        "amdxdna 0000:c4:00.1: Loading firmware: amdnpu/1502_00/npu.sbin\n"
    )
    verdict = judge(text)
    assert verdict.diagnoses[0].code == "flm-xdna1-unsupported"
    assert "hwctx-create-failed" in [d.code for d in verdict.diagnoses]
    # the same failure on an XDNA2 NPU is the context's
    other = judge(text.replace("1502_00", "17f0_10"))
    assert "flm-xdna1-unsupported" not in [d.code for d in other.diagnoses]


def test_an_examine_listing_no_device_is_a_finding_even_after_the_driver_probed() -> None:
    text = (
        "[   10.209216] [drm] Initialized amdxdna_accel_driver 0.0.0 for 0000:10:00.1 on minor 0\n"
        "\nDevice(s) Present\n  0 devices found\n"
    )
    verdict = judge(text)
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].family == "device-access"
    # 2.17's heading too (each release's, from the generated layouts)
    assert judge(text.replace("Device(s) Present", "Devices present")).status == FAILURE
