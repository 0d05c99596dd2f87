"""What any program says of its own run: a verdict line, a measured rate, the firmware's
version read from the device; and the verdict that stands on them only where nothing else
speaks."""

from __future__ import annotations

import pytest

from xdnaforge.diagnosis.log_verdict import FAILURE, HEALTHY, UNKNOWN, UNKNOWN_FAILURE, judge
from xdnaforge.diagnosis.run_outcomes import (
    checklist,
    failed_verdict,
    finished,
    firmware_answered,
    ggml_timed,
    hardware_context,
    measured_rate,
    predicted,
    run_completed,
    tabled_rate,
    tabled_verdicts,
    verdict,
)


@pytest.mark.parametrize(
    "line",
    [
        "Test Passed",
        "TEST PASSED!",
        "PASS!",
        "GATE PASS",
        "All tests passed.",
        "Validation passed",
        "   ✅ PASS: average_pool.py",
        "**PASSED**",
        "mha_by_steps/only_attn_steps: PASS!",
        "PASS -- tolerance 2e-03 on 1-cos, no Python in this process",  # then its measure
        "PASSED \u2014 3 of 3 gates",
        "INFO: Test passed",  # after a logger's level tag
        "[INFO] All tests passed.",
        "PASS (whole array (8 columns))",  # the verdict, then what passed
        "PASS!  custom fused kernel  out = relu(a + b)  on the XDNA2 NPU",
        # a tally of every test passed
        "TOTAL 13/13 PASS",
        "13/13 tests passed",
        "Passed: 4/4",
        # a comparison's count of values equal to its reference's, every one
        "exact-equal elements: 24576/24576 (100.0000%)",
        "  ok  all 1310720 int32 accumulators BIT-EXACT vs CPU reference",
        # the verdict last, in capitals, in a column of its own
        "unbatched: median 676.2 us/call, min 656.8 us/call  VERIFIED",
        "  base-j0-i0                       PASS",
        "SUCCESS: Phoenix NPU executed fused M-path polyphase channelizer on physical silicon!",
        "SUCCESS!",
        "MATCH",  # a comparison's verdict, alone, in capitals
        "Are the arrays equal?: True",  # a comparison answered with Python's bool
        "Success: True",
        "CASE1 PASS: known canonical final token reached exact 1,588-byte record",
        "correctness: OK (4096 int32 elements)",  # its answer in capitals, what it judged
        # right after the figure it judged, and what it was judged by
        "  [bge_base] fused gelu(A@B+bias): rel_fro=2.102e-04 worst_abs=1.306e-04 PASS  (K=768)",
        "  VERIFIED.",
        # a JSON report's own verdict field, alone on its line
        '  "status": "PASS",',
        '"result":"passed"',
        # its result after a tick, or a tick and its test finished
        "RESULT: \u2713 the ONNX MLP runs on the NPU and matches the CPU reference",
        "\u2705 Encoder block test complete!",
    ],
)
def test_a_verdict_alone_on_its_line_is_the_programs_pass(line: str) -> None:
    assert verdict(f"running...\n{line}\n") is not None


@pytest.mark.parametrize(
    "line",
    [
        "3 passed, 1 failed",  # a count is a runner's summary, read by test_runners
        "Password:",
        "Test Passed with warnings: see below",  # not alone
        "bypass",
        "Checks passed to the next stage were dropped",
        "the first stage, which the second one: passed",  # a sentence, not a test's name
        "PASS--through mode",  # no separator: a word
        "Passthrough -- 4096 int32",
        "pass (see the docs) to the loader",  # the verdict is written in capitals
        "Pass! me the salt",
        "INFO: passing the buffer to the NPU",
        "TOTAL 12/13 PASS",  # a tally with one that did not pass
        "0/0 tests passed",  # nothing ran
        "exact-equal elements: 24575/24576 (99.9959%)",  # one value differs
        "bit-exact on all 64 rows",  # not in capitals, not the count first
        "Passed: 4/4 of the stages, then the run stopped",  # not alone on its line
        "  base-j0-i0                       pass",  # a column's verdict is in capitals
        "the result was VERIFIED",  # a sentence, not a column
        "[  OK  ] Started Load Kernel Modules.",  # OK is every tool's, no verdict
        "Success: the download finished, starting the build",  # not in capitals
        "SUCCESS_RATE=0.5",  # a name, not the word
        "MISMATCH",
        "match",  # not in capitals
        "MATCH at index 4: 0.5 vs 0.7",  # not alone
        '  "status": "ok",',  # a server's health, not a test's verdict
        '{"status": "success", "data": []}',  # an API's answer, and not alone
        '  "m1_status": "PASS",',  # one part's, not the report's
        "status: OK",  # a state, not a comparison's answer
        "x=1 PASS then the next step",  # not last on its line
        "correctness: ok",  # not in capitals
        "LLM calls: 4 (all NPU, zero fallback) Success: True",  # not alone on its line
        "\u2705 NPU device: /dev/accel/accel0",  # a step, not a result
        "\u2705 Build complete",  # a build finishing is not a run passing
        "RESULT: \u2713 3 of 4 match, \u274c softmax",  # a cross on the line
    ],
)
def test_other_lines_with_pass_in_them_are_no_verdict(line: str) -> None:
    assert verdict(line + "\n") is None


