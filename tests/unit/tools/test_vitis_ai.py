"""The Vitis AI execution provider's summary, as Ryzen AI's documentation shows it."""

from __future__ import annotations

from xdnaforge.diagnosis.log_verdict import HEALTHY, judge
from xdnaforge.tools.vitis_ai import on_npu, report_on_npu

# the installation guide's expected quicktest output (1.2 on), and 1.1's with IPU
NOW = (
    "[Vitis AI EP] No. of Operators :   NPU   398 VITIS_EP_CPU     2\n"
    "[Vitis AI EP] No. of Subgraphs :   NPU     1 Actually running on NPU     1\n"
    "Test Passed\n"
)
BEFORE = "[Vitis AI EP] No. of Operators :   CPU     2    IPU   398  99.50%\n"


def test_the_providers_summary_says_where_the_model_runs() -> None:
    assert on_npu(NOW) == "Vitis AI EP: 1 subgraph(s) running on the NPU"
    assert on_npu(BEFORE) == "Vitis AI EP: 398 operator(s) placed on the NPU"
    on_cpu = "[Vitis AI EP] No. of Operators :   CPU   400\n"
    assert on_npu(on_cpu) is None
    assert (
        on_npu(NOW.replace("on NPU     1", "on NPU     0").replace("NPU   398", "NPU   0")) is None
    )


def test_the_summary_in_onnx_runtimes_verbose_log_says_the_same() -> None:
    # each count on its own line, after ORT's logger prefix (ostream_sink.cc)
    tag = "[I:onnxruntime:, stat.cpp:198 stat.cpp] "
    verbose = "".join(
        f"    {tag}{line}\n"
        for line in (
            "[Vitis AI EP] No. of Operators :",
            "   NPU   398",
            "VITIS_EP_CPU     2",
            "[Vitis AI EP] No. of Subgraphs :",
            "   NPU     1",
            "Actually running on NPU      1",
        )
    )
    assert on_npu(verbose) == "Vitis AI EP: 1 subgraph(s) running on the NPU"
    assert on_npu(verbose.replace("NPU      1", "NPU      0")) == (
        "Vitis AI EP: 398 operator(s) placed on the NPU"
    )
    on_cpu = verbose.replace("NPU      1", "NPU      0").replace("NPU   398", "CPU   398")
    assert on_npu(on_cpu) is None
    # a count far below its heading is not the heading's
    assert (
        on_npu("[Vitis AI EP] No. of Subgraphs :\n" + "x\n" * 5 + "Actually running on NPU 1\n")
        is None
    )


def test_the_summary_of_later_releases_names_the_subgraphs_it_placed() -> None:
    # "No. of Subgraphs supported by Vitis AI EP:" and no "Actually running" line
    later = "[Vitis AI EP] No. of Subgraphs supported by Vitis AI EP: VAIML     1\n"
    assert on_npu(later) == "Vitis AI EP: 1 subgraph(s) placed on the NPU"
    assert on_npu(later.replace("VAIML     1", "CPU     1")) is None


def test_a_quicktest_on_the_npu_is_healthy() -> None:
    verdict = judge("python quicktest.py\n" + NOW)
    assert verdict.status == HEALTHY
    assert verdict.evidence == "Vitis AI EP: 1 subgraph(s) running on the NPU"


