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


def render_host(layout: dict[str, object], firmware: str) -> str:
    """The head of an examine report, cut off before its device list, with the XRT
    section's device rows printed in the layout's own formats."""
    rows = layout["device_rows"]
    assert isinstance(rows, list)
    row_format = "  %-20s : %s\n"  # the host report's own rows, as XRT prints them
    out = ["System Configuration\n", row_format % ("OS Name", "Linux"), "\n", "XRT\n"]
    out.append(row_format % ("Version", "2.19.0"))
    out.append(row_format % ("amdxdna Version", "2.19.0_20250304, 3ec5f9d"))
    out += [row["format"] % (row["label"], firmware) for row in rows if row["npu"]]
    return "".join(out)


NPU_ROW_LAYOUTS = [x for x in LAYOUTS if any(r["npu"] for r in x.get("device_rows", []))]


def test_the_npu_device_rows_come_from_every_release_since_2_18() -> None:
    labels = {r["label"] for layout in NPU_ROW_LAYOUTS for r in layout["releases"]}
    assert {"202420.2.18.179", "202510.2.19.194", "2.25.0"} <= labels
    assert "202410.2.17.319" not in labels  # 2.17 prints "Firmware Version" for any device


@pytest.mark.parametrize("layout", NPU_ROW_LAYOUTS, ids=releases)
def test_an_examine_cut_off_before_its_device_list_shows_an_enumerated_npu(
    layout: dict[str, object],
) -> None:
    verdict = judge(render_host(layout, "1.0.9.128"))
    assert verdict.status == HEALTHY
    assert verdict.evidence == "xrt-smi examine: XRT enumerated an NPU (firmware 1.0.9.128)"
    # pasted without its indentation, and with Windows line ends, it says the same
    pasted = "\r\n".join(line.strip() for line in render_host(layout, "1.0.9.128").splitlines())
    assert judge(pasted).status == HEALTHY


@pytest.mark.parametrize("layout", NPU_ROW_LAYOUTS, ids=releases)
def test_an_examine_head_without_a_device_firmware_is_no_evidence(
    layout: dict[str, object],
) -> None:
    assert judge(render_host(layout, "N/A")).status != HEALTHY
    # the row outside the XRT section (a platform report's own table) is not this row
    moved = render_host(layout, "1.0.9.128").replace("XRT\n", "Platform\n")
    assert judge(moved).status != HEALTHY


def test_mlir_aies_lit_configuration_finding_the_npu_is_evidence() -> None:
    # lit.cfg.py: printed only for an NPU row of `xrt-smi examine`'s device table
    found = (
        "Found Ryzen AI device: [0000:c5:00.1]\n\tmodel: 'Phoenix'\n"
        "Running tests on NPU1 with command line: /w/mlir-aie/utils/run_on_npu.sh\n"
    )
    verdict = judge(found)
    assert verdict.status == HEALTHY
    assert verdict.evidence == (
        "mlir-aie's test configuration found the NPU [0000:c5:00.1] in xrt-smi examine's "
        "device table"
    )
    assert judge("Found Ryzen AI device: |[0000:41:00.1]\n").status == HEALTHY  # 2023's form
    assert judge("Found Ryzen AI device: none\n").status != HEALTHY
    # a failure after it is still a failure
    assert judge(found + "FAIL: AIE :: npu-xrt/add_one/run.lit (1 of 1)\n").status == FAILURE


PLATFORM_LAYOUTS = [x for x in LAYOUTS if x.get("platform_rows")]


def render_platform(layout: dict[str, object], values: tuple[str, ...]) -> str:
    """`xrt-smi examine --report platform` on an NPU, in the layout's own formats
    (ReportRyzenPlatform::writeReport), with its power estimate after the rows."""
    rows = layout["platform_rows"]
    assert isinstance(rows, list)
    out = ["Platform\n"]
    out += [row["format"] % (row["label"], value) for row, value in zip(rows, values, strict=False)]
    out.append(f"\n{'Estimated Power':<23}  : N/A\n")
    return "".join(out)