@pytest.mark.parametrize(
    "line",
    [
        "Failed.",  # mlir-aie's test programs
        "TEST FAILED!",
        "[ERROR] Test failed",
        "Status: \u274c FAIL",  # after the name of what failed
        "mha: FAILED",
        "\u274c FAIL: Optimized kernel achieves nan% correlation (target: >95%)",
        "  \u274c Softmax sum check FAILED (got 0.000000, expected 1.0)",
        "acvp-tcId-16                     FAIL",  # in a column of its own
        "rel_frobenius = 7.074e-01  FAIL (tol 5e-3 for plain bf16)",  # then what judged it
        "Are the arrays are equal?: False",  # a comparison answered with Python's bool
        "Success: False",
        "CASE2 FAIL: the record differs from the reference",
        "  cols= 8 pretiled[k,n|st] relfro=7.07e-01 FAIL (no trace)",
        "  Status: \u274c POOR - Needs debugging",  # a grade in capitals after the cross
        "\u274c LOW - kernel needs fixes compiled in",
        "TOTAL 0/25 FAIL",
        # print()'s arguments, what was compared first, then anything it printed after
        "t0 match False actual_sha 5540 expected_sha 12fe first_mismatch 31",
    ],
)
def test_a_programs_own_failing_verdict_is_read_in_the_forms_of_its_pass(line: str) -> None:
    assert failed_verdict(line)


@pytest.mark.parametrize(
    "line",
    [
        "FAILED: CMakeFiles/xrt.dir/a.o",  # ninja's failed build step
        "FAILED tests/test_a.py::test_x - AssertionError",  # pytest's, read by test_runners
        "3 passed, 1 failed",
        "Failed to open device",  # a message, not a verdict
        "ninja: build stopped: subcommand failed.",
        "The test failed because the buffer was not synced",
        "Build FAILED.",
        "  base-j0-i0                       fail",  # a column's verdict is in capitals
        "\u2705 HIGH / \u274c LOW",  # a legend: both marks
        "\u274c Lower is better",  # a word, not a grade
        "if the names match False is returned",  # prose: more than one word before it
    ],
)
def test_other_lines_with_fail_in_them_are_no_verdict(line: str) -> None:
    assert not failed_verdict(line)


def test_a_failing_verdict_after_a_run_on_the_npu_is_a_wrong_result() -> None:
    run = (
        "[XRT] loaded npu.xclbin\nNPU Out:  [0. 0. 0.]\n\u274c Softmax sum check FAILED (got 0.0)\n"
    )
    verdict_of = judge(run)
    assert verdict_of.status == FAILURE
    assert [d.code for d in verdict_of.diagnoses] == ["npu-run-check-failed"]
    assert verdict_of.diagnoses[0].family == "command"
    assert "after its run on the NPU:" in verdict_of.diagnoses[0].evidence
    # the same verdict where the log names no NPU is still the program's own word that its
    # result is wrong, as its pass is evidence without the NPU's name (the line says less)
    alone = judge("  rel_frobenius = 7.074e-01  FAIL (tol 5e-3 for plain bf16)\n")
    assert alone.status == FAILURE
    assert [d.code for d in alone.diagnoses] == ["npu-run-check-failed"]
    assert "after its run: rel_frobenius" in alone.diagnoses[0].evidence


