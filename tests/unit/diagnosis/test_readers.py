"""The readers on whole runs: shapes of working tools are healthy on their own, and an
anomaly after a passing check is never healthy."""

from __future__ import annotations

from xdnaforge.diagnosis.log_verdict import FAILURE, HEALTHY, judge

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