def test_the_platform_rows_come_from_every_release_since_2_17() -> None:
    labels = {r["label"] for layout in PLATFORM_LAYOUTS for r in layout["releases"]}
    assert {"202410.2.17.319", "202420.2.18.179", "202510.2.19.194", "2.25.0"} <= labels
    last = [r["label"] for r in PLATFORM_LAYOUTS[-1]["platform_rows"]]
    assert last == ["Name", "Power Mode", "Total Columns"]


@pytest.mark.parametrize("layout", PLATFORM_LAYOUTS, ids=releases)
def test_a_platform_report_is_the_npu_driver_answering(layout: dict[str, object]) -> None:
    report = render_platform(layout, ("NPU Strix", "Turbo", "8"))
    verdict = judge("$ xrt-smi examine --report platform\n\n" + report)
    assert verdict.status == HEALTHY
    assert verdict.evidence == (
        "xrt-smi examine --report platform: the NPU's driver answered (NPU Strix)"
    )
    pasted = "\r\n".join(" ".join(line.split()) for line in report.splitlines())
    assert judge(pasted).status == HEALTHY  # its padding lost, with Windows line ends
    # a value the device did not give, a report cut off before any release's rows are all
    # there (2.18's two rows are a whole report of 2.18), or rows under another heading are
    # no evidence
    assert judge(render_platform(layout, ("NPU Strix", "N/A", "N/A"))).status != HEALTHY
    assert judge("\n".join(report.splitlines()[:2])).status != HEALTHY
    assert judge(report.replace("Platform\n", "Platforms\n")).status != HEALTHY


def test_the_npus_estimated_power_is_its_driver_answering() -> None:
    # ReportRyzenPlatform.cpp's row, grepped out of the report (a patch's cover letter)
    shown = "# xrt-smi examine -r all | grep Power\n  Power Mode             : Default\n"
    answered = shown + f"{'Estimated Power':<23}  : 0.563 Watts\n"
    assert judge(answered).evidence == "xrt-smi: the NPU's estimated power (0.563 W)"
    # no figure (the query went unanswered), or no xrt-smi in the log: no evidence
    assert judge(shown + f"{'Estimated Power':<23}  : N/A\n").status != HEALTHY
    assert judge(answered.replace("xrt-smi", "sensors")).status != HEALTHY


# the object `flm validate --json` prints, as Lemonade's run_flm_validate reads it and its
# test/test_flm_status.py fakes it (lemonade-sdk/lemonade @ e385039e)
FLM_READY = (
    '{"ready":true,"amd_device_found":true,"all_fw_ok":true,"kernel_ok":true,'
    '"memlock_ok":true,"npu_driver_ok":true}\n'
)


def test_flm_validate_json_ready_is_healthy() -> None:
    verdict = judge("$ flm validate --json\n" + FLM_READY)
    assert verdict.status == HEALTHY
    assert verdict.evidence is not None
    assert verdict.evidence.startswith("flm validate --json")


@pytest.mark.parametrize(
    ("check", "code", "family"),
    [
        ("amd_device_found", "flm-no-npu-found", "device-access"),
        ("all_fw_ok", "flm-firmware-floor", "versions"),
        ("kernel_ok", "flm-kernel-unsupported", "versions"),
        ("memlock_ok", "flm-memlock-too-low", "memory"),
        ("npu_driver_ok", "flm-driver-floor", "versions"),
    ],
)
def test_flm_validate_json_not_ready_names_the_check(check: str, code: str, family: str) -> None:
    text = FLM_READY.replace('"ready":true', '"ready":false').replace(
        f'"{check}":true', f'"{check}":false'
    )
    verdict = judge(text)
    assert verdict.status == FAILURE
    assert [(d.code, d.family) for d in verdict.diagnoses] == [(code, family)]