def test_a_measured_rate_is_read_in_its_three_orders() -> None:
    assert measured_rate("Tokens per second: 4.40\n") is not None
    assert measured_rate("BM_x 1.6 ms 0.6 ms 456 items_per_second=620.987/s\n") is not None
    assert measured_rate("decode: 12.5 tokens/s\n") is not None
    assert measured_rate("GEMM: 51.0 TOPS\n") is not None
    assert measured_rate("32000 runs finished in 1781207 us, 17965.3 run/sec\n") is not None
    assert measured_rate("window 900 frames in 30.0 s = 30.00 fps\n") is not None
    assert measured_rate("3 iters total 14729 us (203.68 dispatch/s)\n") is not None
    assert measured_rate("Avg TPS                       : 31.16\n") is not None
    # onnxruntime-genai's model_benchmark: the unit in parentheses, then the figure
    assert measured_rate("Token generation:\n\tavg (tokens/s): 14.9513\n") is not None
    assert measured_rate("\tavg (tokens/s): 0\n") is None
    assert measured_rate('    "avg_tokens_per_second": 25.21,\n') is not None  # JSON's key
    # the rate's unit as the figure's label (RyzenAI-SW's transformers examples)
    assert measured_rate("Time/token:162ms        Tokens/sec:6.2\n") is not None
    assert measured_rate("Tokens/sec: 0\n") is None
    assert measured_rate('    "avg_tokens_per_second": 0.0,\n') is None
    assert measured_rate("  Avg TPS : 0.0\n") is None
    assert measured_rate("Output tokens: 0\nTPS:           10.33\n") is None  # no work done
    assert measured_rate("capture at 0 fps\n") is None
    assert measured_rate("Tokens per second: 0.00\n") is None  # nothing was done
    # measured where the log says the work ran elsewhere: not the NPU's
    assert measured_rate("running on CPU\nTokens per second: 20.1\n") is None
    assert measured_rate("llama-bench -m x.gguf\n| pp512 | 512.3 tok/s |\n") is None


def test_a_rate_in_a_tables_column_is_read_in_markdown_and_csv() -> None:
    markdown = (
        "| Model | TTFT s | decode tok/s |\n|-------|-------:|------:|\n"
        "| gemma3:1b | 1.31 | 36.13 |\n| llama3.1:8b | 3.08 | 10.98 |\n"
    )
    assert measured_rate(markdown) == "the program measured its work (decode tok/s: 36.13; 2 rows)"
    csv = "context_k,ttft_avg_s,decoding_avg_toks_per_s\n1,0.69,57.89\n2,1.06,54.74\n"
    assert measured_rate(csv) == (
        "the program measured its work (decoding_avg_toks_per_s: 57.89; 2 rows)"
    )
    assert measured_rate("| net | Throughput (fps) |\n|---|---|\n| resnet50 | 1,204.5 |\n")
    # a header alone, a row without its figure, a zero or a failed run: no measure of work
    assert measured_rate("| Model | decode tok/s |\n|---|---|\n") is None
    assert measured_rate("| Model | decode tok/s |\n|---|---|\n| a | 10.2 |\n| b | - |\n") is None
    assert measured_rate("| Model | decode tok/s |\n|---|---|\n| a | 0.0 |\n") is None
    failed = "| Model | decode tok/s | note |\n|---|---|---|\n| a | 9.1 | failed once |\n"
    assert measured_rate(failed) is None
    # columns that time a run ("TTFT s", "latency ms") are not a rate of work
    timed = "| Model | TTFT s | latency ms |\n|---|---|---|\n| a | 1.3 | 40 |\n"
    assert measured_rate(timed) is None
    # prose with commas is no table, and a table of another device's rates is not the NPU's
    assert measured_rate("we read it, the decode tok/s, twice\nthen, some more, words\n") is None
    assert measured_rate("| backend | tok/s |\n|---|---|\n| on CPU | 9.3 |\n") is None


def test_an_xrt_runs_completed_state_is_evidence_but_a_comparison_with_it_is_not() -> None:
    assert run_completed("Execution state: ert_cmd_state.ERT_CMD_STATE_COMPLETED\n")
    assert run_completed("run 3: state = ERT_CMD_STATE_COMPLETED (4)\n")
    assert run_completed("expected state: ERT_CMD_STATE_COMPLETED\n") is None
    assert run_completed("if (state != ERT_CMD_STATE_COMPLETED)\n") is None
    assert run_completed("state: ERT_CMD_STATE_TIMEOUT\n") is None
    ran = "Loading npu.xclbin\nExecution state: ert_cmd_state.ERT_CMD_STATE_COMPLETED\n"
    assert judge(ran).status == HEALTHY
    assert judge(ran + "Traceback (most recent call last):\nRuntimeError: bad\n").failing


def test_a_time_the_npus_work_took_is_evidence_where_the_line_names_the_npu() -> None:
    assert measured_rate("CPU Execution Time: 0.1345\nNPU Execution Time: 0.0766\n")
    assert measured_rate("IPU Total Time: 0.0005332000000066728\n")
    assert measured_rate("Avg NPU time: 61.5us.\n")
    assert measured_rate("Average inference time with EP VitisAIExecutionProvider: 206.06 ms\n")
    assert measured_rate("NPU latency (ms): 4.2\n")
    assert measured_rate("Prefill time: 0.69 seconds\n") is None  # no NPU named: a wait?
    assert measured_rate("NPU Execution Time: 0.0\n") is None
    assert measured_rate("NPU time limit exceeded after 10 s, giving up\n") is None


