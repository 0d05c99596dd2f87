"""FastFlowLM serving, Lemonade's backend table and telemetry, and degenerate output."""
# ruff: noqa: E501 (the backend table is as wide as lemonade prints it)

from __future__ import annotations

from xdnaforge.diagnosis.log_verdict import HEALTHY, judge
from xdnaforge.tools.llm_servers import (
    Backend,
    degenerate,
    flm_pulled,
    flm_serving,
    lemonade_bench,
    lemonade_flm_backend,
    lemonade_inferences,
    lemonade_npu_available,
    lemonade_prompted,
)

BACKENDS = """Recipe              Backend     Status          Message/Version                               Action
----------------------------------------------------------------------------------------------------
flm                 npu         installed       v0.9.43                                        -
kokoro              cpu         installed       b17                                            -
                    metal       unsupported     Requires macOS                                 -
"""


def test_flm_serving_needs_a_request_through_the_npu() -> None:
    started = "[LOG]  WebServer started on port 52625 with 4 I/O threads\n"
    assert flm_serving(started) is None  # a server that never served proves nothing
    served = started + "[🟡 ]  Dequeuing NPU request (0 remaining)...\n"
    assert flm_serving(served) == "FastFlowLM serving on port 52625 (NPU requests handled)"
    # a request that held the NPU and was answered in words (server.cpp, modeling_*.cpp)
    answered = started + (
        "[🟢 ]  NPU Locked!\n[FLM]  Start generating...\n\n[FLM]  Model RAW Output: \n"
        "The sun is a brilliant, life-giving star.\n[🔵 ]  NPU Lock Released!\n"
    )
    assert flm_serving(answered) == (
        "FastFlowLM serving on port 52625 (a request answered on the NPU)"
    )
    # no words in the answer, the NPU never released, or no server: no evidence
    assert (
        flm_serving(
            answered.replace("The sun is a brilliant, life-giving star.", "\ufffd\ufffd 9B")
        )
        is None
    )
    assert flm_serving(answered.replace("[🔵 ]  NPU Lock Released!\n", "")) is None
    assert flm_serving(answered.replace(started, "")) is None


# `flm pull` as model_downloader.cpp prints it (header_print: "[FLM]  ")
PULLED = """[FLM]  Model: llama3.2:1b
[FLM]  Name: Llama-3.2-1B-NPU2
[FLM]  Missing files (2):
  - model.q4nx
  - tokenizer.json
[FLM]  Downloading 2 missing files...
[FLM]  Files to download:
  - model.q4nx
  - tokenizer.json
[FLM]  Model downloaded successfully!
[FLM]  All files verified successfully.
"""


def test_flm_pull_is_evidence_once_its_files_are_verified() -> None:
    assert flm_pulled(PULLED) == (
        "FastFlowLM downloaded a model and verified its files (Model downloaded successfully!)"
    )
    assert judge(PULLED).status == HEALTHY
    # its own check found files missing, or the log ends before the check: no evidence
    short = PULLED.replace(
        "[FLM]  All files verified successfully.\n",
        "[WARNING]  Some files may be missing after download:\n  - model.q4nx\n",
    )
    assert flm_pulled(short) is None
    assert flm_pulled(PULLED.replace("[FLM]  All files verified successfully.\n", "")) is None
    # the run that followed the pull failed: the failure is what the log says
    failed = PULLED + "[ERROR]  Failed to load model: No such file '/opt/flm/xclbins/a.xclbin'\n"
    assert judge(failed).status != HEALTHY


def test_lemonade_backend_table_row_of_fastflowlm() -> None:
    assert lemonade_flm_backend(BACKENDS) == Backend("installed", "v0.9.43")
    assert lemonade_flm_backend(BACKENDS.replace("flm  ", "xyz  ")) is None
    assert lemonade_flm_backend("flm   npu   installed   v0.9.43\n") is None  # no table


def test_lemonade_model_manager_says_whether_it_found_the_npu() -> None:
    report = (
        "2026-04-16 23:27:18.189 [Info] (ModelManager) Backend availability:\n"
        "2026-04-16 23:27:18.189 [Info] (ModelManager)   - NPU hardware: Yes\n"
        "2026-04-16 23:27:18.189 [Info] (ModelManager)   - System RAM: 62.1 GB\n"
    )
    assert lemonade_npu_available(report) is not None
    assert judge(report).status == HEALTHY
    assert lemonade_npu_available(report.replace("Yes", "No")) is None
    assert lemonade_npu_available("  - NPU hardware: Yes\n") is None  # not Lemonade's report


def test_lemonade_telemetry_inferences() -> None:
    line = (
        "[Telemetry] Inference completed: model=qwen3-4b-FLM, tokens=120 (in=20, out=100), "
        "ttft=0.31s, tps=18.20\n"
    )
    assert lemonade_inferences(line) == [("qwen3-4b-FLM", 100)]


def test_degenerate_output_is_one_token_repeated() -> None:
    assert degenerate("The capital of France is Paris. It is a city of light.\n") is None
    stuck = "Answer: " + "the " * 14
    assert degenerate("ok\n" + stuck + "\n") == stuck.strip()
    assert degenerate("a b " * 20) is None  # alternation is not one token repeated
    assert degenerate("- " * 20 + "\n| " * 20) is None  # a ruler, a table's border
    glued = 'Qwen2.5-3B:    "TheGGGGGGGGGGGGGGGGGGG..."'
    assert degenerate("ok\n" + glued + "\n") == glued  # one letter, no space between
    assert degenerate("RAX: ffffffffffffffda ARADDR 0xffffffffffffffffffffffff\n") is None
    assert degenerate("Zzz " + "Z" * 15 + "\n") is None  # shorter than GLUED_RUN
    assert degenerate("Serial Number: " + "X" * 20 + "\n") is None  # a redaction
    assert degenerate("  " + "M" * 20 + "\n") is None  # no word before it: a banner's art


def test_lemonade_cli_status_block_on_the_npu() -> None:
    # common/status.py: "\t<Pretty Key>:<spaces><value>" for each stat of cache.Keys
    block = (
        "\tStatus:\t\tSuccessful build!\n"
        "\tDevice:                             npu\n"
        "\tToken Generation Tokens Per Second: 56.284\n"
    )
    assert lemonade_bench(block) == ("npu", 56.284)
    assert lemonade_bench(block.replace("npu", "hybrid")) == ("hybrid", 56.284)
    assert lemonade_bench(block.replace("npu", "cpu")) is None  # not the NPU
    assert lemonade_bench(block.replace("56.284", "0.0")) is None


def test_lemonade_cli_status_block_of_a_prompted_model() -> None:
    block = (
        'Building "amd_Llama-3.2-1B-Instruct-onnx-hybrid"\n'
        "    \u2713 Loading OnnxRuntime-GenAI model\n    \u2713 Prompting LLM\n\n"
        "                Status:         Successful build!\n"
        "                                Dtype:  int4\n"
        "                                Device: hybrid\n"
        "                                Response:       hello, I am a robot\n"
    )
    assert lemonade_prompted(block) == "hybrid"
    assert judge(block).status == HEALTHY
    assert lemonade_prompted(block.replace("Successful build!", "Failed build")) is None
    assert lemonade_prompted(block.replace("hybrid", "cpu")) is None
    assert lemonade_prompted(block.replace("hello, I am a robot", "")) is None  # no answer