def test_flm_validate_json_not_ready_without_a_check_is_an_unknown_failure() -> None:
    verdict = judge('{"ready": false}\n')
    assert verdict.status == "unknown failure"
    assert "not ready" in verdict.unexplained[0].line
    # a "ready" that is not a boolean is no verdict of flm's
    assert judge('{"ready": "yes"}\n').status != HEALTHY


@pytest.mark.parametrize("layout", LAYOUTS, ids=releases)
def test_a_report_cut_off_after_a_tests_details_is_read_as_cut_off(
    layout: dict[str, object],
) -> None:
    passed = render(layout, "PASSED")
    second = str(layout["test_line"]) % (str(layout["test_header"]) % (2, BDF), "gemm")
    details = f"    {'Details':<22}: TOPS: 51.0\n"
    verdict = judge(passed + second + details)
    assert verdict.status == HEALTHY
    assert verdict.evidence == "xrt-smi validate: 1 test(s) passed; cut off after test 2's details"
    # a test that printed nothing yet may still be running (a hang): no evidence from it
    assert judge(passed + second).status != HEALTHY
    # nor one whose log has an error
    error = f"    {'Error(s)':<22}: Failed to run the test\n"
    assert judge(passed + second + details + error).status != HEALTHY


def test_lemonades_telemetry_block_in_the_journal_is_an_inference() -> None:
    # 9.0.2's server.cpp prints the block with std::cout; lemonade-server runs under systemd
    block = (
        "=== Telemetry ===\nInput tokens:  19\nOutput tokens: 320\nTTFT (s):      1.632\n"
        "TPS:           10.33\n"
    )
    journal = "".join(
        f"Mar 01 16:46:29 host lemonade-server[32602]: {line}\n" for line in block.splitlines()
    )
    verdict = judge(journal)
    assert verdict.status == HEALTHY
    assert verdict.evidence == "Lemonade completed 1 inference(s) (320 tokens)"
    # 10.x adds the model; no output tokens is no inference
    assert "model qwen3-FLM" in str(
        judge("=== Telemetry ===\nModel:         qwen3-FLM\n" + block).evidence
    )
    assert judge(block.replace("320", "0")).status != HEALTHY
    # the kernel's lines are never a tool's output
    kernel = "".join(f"Mar 01 16:46:29 host kernel: {line}\n" for line in block.splitlines())
    assert judge(kernel).status != HEALTHY


def test_a_fastflowlm_api_answer_with_its_decoding_speed_is_a_generation() -> None:
    answer = '"usage":{"prompt_tokens":12,"completion_tokens":20,"decoding_speed_tps":61.16}\n'
    verdict = judge("[FLM]  WebServer started on port 11441 with 10 I/O threads\n" + answer)
    assert verdict.status == HEALTHY
    assert verdict.evidence == "FastFlowLM generated on the NPU (decoding 61.16 tokens/s)"
    assert judge('"usage":{"decoding_speed_tps":0.0}\n').status != HEALTHY


def examine_json(devices: object) -> str:
    """`xrt-smi examine -f JSON` as ReportHost::getPropertyTree20202 lays it out."""
    host = {
        "os": {"sysname": "Linux", "release": "6.17.0-14-generic"},
        "xrt": {"version": "2.19.0", "drivers": [{"name": "amdxdna", "version": "2.19.0"}]},
        "devices": devices,
    }
    return json.dumps({"schema_version": {"schema": "JSON"}, "system": {"host": host}}, indent=4)


def test_an_examine_json_report_lists_its_devices_or_none() -> None:
    npu = {"bdf": "0000:c5:00.1", "device_class": "Ryzen", "name": "NPU Strix"}
    verdict = judge(examine_json([npu]))
    assert verdict.status == HEALTHY
    assert verdict.evidence == "xrt-smi examine (JSON): NPU Strix present"
    # boost's ptree writes an empty list as ""
    empty = judge(examine_json(""))
    assert empty.status == FAILURE
    assert empty.diagnoses[0].family == "device-access"
    # other JSON is none of these
    assert judge('{"system": "x", "host": 1, "devices": 2}\n').status not in (HEALTHY, FAILURE)