def test_a_comparison_printed_with_its_bool_is_a_verdict_both_ways() -> None:
    assert verdict("  allclose True rtol=0.05 atol=0.1\n")
    assert verdict("array_equal True\n")
    assert failed_verdict("allclose False rtol=0.05 atol=0.1")
    assert verdict("allclose True if the tolerance were 1e-1\n") is None  # prose after it


def test_other_units_of_work_and_a_count_of_completed_runs() -> None:
    assert measured_rate("  embedded   2 texts in 0.09 s  ->  23.4 seq/s\n")
    assert measured_rate("train: 12.1 iters/s\n")
    assert measured_rate("download 12.3 MB/s\n") is None  # bytes moved, not work done
    assert verdict("Iterations completed:  100/100\nErrors:                0\n")
    assert verdict("100/100 iterations completed successfully\n")
    assert verdict("Iterations completed:  97/100\n") is None


def test_a_summary_of_named_counts_is_a_verdict_both_ways() -> None:
    assert verdict("Total Tests Run: 34 | Passed: 34 | Failed: 0\n")
    assert verdict("PASS: 12  FAIL: 0\n")
    assert verdict("passed=5, failed=0, skipped=1, total=6\n")
    assert verdict("Total: 35 | Passed: 34 | Failed: 0\n") is None  # one not accounted for
    assert verdict("We passed: 3 and failed: 0 in prose\n") is None
    assert verdict("Passed: 0 Failed: 0\n") is None  # nothing ran
    assert failed_verdict("Total Tests Run: 34 | Passed: 33 | Failed: 1")
    assert not failed_verdict("Total Tests Run: 34 | Passed: 34 | Failed: 0")


def test_all_tests_passed_with_words_naming_them_but_never_an_exception() -> None:
    assert verdict("ALL REQUIRED HARDWARE-BACKED AND REFERENCE REGRESSION TESTS PASSED\n")
    assert verdict("All 12 unit tests passed.\n")
    assert verdict("All but two tests passed\n") is None
    assert verdict("Not all tests passed\n") is None


def test_mlperf_loadgens_verdict_and_a_rate_per_second_spelled_out() -> None:
    summary = "MLPerf Results Summary\nScenario : SingleStream\nResult is : VALID\n"
    assert verdict(summary)
    assert failed_verdict("Result is : INVALID")
    assert verdict(summary.replace("VALID", "INVALID")) is None
    assert measured_rate("Throughput: 169.07 samples/second\n")
    assert measured_rate("315.0 tiles/seconds\n")
    # the detail log's records (":::MLLOG " and a JSON object): the verdict, and an error
    record = (
        ':::MLLOG {{"key": "{key}", "value": {value}, "time_ms": 128781.9, "namespace": '
        '"mlperf::logging", "event_type": "POINT_IN_TIME", "metadata": {{"is_error": {err}, '
        '"is_warning": false, "file": "results.cc", "line_no": 675, "pid": 1, "tid": 2}}}}\n'
    )
    valid = record.format(key="result_validity", value='"VALID"', err="false")
    assert judge(valid).status == HEALTHY
    assert judge(valid.replace('"VALID"', '"INVALID"')).status == FAILURE
    ended = record.format(key="error_runtime", value='"Test ended early"', err="true")
    assert failed_verdict(ended.strip())
    assert judge(ended + valid).status == FAILURE


def test_a_pass_in_capitals_after_test_and_aiecc_pys_finished_progress_bar() -> None:
    assert verdict("TEST PASS: AIE output matches golden quantized output\n")
    assert verdict("TEST PASS -- 64/64 within tolerance\n")
    assert verdict("Test pass: see below for the mismatches\n") is None  # not in capitals
    done = " AIE Compilation: \u2501\u2501\u2501\u2501 100% 0:00:00 0:00:03 \n"
    assert judge(done).evidence == "the build finished (aiecc.py: AIE Compilation 100%)"
    assert judge(done.replace("100%", " 75%")).status == UNKNOWN


def test_all_pass_alone_on_its_line_is_a_verdict() -> None:
    assert verdict("PASS q4_0 512x256 x 64  nrmse 3.82e-07\nALL PASS\n")
    assert verdict("All passed.\n")
    assert verdict("Not all passed\n") is None


def test_the_firmwares_version_is_evidence_only_in_a_log_of_the_npu() -> None:
    assert firmware_answered('accel: "/dev/accel/accel0",\nFW Version: 1.5.2.380\n')
    assert firmware_answered("$ cat /sys/class/accel/accel0/device/fw_version\n1.1.2.65\n")
    assert firmware_answered("GPU FW Version: 1.5.2\n") is None  # no NPU named
    assert firmware_answered("npu: FW Version: N/A\n") is None