def test_the_providers_onnx_runtime_lists_say_whether_vitis_ai_is_there() -> None:
    from xdnaforge.tools.vitis_ai import provider_listed

    listed = (
        ">>> ort.get_available_providers()\n['VitisAIExecutionProvider', 'CPUExecutionProvider']\n"
    )
    assert provider_listed(listed) is not None
    assert provider_listed(listed.replace("VitisAI", "DirectML")) is None
    assert provider_listed("Specified provider 'VitisAIExecutionProvider' is not in ...") is None
    # a session's get_providers() after a label: the session runs on the Vitis AI EP
    session = "session providers: ['VitisAIExecutionProvider', 'CPUExecutionProvider']\n"
    assert provider_listed(session) is not None
    assert provider_listed("session providers: ['CPUExecutionProvider']\n") is None
    # a label with its own words in parentheses, and the list joined by commas
    active = "Active execution providers (priority order): ['VitisAIExecutionProvider']\n"
    assert provider_listed(active) is not None
    joined = "providers : VitisAIExecutionProvider, CPUExecutionProvider\n"
    assert provider_listed(joined) is not None
    # ... only with the Vitis AI EP first: a CPU session that names it later does not run on it
    assert provider_listed("providers: CPUExecutionProvider, VitisAIExecutionProvider\n") is None
    assert provider_listed("no providers: VitisAIExecutionProvider failed to load\n") is None
    # the list as JSON writes it, one element a line or inline, the Vitis AI EP first
    recorded = (
        '{\n  "actual_providers": [\n    "VitisAIExecutionProvider",\n'
        '    "CPUExecutionProvider"\n  ],\n'
    )
    assert provider_listed(recorded) is not None
    assert provider_listed('"providers": ["VitisAIExecutionProvider"]\n') is not None
    assert (
        provider_listed(
            '"actual_providers": ["CPUExecutionProvider", "VitisAIExecutionProvider"]\n'
        )
        is None
    )


def test_the_providers_own_count_of_the_nodes_it_runs() -> None:
    from xdnaforge.tools.vitis_ai import nodes_running

    line = "I20230803 19:29:02.108831 13180 custom_op.cpp:126]  Vitis AI EP running 348 Nodes\n"
    assert nodes_running(line) == "Vitis AI EP: 348 node(s) running"
    assert nodes_running(line.replace("348", "0")) is None
    assert judge(line).status == HEALTHY


NPU_CHECK = """System compatibility check for VitisAI EP 1.2...
OK!
NPU Device ID     : 0x1502
NPU Device Name   : NPU Compute Accelerator Device
NPU Driver Version: 32.0.203.257
PHX/HPT NPU detected. Make sure to load corresponding XCLBIN.

System compatibility check for VitisAI EP 1.6...
OK!
NPU Device ID     : 0x1502
NPU Device Name   : NPU Compute Accelerator Device
NPU Driver Version: 32.0.203.257
PHX/HPT NPU detected. Make sure to load corresponding XCLBIN.
"""


def test_ryzen_ais_npu_check_says_which_releases_suit_the_npu() -> None:
    from xdnaforge.diagnosis.log_verdict import FAILURE, HEALTHY, judge
    from xdnaforge.tools.vitis_ai import npu_checks

    assert npu_checks(NPU_CHECK) == [("1.2", "OK!"), ("1.6", "OK!")]
    verdict = judge(NPU_CHECK)
    assert (verdict.status, verdict.evidence) == (
        HEALTHY,
        "Ryzen AI's npu_check: the NPU and its driver suit VitisAI EP 1.6",
    )
    # the newest release refused: the driver is too old for what an install uses
    old = NPU_CHECK.rsplit("OK!", 1)[0] + "Installed drivers are too old. Do not use VitisAI EP.\n"
    verdict = judge(old)
    assert verdict.status == FAILURE
    assert [d.code for d in verdict.diagnoses] == ["ryzenai-npu-check-refused"]


# the operator assignment report as ryzen-ai-documentation's modelrun.rst shows it
REPORT = """{
 "deviceStat": [
 {
  "name": "all",
  "nodeNum": 400,
  "supportedOpType": [
   "::Add",
   "::Conv"
  ]
 },
 {
  "name": "CPU",
  "nodeNum": 2,
  "supportedOpType": [
   "::DequantizeLinear"
  ]
 },
 {
  "name": "NPU",
  "nodeNum": 398,
  "supportedOpType": [
   "::Conv"
  ]
 }
 ]
}
"""


def test_the_operator_assignment_report_says_what_runs_on_the_npu() -> None:
    assert report_on_npu(REPORT) == "Vitis AI EP report: 398 node(s) placed on the NPU"
    assert judge(REPORT).status == HEALTHY
    # nothing placed on the NPU: the model runs on the CPU
    assert report_on_npu(REPORT.replace('"nodeNum": 398', '"nodeNum": 0')) is None
    assert report_on_npu('{"name": "NPU", "nodeNum": 3}') is None  # no report