def render_table(table: dict[str, object], rows: list[list[str]]) -> str:
    """A Table2D as XRT's Table2D::toString prints it (left-justified cells, the header,
    a row of dashes, the entries), with the release's own cell format and padding."""
    columns = table["columns"]
    assert isinstance(columns, list)
    cell, start, padding = str(table["cell"]), str(table["row_start"]), table["padding"]
    assert isinstance(padding, int)
    widths = [max(len(x) for x in [name, *(r[i] for r in rows)]) for i, name in enumerate(columns)]
    out = []
    for kind, values in [("head", columns), ("rule", None), *(("row", r) for r in rows)]:
        line = ""
        for i, width in enumerate(widths):
            data = "-" * width if values is None else values[i]
            fill = "-" if kind == "rule" else " "
            prefix = start if i == 0 else ""
            line += cell % (prefix, "", data, " " * (width - len(data)), fill * padding)
        out.append(line + "\n")
    return "".join(out)


TABLE_LAYOUTS = [x for x in LAYOUTS if x.get("device_table")]


def test_the_device_tables_come_from_every_release_since_2_17() -> None:
    labels = {r["label"] for layout in TABLE_LAYOUTS for r in layout["releases"]}
    assert {"202410.2.17.319", "202420.2.18.179", "202510.2.19.194", "2.25.0"} <= labels


@pytest.mark.parametrize("layout", TABLE_LAYOUTS, ids=releases)
def test_an_examine_device_table_in_every_releases_layout_lists_the_npu(
    layout: dict[str, object],
) -> None:
    table = layout["device_table"]
    assert isinstance(table, dict)
    values = {"BDF": f"[{BDF}]", ":": ":", "Name": "NPU Strix", "Architecture": "2.0"}
    row = [values.get(c, "N/A") for c in table["columns"]]
    text = f"{layout['device_list']}\n" + render_table(table, [row])
    verdict = judge(text)
    assert verdict.status == HEALTHY, text
    assert verdict.evidence == "xrt-smi examine: NPU Strix present"


@pytest.mark.parametrize("layout", TABLE_LAYOUTS, ids=releases)
def test_a_device_tables_header_alone_shows_a_device_was_enumerated(
    layout: dict[str, object],
) -> None:
    # ReportHost prints each class's table only when it has a device of that class
    for key, kind in (("device_table", "NPU"), ("other_table", "device")):
        table = layout[key]
        assert isinstance(table, dict)
        text = f"{layout['device_list']}\n" + render_table(table, [])
        verdict = judge(text)
        assert verdict.status == HEALTHY, text
        assert verdict.evidence == (
            f"xrt-smi examine: its {kind} table is printed (the log ends before its rows)"
        )
    # a header row that is no table of XRT's says nothing
    assert judge(f"{layout['device_list']}\n|BDF  |Colour  |\n").status != HEALTHY


def test_the_first_flm_validate_shape_names_its_npu() -> None:
    # the sample of the pull request that added `flm validate` (FastFlowLM #365)
    first = (
        "[Linux]  Kernel Version: 7.0.0-rc1-00048-g76872d177c3c\n"
        "[Linux]  Found AMD NPU at /dev/accel/accel0\n"
        "[Linux]  NPU FW Version: 1.1.2.64\n"
    )
    verdict = judge(first)
    assert verdict.status == HEALTHY
    assert verdict.evidence == "flm validate: NPU /dev/accel/accel0, firmware 1.1.2.64"
    assert judge(first + "[ERROR]  NPU firmware version is incompatible\n").status != HEALTHY


def test_the_shims_debug_output_of_a_created_context_is_evidence() -> None:
    # shim_debug as XRT's verbose mode prints it (hwctx.cpp)
    log = (
        "80: PID(384850): Created KMQ pcidev\n248054: PID(384850): Device opened, fd=3\n"
        "22133461: PID(384850): Creating HW context...\n"
        "26107168: PID(384850): Created KMQ HW context (1)\n"
    )
    verdict = judge(log)
    assert verdict.status == HEALTHY
    assert verdict.evidence == "the shim created KMQ hardware context 1"
    # a context that was being created, and no more, is none
    assert judge(log.rsplit("\n", 2)[0] + "\n").status != HEALTHY