def test_the_verdict_stands_on_them_only_without_an_error_anywhere() -> None:
    gate = "first-token argmax=9079 'Paris' (expect 'Paris')\nGATE PASS\n"
    assert judge(gate).status == HEALTHY
    broken = gate + "Traceback (most recent call last):\nValueError: Unsupported device: npu\n"
    assert judge(broken).status in (FAILURE, UNKNOWN_FAILURE)
    # a Rust program's panic after the firmware answered is no healthy query
    panicked = (
        'accel: "/dev/accel/accel0",\nFW Version: 1.5.2.380\n'
        "thread 'main' (6489) panicked at src/dump_xdna_device.rs:20:35:\n"
    )
    assert judge(panicked).status in (FAILURE, UNKNOWN_FAILURE)
    assert judge("Prefill time: 0.69 seconds\n").status == UNKNOWN  # no figure of work done


def test_a_rate_beside_fastflowlms_lines_alone_is_the_npus_work() -> None:
    # FastFlowLM's test programs (src/test): its loader's lines, then their own figures
    bench = (
        "[FLM]  Loading model: /m/Hy-MT2-1.8B-NPU2\n"
        "[ 1/40]  time prefill 34.6 ms | decode 17.2 ms | e2e 51.8 ms | 1 tok | 58.30 tok/s\n"
    )
    verdict = judge(bench)
    assert (verdict.status, verdict.evidence) == (
        HEALTHY,
        "the program measured its work (58.30 tok/s)",
    )
    # beside a report of another known program, the figure is still no evidence
    assert judge("[Vitis AI EP] No. of Operators :   CPU   400\n" + bench).status != HEALTHY


def test_a_known_programs_report_is_not_overruled_by_a_figure_beside_it() -> None:
    # Vitis AI's own summary says the model ran on the CPU: its "Test Passed" is no evidence
    cpu_only = (
        "[Vitis AI EP] No. of Operators :   CPU   400\n"
        "[Vitis AI EP] No. of Subgraphs :   CPU     1 Actually running on NPU     0\n"
        "Test Passed\n"
    )
    assert judge(cpu_only).status != HEALTHY


def test_a_checklist_counts_only_when_every_item_is_ticked_and_the_run_ended() -> None:
    ticked = "AIE Configuration (✔ = AIE NPU / ✘ = CPU):\n" + "".join(
        f"[Transformer] Step {n} ✔\n" for n in range(4)
    )
    assert checklist(ticked) is not None  # the legend names both marks: no item
    assert checklist(ticked + "[FFN] GEMV ✘\n") is None  # one fell back to the CPU
    assert checklist(ticked + "   ⚠️  Version mismatch detected!\n") is None  # a warning
    assert checklist("   ✓ a\n   ✓ b\n") is None  # two are too few to be a checklist
    running = "   ✓ a\n   ✓ b\n   ✓ c\nStep 3/6: Detecting NPU hardware...\n"
    assert checklist(running) is None  # cut off at the step in progress
    assert checklist(running.replace("...", " done")) is not None


@pytest.mark.parametrize(
    ("log", "says"),
    [
        (
            "[ 50%] Building CXX object CMakeFiles/x.dir/x.cpp.o\n[100%] Built target x\n",
            "make built target x",
        ),
        (
            "  CC [M]  drivers/accel/amdxdna/aie2_pci.o\n"
            "  LD [M]  drivers/accel/amdxdna/amdxdna.ko\n",
            "kbuild linked drivers/accel/amdxdna/amdxdna.ko",
        ),
        ("Build succeeded.\n    0 Warning(s)\n    0 Error(s)\n", "MSBuild: Build succeeded"),
        (
            "CPack: Create package\nCPack: - package: /b/xrt_2.21.0-amd64-base.deb generated.\n",
            "CPack wrote /b/xrt_2.21.0-amd64-base.deb",
        ),
        ("Successfully installed pyxrt-2.20\n", "pip: Successfully installed pyxrt-2.20"),
        (
            "[1/3] Building C\n[2/3] Building D\n[3/3] Linking CXX shared library x.so\n",
            "ninja ran all 3 steps",
        ),
        (
            "-- Configuring done (0.1s)\n-- Build files have been written to: /b\n",
            "CMake configured /b",
        ),
        (
            "Building the xclbin...\nSuccessfully Building Application... App.xclbin & App.seq "
            "delivered\n",
            "Riallto built App.xclbin",
        ),
        # mlir-aie's C++ aiecc after its whole flow, Chess's warnings on the way
        (
            'Warning in "": (imprecise line-number, the error occurred somewhere in this '
            "function): loop with essential overflow in loop count computation\n"
            "Compilation completed successfully\n",
            "aiecc: Compilation completed successfully",
        ),
        (
            "Leaving xclbinutil.\nSuccessfully wrote (150480 bytes) to the output file: d.xclbin\n",
            "xclbinutil wrote d.xclbin",
        ),
        # the AIE compiler's last lines, the Vitis message count with no error
        (
            "INFO: [aiecompiler 77-23810] Completing SchedulerControlPackets pass\n\n"
            "Compilation Complete\n(WARNING:47, CRITICAL-WARNING:0, ERROR:0)\n",
            "aiecompiler: Compilation Complete, no error",
        ),
        # nixpkgs-review's report as it posts it (html_pkgs_section) and as it prints it
        (
            "### `x86_64-linux`\n<details>\n  <summary>:white_check_mark: 3 packages built:"
            "</summary>\n  <ul>\n    <li>xrt</li>\n",
            "nixpkgs-review: 3 packages built",
        ),
        (
            "--------- Report for 'x86_64-linux' ---------\n1 package built:\nxrt\n",
            ("nixpkgs-review: 1 package built"),
        ),
        # clang's (Peano's) count as the compile's last line: warnings, no error
        (
            "k.cc:47:7: warning: unknown attribute 'behave_as_fundamental_type' ignored "
            "[-Wunknown-attributes]\n   47 | class accum :\n13 warnings generated.\n",
            "clang compiled with 13 warnings only",
        ),
    ],
)
def test_a_build_tools_own_word_that_it_finished_is_evidence(log: str, says: str) -> None:
    verdict = judge(log)
    assert (verdict.status, verdict.evidence) == (HEALTHY, f"the build finished ({says})")


def test_a_build_that_did_not_finish_is_no_evidence() -> None:
    # nixpkgs-review: one package failed beside those built
    failed = (
        "<summary>:x: 1 package failed to build:</summary>\n"
        "<summary>:white_check_mark: 2 packages built:</summary>\n"
    )
    assert judge(failed).status in (FAILURE, UNKNOWN_FAILURE)
    # ninja stopped before its last step; make reached 100 % of another target only
    assert judge("[1/3] Building C\n[2/3] Building D\n").status == UNKNOWN
    # a program's own step counter in ninja's form is not ninja's ("[5/5] Validating ...")
    steps = "[4/5] Executing on Phoenix XDNA1 NPU...\n[5/5] Validating accuracy ...\n"
    assert judge(steps).status == UNKNOWN
    assert judge("[10/10] 09_memtile_locks        cached (0.0s)\n").status == UNKNOWN
    assert judge("[ 66%] Built target x\n").status == UNKNOWN
    # the last target was built, then the next command failed
    failed = "[100%] Built target x\nx.cpp:1:1: error: 'y' was not declared in this scope\n"
    assert judge(failed).status == FAILURE
    assert judge("  LD [M]  drivers/accel/amdxdna/amdxdna.o\n").status == UNKNOWN  # no module
    counted = "Compilation Complete\n(WARNING:0, CRITICAL-WARNING:0, ERROR:1)\n"
    assert judge(counted).status != HEALTHY  # the compiler counted an error
    # clang's count with an error, or a count followed by more of the build, is not one
    assert judge("1 warning and 2 errors generated.\n").status != HEALTHY
    assert judge("2 warnings generated.\n[ 50%] Linking CXX executable x\n").status == UNKNOWN


@pytest.mark.parametrize(
    "last",
    [
        "Done",
        "Done.",
        "Done: DynaGuard-4B-NPU2 installed to /home/u/.config/flm/models/DynaGuard-4B-NPU2",
        "Done in 0.689 sec: xclbinutil --add-replace-section MEM_TOPOLOGY:JSON:m.json",
        "[INFO] Conversion complete! Output saved to DynaGuard-8B-NPU2",
        "Testing edgeDetect done!",
        "Benchmark complete!",
        "Test Finished",
        "Model export completed successfully.",
        "2026-01-13 22:21:44 [INFO] ryzenai_onnx_utils\\partitioner.py(744): Saved final model",
        "Saved \u2192 C:\\Users\\u\\results\\conf_sweep_yolov8m_npu.jpg",
    ],
)
def test_a_programs_word_that_its_work_finished_ends_its_log(last: str) -> None:
    log = f"loading model.onnx\nstep 1 of 2\n{last}\n"
    assert finished(log) == f"the program reported its work finished ({last})"
    assert judge(log).status == HEALTHY
    # at the end only: a step's "done" followed by more of the run says nothing of its end
    assert finished(f"{last}\nstep 2\nstep 3\nstep 4\n") is None