def test_the_shims_debug_output_of_an_opened_device_is_evidence() -> None:
    # device.cpp: shim_debug("Created device (%s) ..."); 1.4: "Created KMQ device"
    for said in ("Created device", "Created KMQ device"):
        verdict = judge(f"1187: Created KMQ pcidev\n1535173: {said} (0000:c3:00.1) ...\n")
        assert verdict.evidence == "the shim opened the NPU device 0000:c3:00.1"


def test_the_only_test_cut_off_after_its_measured_details_is_evidence() -> None:
    # validate wraps a long log entry ("    %-22s  %s"): the figures are on the wrapped lines
    head = "Validate Device           : [00c5:00:01.1]\n    Platform              : NPU\n"
    test = (
        "Test 1 [00c5:00:01.1]     : verify\n"
        "    Details               : Kernel name is 'DPU_PDI_0'\n"
        "                            Average latency: '109.5' us\n"
    )
    verdict = judge(head + test)
    assert verdict.status == HEALTHY
    assert verdict.evidence is not None
    assert "Average latency: '109.5' us" in verdict.evidence
    # no figure yet: no evidence; an error under it: none either
    assert judge(head + test.rsplit("\n", 2)[0] + "\n").status != HEALTHY
    assert judge(head + test + "    Error(s)              : timed out\n").status != HEALTHY


# xrt-smi examine -r context-health as OO_ContextHealth.cpp prints it (Table2D, "0x%x")
CONTEXT_HEALTH = (
    "  Context Health Information (PID: 1856781):\n"
    "    |Ctx Id  |Txn Op Idx  |Ctx PC      |Fatal Err Type  |Fatal Err Ex Type  |\n"
    "    |--------|------------|------------|----------------|-------------------|\n"
    "    |2       |0xffffffff  |0x28b04c14  |0x0             |0x0                |\n"
)


def test_a_context_health_report_is_evidence_until_a_context_faulted() -> None:
    verdict = judge(CONTEXT_HEALTH)
    assert verdict.status == HEALTHY
    assert verdict.evidence == "xrt-smi context health: 1 context(s) on the NPU, no fatal error"
    faulted = (
        CONTEXT_HEALTH
        + "    |3       |0x12        |0x28b04c20  |0x4             |0x1                |\n"
    )
    verdict = judge(faulted)
    assert verdict.status == FAILURE
    assert [(d.code, d.family) for d in verdict.diagnoses] == [("context-fatal-error", "command")]
    assert "context 3" in verdict.diagnoses[0].cause
    # the heading alone (the report cut off before its table) is no evidence
    assert judge(CONTEXT_HEALTH.splitlines()[0] + "\n").status != HEALTHY


def test_validates_header_is_evidence_when_the_log_ends_before_its_first_test() -> None:
    # get_platform_info prints it after asking the driver for the device's BDF and name
    header = (
        "> xrt-smi validate -r latency --pmode default\n"
        "Validate Device           : [00c5:00:01.1]\n"
        "    Platform              : NPU Krackan\n"
        "    Power Mode            : Default\n"
    )
    verdict = judge(header)
    assert verdict.status == HEALTHY
    assert verdict.evidence is not None
    assert "[00c5:00:01.1]" in verdict.evidence
    assert "NPU Krackan" in verdict.evidence
    # a test that began and printed nothing more may have hung: no evidence
    started = header + "-" * 79 + "\nTest 1 [00c5:00:01.1]     : latency\n"
    assert judge(started).status != HEALTHY
    # a platform that is no NPU (an Alveo card) says nothing of the NPU
    alveo = "Validate Device           : [0000:17:00.1]\n    Platform              : xilinx_u250\n"
    assert judge(alveo).status != HEALTHY


def test_the_drivers_probe_line_is_read_with_or_without_its_minor_and_date() -> None:
    for line, says in (
        (
            "[drm] Initialized amdxdna_accel_driver 0.0.0 20240101 for 0000:c6:00.1 on minor 0",
            "amdxdna 0.0.0 probed 0000:c6:00.1 (minor 0)",
        ),
        (
            "[drm] Initialized amdxdna_accel_driver 0.7.0 for 0000:c6:00.1 on minor 1",
            "amdxdna 0.7.0 probed 0000:c6:00.1 (minor 1)",
        ),
        (
            "[drm] Initialized amdxdna_accel_driver 0.7.0 for 0000:c6:00.1",  # a paste's cut
            "amdxdna 0.7.0 probed 0000:c6:00.1",
        ),
    ):
        verdict = judge(f"[  773.586164] {line}\n")
        assert (verdict.status, verdict.evidence) == (HEALTHY, says)


ROCMINFO = "".join(
    f"{line:<66}\n"
    for line in (
        "*******",
        "Agent 3",
        "*******",
        "  Name:                    aie2",
        "  Uuid:                    AIE-XX",
        "  Marketing Name:          NPU Phoenix",
        "  Vendor Name:             AMD",
        "  Feature:                 AGENT_DISPATCH",
    )
)


def test_rocminfo_listing_the_npu_as_an_hsa_agent_is_healthy() -> None:
    # rocminfo pads every line to one width: lines of a program, not one line broken
    verdict = judge("$ rocminfo\n" + ROCMINFO)
    assert verdict.status == HEALTHY
    assert verdict.evidence == (
        "rocminfo: ROCm enumerated the NPU as an HSA agent (aie2, NPU Phoenix)"
    )
    # a GPU agent, or the name alone: no NPU enumerated
    gpu = ROCMINFO.replace("aie2", "gfx1103").replace("NPU Phoenix", "AMD Radeon 780M")
    assert judge(gpu).status != HEALTHY


def test_the_drivers_name_for_the_npu_printed_by_a_program_no_reader_knows_is_healthy() -> None:
    # amdxdna's .default_vbnv, read from its sysfs once it has probed the device
    script = "5. Checking NPU device attributes...\nDevice: accel0\n  VBNV: RyzenAI-npu5\n"
    verdict = judge(script)
    assert verdict.status == HEALTHY
    assert verdict.evidence == "the driver named the NPU (RyzenAI-npu5)"
    # a name that only looks like it, or a known program's own report cut before its
    # verdict: validate says what it says of its run
    assert judge("Device: RyzenAI-npuX\n").status != HEALTHY
    assert judge("Device: RyzenAI-npu11\n").status != HEALTHY  # no release gave that name
    cut = (
        "Validate Device           : [0000:c5:00.1]\n    Platform              : RyzenAI-npu4\n"
        "-----\nTest 1 [0000:c5:00.1]     : gemm\n[   <->  ]: Running Test... < 0s >\n"
    )
    assert judge(cut).evidence != "the driver named the NPU (RyzenAI-npu4)"


def test_every_runners_failed_tests_are_a_failed_run_in_doctor() -> None:
    ran = "$ python -m unittest test_npu\n....\nRan 4 tests in 2.1s\n\n"
    assert judge(ran + "OK\n").status == HEALTHY
    failed = judge(ran + "FAILED (failures=1)\n")
    assert (failed.status, [d.code for d in failed.diagnoses]) == (FAILURE, ["test-run-failed"])
    cargo = "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n"
    assert [d.code for d in judge(cargo).diagnoses] == ["test-run-failed"]


NPU_REPORTS = json.loads(DATA.read_text())["npu_reports"]


def test_the_npu_reports_are_generated_with_their_headings() -> None:
    # smi_ryzen.cpp's list, each report's heading from its writeReport, in every release
    assert {r["report"] for r in NPU_REPORTS} >= {"aie-partitions", "telemetry", "clocks"}
    assert all(r["titles"] and r["releases"] for r in NPU_REPORTS)