@pytest.mark.parametrize(
    "last",
    [
        "Kernel did not complete. Returned status: 6",
        "-- Configuring incomplete, errors occurred!",
        "Done with errors.",
        "  (completed on attempt 2 of 8)",
        "Transfer partially complete.",
        "Saved partial results to out.json",
        "[ERROR] could not save: Done",
    ],
)
def test_a_negated_or_qualified_finish_is_no_evidence(last: str) -> None:
    assert finished(f"step 1\n{last}\n") is None


def test_the_programs_word_that_its_hardware_context_was_created_is_evidence() -> None:
    # a service's log of its XRT steps (pyxrt): the context is the first step the firmware
    # takes part in
    log = (
        "INFO:xdna2.server:  Found xclbin: /k/matmul.xclbin\n"
        "INFO:xdna2.server:  XRT device opened\n"
        "INFO:xdna2.server:  Hardware context created\n"
    )
    verdict = judge(log)
    assert verdict.status == HEALTHY
    assert verdict.evidence is not None
    assert "INFO:xdna2.server:  Hardware context created" in verdict.evidence
    assert hardware_context("hw_context created successfully on the NPU\n") is not None
    assert hardware_context("[pyxrt] hw_ctx 0x5 created successfully.\nxclbin\n") is not None


@pytest.mark.parametrize(
    "log",
    [
        "Step 4: Creating hardware context...\nXRT device opened\n",  # still running
        "the hardware context is created when the xclbin is registered (npu)\n",  # a sentence
        "XRT: hardware context not created\n",
        "Hardware context created\n",  # no sign of the NPU in the log
        "INFO: XRT device opened\nINFO: xclbin registered successfully\n",  # host work only
        # a separator and punctuation before the NPU's name: read once, not in every split
        "-" * 400 + " npu\n" + "!@#$%^&*" * 200 + " xclbin\n",
    ],
)
def test_other_words_about_a_hardware_context_are_no_evidence(log: str) -> None:
    assert hardware_context(log) is None


def test_a_created_context_then_a_failure_is_a_failure() -> None:
    log = "xclbin loaded\nHardware context created\nERROR: run failed (ERT_CMD_STATE_ERROR)\n"
    assert judge(log).status in (FAILURE, UNKNOWN_FAILURE)


# a test program's table of checks, a verdict column (the shape of a committed conv2d
# width-isolation log of mlir-aie kernels on a Phoenix NPU)
CHECKS = """conv2dk3_ui8_vector width isolation test (64 -> 64, uint8 act, no skip)
      HxW    result  max |diff|
----------------------------------------
32x     32      PASS  0.000
32x     36      PASS  0.000
32x     40      PASS  0.000
"""


def test_a_table_of_checks_passes_when_every_row_passes() -> None:
    assert tabled_verdicts(CHECKS) == ("passed", "HxW    result  max |diff|: 3 rows PASS")
    assert verdict(CHECKS) is not None
    assert judge(CHECKS).status == HEALTHY
    # one row failed: the program's own word that a result is wrong
    failed = CHECKS.replace("36      PASS  0.000", "36      FAIL  3.000")
    assert tabled_verdicts(failed) == ("failed", "32x     36      FAIL  3.000")
    verdict_of = judge(failed)
    assert [d.code for d in verdict_of.diagnoses] == ["npu-run-check-failed"]
    # one row is a line, not a table; a header with no verdict column is no table of checks
    assert tabled_verdicts(CHECKS.split("32x     36")[0]) is None
    assert tabled_verdicts(CHECKS.replace("result", "value ")) is None


@pytest.mark.parametrize(
    "log",
    [
        # RyzenAI-SW's getting-started ResNet (predict.py --ep npu), its tutorials' Top 5
        "> python predict.py --ep npu\nexecution started on NPU\n"
        "Image 0: Actual Label cat, Predicted Label cat\n",
        " Predicted AIE: truck, Predicted CPU: truck\n",  # mlir-aie's notebooks on the IPU
        "IPU overlay 4x4.xclbin loaded\nFinal top prediction is: Golden Retriever\n",
        "[Info] aie-cpu\nPrediction Result:   Hi, welcome to experience AMD IPU.\n",
        # RyzenAI-SW's transformers examples (run_awq.py --target aie --task decode)
        "python run_awq.py --task decode --target aie --w_bit 4\n"
        "prompt: What is the meaning of life?\n"
        "Setting `pad_token_id` to `eos_token_id`:2 for open-end generation.\n"
        "response: What is the meaning of life? This is a question that has puzzled\n",
        # the xclbin it set, the AI Engine's binary (RyzenAI-SW's getting-started, 1.5)
        "Setting xclbin file for STX\nC:\\RyzenAI\\xclbins\\strix\\AMD_AIE2P_4x4_Overlay.xclbin\n"
        "Final top prediction is: Golden Retriever\n",
    ],
)
def test_a_models_answer_on_the_npu_is_evidence(log: str) -> None:
    assert predicted(log) is not None
    assert judge(log).status == HEALTHY