@pytest.mark.parametrize(
    ("report", "title"), [(r["report"], t) for r in NPU_REPORTS for t in r["titles"]]
)
def test_an_npu_report_with_the_devices_answer_is_evidence(report: str, title: str) -> None:
    shown = f"$ xrt-smi examine -r {report}\n\n{title}\n  Total NPU Memory Usage: 12 MB\n"
    verdict = judge(shown)
    assert (verdict.status, verdict.evidence) == (
        HEALTHY,
        f"xrt-smi's {report} report: the NPU's driver answered "
        f"({title}: Total NPU Memory Usage: 12 MB)",
    )


def test_an_npu_reports_empty_answer_or_a_heading_outside_xrt_smi_is_not() -> None:
    for report in NPU_REPORTS:
        for empty in report["empty"]:
            shown = f"$ xrt-smi examine -r {report['report']}\n{report['titles'][0]}\n  {empty}\n"
            assert judge(shown).status != HEALTHY
    assert judge("Telemetry\n  L1 Interrupt Count : 3\n").status != HEALTHY  # no xrt-smi


def test_the_firmwares_event_trace_under_its_generated_header_is_evidence() -> None:
    headers = json.loads(DATA.read_text())["event_trace_headers"]
    assert headers, "EventTraceBase.cpp's header row, from the releases that have it"
    labels = headers[0]["labels"]
    header = "".join(f"{label:<31}" for label in labels).rstrip()
    row = "12297615613378452910 partition_teardown  EVENT_TRACE_CATEGORY_HWS  app_mode=0"
    verdict = judge(f"{header}\n{row}\n")
    assert (verdict.status, verdict.evidence) == (
        HEALTHY,
        "xrt-smi's event trace: the NPU firmware's events (partition_teardown, ...)",
    )
    assert judge(f"{header}\n\n").status != HEALTHY  # a header with no event under it


def test_the_npus_uevent_with_its_driver_is_a_bound_driver() -> None:
    # /sys/bus/pci/drivers/amdxdna/<slot>/uevent: DRIVER= only once a driver is bound
    uevent = (
        "$ cat /sys/bus/pci/drivers/amdxdna/0000:c0:00.1/uevent\n"
        "DRIVER=amdxdna\nPCI_CLASS=118000\nPCI_ID=1022:17F0\nPCI_SUBSYS_ID=1022:17F0\n"
        "PCI_SLOT_NAME=0000:c0:00.1\nMODALIAS=pci:v00001022d000017F0sv00001022sd000017F0bc11sc80i00\n"
    )
    verdict = judge(uevent)
    assert verdict.status == "healthy"
    assert verdict.evidence == "sysfs: amdxdna bound to 0000:c0:00.1"
    # another device amdxdna does not drive, or the NPU's uevent with no driver, is not one
    assert judge(uevent.replace("1022:17F0\nPCI_SUBSYS", "1022:15E3\nPCI_SUBSYS")).status != (
        "healthy"
    )
    assert judge(uevent.replace("DRIVER=amdxdna\n", "")).status != "healthy"


def test_a_suggested_flm_command_is_no_run_of_fastflowlm() -> None:
    # another tool's install, ending with its own word and the command it suggests
    installed = (
        "[INFO] Registered tag 'dynaguard:4b' in /home/u/.config/flm/model_list.json\n"
        "Done: DynaGuard-4B-NPU2 installed to /home/u/.config/flm/models/DynaGuard-4B-NPU2\n"
        "Run:  flm run dynaguard:4b   (or: flm serve dynaguard:4b)\n"
    )
    assert judge(installed).status == HEALTHY
    # FastFlowLM typed at a prompt is its run: its own lines say how it went, and a word
    # of another program's beside them does not
    typed = "u@host:~$ flm run llama3.2:1b\nLoading model...\nDone.\n"
    assert judge(typed).status != HEALTHY
    assert judge("PS C:\\Users\\u> flm validate\nDone.\n").status != HEALTHY