def test_a_models_accuracy_over_a_dataset_on_the_npu_is_evidence() -> None:
    ran = "=== NPU | 1000 images | models/r50.onnx ===\ntop-1: 60.50%    top-5: 79.80%\n"
    assert predicted(ran) == "the model ran to its answer (top-1: 60.50%)"
    assert predicted("VitisAIExecutionProvider\nmAP@0.5: 0.372\n")
    assert predicted(ran.replace("NPU", "CPU")) is None  # the NPU must be named
    assert predicted("NPU\nthe top-1 label is cat\n") is None  # no figure


def test_quarks_summary_of_the_quantized_model_written_is_a_finished_build() -> None:
    summary = (
        "[QUARK-INFO]: The operation types and their corresponding quantities of the input "
        "float model is shown in the table below.\n"
        "|----------------------+-------------------------------|\n"
        "| Quantized model path | models/densenet121_xint8.onnx |\n"
        "+------------------------------------------------------+\n"
    )
    verdict = judge(summary)
    assert verdict.status == HEALTHY
    assert verdict.evidence == (
        "the build finished (Quark wrote the quantized model models/densenet121_xint8.onnx)"
    )
    boxed = summary.replace("|", "\u2502")
    assert judge(boxed).status == HEALTHY


def test_a_prediction_that_names_no_npu_is_no_evidence() -> None:
    assert predicted("Image 0: Actual Label cat, Predicted Label cat\n") is None  # the CPU's?
    assert predicted("execution started on NPU\nThe predicted value is unknown\n") is None
    assert predicted("You: What is the capital of France?\nAssistant: Paris.\n") is None  # where?
    assert predicted("--target aie\nprompt: hi\n\n\n\nresponse: far below\n") is None
    assert predicted("xclbinutil --help\nFinal top prediction is: cat\n") is None  # a tool


def test_ggml_programs_timings_of_a_pass_that_ran_are_the_models_work() -> None:
    # whisper.cpp's whisper_print_timings (src/whisper.cpp), its VitisAI encoder on the NPU
    run = (
        "whisper_init_state: Vitis AI model loaded\n"
        "whisper_print_timings:     load time =  7677.57 ms\n"
        "whisper_print_timings:   encode time = 14118.27 ms /     2 runs (  7059.14 ms per run)\n"
    )
    assert ggml_timed(run) == "whisper_print_timings: the model's encode pass ran 2 times"
    assert judge(run).status == HEALTHY
    assert ggml_timed(run.replace("2 runs", "0 runs")) is None  # nothing ran
    assert ggml_timed(run.replace("Vitis AI", "CUDA")) is None  # the NPU not named
    llama = (
        "ggml_xdna: NPU ready\n"
        "llama_perf_context_print:        eval time =   512.10 ms /    31 runs\n"
    )
    assert ggml_timed(llama) == "llama_perf_context_print: the model's eval pass ran 31 times"


def test_the_vitis_ai_eps_provider_list_is_no_other_device() -> None:
    # a Ryzen AI quantization project's run log: ONNX Runtime's providers, the EP first
    run = (
        "providers: ['VitisAIExecutionProvider', 'DmlExecutionProvider', "
        "'CPUExecutionProvider']\n=== NPU | 1000 images | batch 1 ===\nthroughput ~178.0 img/s\n"
    )
    assert measured_rate(run) is not None
    # the CPU named first, or a run said to be on it, is another device for the rate
    assert measured_rate(run.replace("'VitisAIExecutionProvider', ", "")) is None
    assert measured_rate(run + "fallback: running on CPU\n") is None


def test_a_column_of_the_npus_own_time_is_its_measured_work() -> None:
    table = (
        "M,N,Executetime(ns),run_aie_time(ns)\n"
        "1.0,11008.0,307500.0,213700.0\n"
        "128.0,11008.0,1053100.0,488700.0\n"
    )
    assert (
        tabled_rate(table) == "the program measured its work (run_aie_time(ns): 213700.0; 2 rows)"
    )
    assert tabled_rate(table.replace("213700.0", "0")) is None  # a time of nothing
    assert tabled_rate(table.replace("run_aie_time", "run_cpu_time")) is None


def test_a_programs_own_accuracy_warning_withdraws_its_pass() -> None:
    run = "[npu] encoder on /dev/accel/accel0\n\u2705 Encoder block test complete!\n"
    assert judge(run).status == "healthy"
    warned = (
        run + "Min correlation: 0.085\n\u26a0\ufe0f  Accuracy warning: Correlation below 0.99\n"
    )
    assert judge(warned).status == "unknown"
