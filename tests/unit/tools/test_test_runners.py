"""Test runners' summaries, in the shapes their format strings print."""

from __future__ import annotations

from xdnaforge.tools.test_runners import Summary, summaries


def test_ctest_summary_counts_passed_and_failed() -> None:
    text = (
        "      Start  1: xrt_ut\n1/12 Test  #1: xrt_ut ....   Passed    0.01 sec\n\n"
        "100% tests passed, 0 tests failed out of 12\n"
    )
    assert summaries(text) == [Summary("ctest", 12, 0)]
    bad = summaries("83% tests passed, 2 tests failed out of 12\n")
    assert bad == [Summary("ctest", 10, 2)]
    assert not bad[0].all_passed


def test_gtest_summary_needs_the_ran_line_and_counts_failures() -> None:
    ok = "[==========] 7 tests from 2 test suites ran. (12 ms total)\n[  PASSED  ] 7 tests.\n"
    assert summaries(ok) == [Summary("gtest", 7, 0)]
    bad = ok.replace(
        "[  PASSED  ] 7 tests.", "[  PASSED  ] 5 tests.\n[  FAILED  ] 2 tests, listed below:"
    )
    assert summaries(bad) == [Summary("gtest", 5, 2)]
    assert summaries("[  PASSED  ] 7 tests.\n") == []  # a stray line is not a run


def test_pytest_final_line_with_its_counts() -> None:
    assert summaries("======== 12 passed, 1 skipped in 3.21s ========\n") == [
        Summary("pytest", 12, 0)
    ]
    assert summaries("==== 1 failed, 9 passed, 2 errors in 1.20s ====\n") == [
        Summary("pytest", 9, 3)
    ]
    assert summaries("12 passed\n") == []


def test_pythons_unittest_summary_with_its_counts() -> None:
    ok = "....s\n" + "-" * 70 + "\nRan 5 tests in 0.012s\n\nOK (skipped=1)\n"
    assert summaries(ok) == [Summary("unittest", 4, 0)]
    bad = "Ran 5 tests in 1.500s\n\nFAILED (failures=1, errors=2)\n"
    assert summaries(bad) == [Summary("unittest", 2, 3)]
    assert summaries("Ran 5 tests in 0.1s\n") == []  # cut before its verdict
    assert summaries("OK\n") == []


def test_rusts_libtest_summary_one_per_test_binary() -> None:
    text = (
        "test dump::reads_fw_version ... ok\n\n"
        "test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out;"
        " finished in 0.02s\n\n"
        "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n"
    )
    assert summaries(text) == [Summary("cargo test", 3, 0), Summary("cargo test", 1, 1)]
    coloured = "test result: \x1b[32mok\x1b[0m. 2 passed; 0 failed; 0 ignored; 0 measured\n"
    assert summaries(coloured) == [Summary("cargo test", 2, 0)]


def test_catch2s_totals() -> None:
    assert summaries("All tests passed (14 assertions in 3 test cases)\n") == [
        Summary("Catch2", 3, 0)
    ]
    bad = "test cases: 3 | 2 passed | 1 failed\nassertions: 9 | 8 passed | 1 failed\n"
    assert summaries(bad) == [Summary("Catch2", 2, 1)]
    assert summaries("test cases: 1 | 1 failed\n") == [Summary("Catch2", 0, 1)]


def test_a_run_of_nothing_is_not_all_passed() -> None:
    assert not Summary("ctest", 0, 0).all_passed


# mlir-aie's xrt_test_wrapper.h (setup_and_run_aie) and the matmul examples print the NPU
# times, then "PASS!" or the error count and "Failed."
AIE_PASSED = (
    "\nAvg NPU matmul time: 3223us.\nAvg NPU gflops: 83.2875\n\n"
    "Min NPU matmul time: 3223us.\n\nPASS!\n\n"
)
AIE_FAILED = "\nAvg NPU time: 61.5us.\n\nMin NPU time: 60us.\n\nError count: 4\n\n\nFailed.\n\n"


def test_mlir_aie_tests_are_read_by_their_verdict_after_the_npu_times() -> None:
    assert summaries(AIE_PASSED) == [Summary("mlir-aie test", 1, 0)]
    assert summaries(AIE_FAILED) == [Summary("mlir-aie test", 0, 1)]
    # pasted with markdown around it, the verdict is the same
    assert summaries(AIE_PASSED.replace("PASS!", "**PASS!**`")) == [Summary("mlir-aie test", 1, 0)]
    # a PASS! with no NPU time before it is no mlir-aie run
    assert summaries("PASS!\n") == []


def test_xdna_drivers_shim_test_summary() -> None:
    # shim_test.cpp: the counts, then ALL ... PASSED! or the failed ids (FAILED in colour)
    ok = "0\ttest(s) skipped: \n21\ttest(s) executed\nALL 21 executed test(s) PASSED!\n"
    assert summaries(ok) == [Summary("shim_test", 21, 0)]
    bad = (
        "1\ttest(s) skipped: 7 \n21\ttest(s) executed\n"
        "2\ttest(s) \x1b[5m\x1b[31mFAILED\x1b[0m: 3 9 \n"
    )
    assert summaries(bad) == [Summary("shim_test", 19, 2)]
    pasted = bad.replace("\x1b", "")  # what a paste keeps of the colour codes
    assert summaries(pasted) == [Summary("shim_test", 19, 2)]


# what lit printed for a suite of one passing, one failing and one unsupported test
LIT_23 = (
    "********************\nFailed Tests (1):\n  AIR_TEST :: b.lit\n\n\nTesting Time: 0.03s\n\n"
    "Total Discovered Tests: 3\n  Unsupported: 1 (33.33%)\n  Passed     : 1 (33.33%)\n"
    "  Failed     : 1 (33.33%)\n"
)
LIT_17 = "Testing Time: 0.03s\n  Unsupported: 1\n  Passed     : 1\n  Failed     : 1\n"


def test_lit_summaries_of_both_layouts() -> None:
    assert summaries(LIT_23) == [Summary("lit", 1, 1)]
    assert summaries(LIT_17) == [Summary("lit", 1, 1)]
    passing = LIT_17.replace("  Failed     : 1\n", "")
    assert summaries(passing) == [Summary("lit", 1, 0)]
    assert summaries("Testing Time: 0.03s\n") == []  # no counts, no summary


def test_lits_failed_list_alone_counts_its_failures() -> None:
    cut = "Failed Tests (40):\n  AIE :: npu-xrt/add_one_objFifo/run.lit\n  AIE :: npu-xrt/x.py\n"
    assert summaries(cut) == [Summary("lit", 0, 40)]
    # with the summary after it, the summary counts (once)
    assert summaries(LIT_23) == [Summary("lit", 1, 1)]


def test_lits_result_lines_count_when_its_summary_is_not_there() -> None:
    # print_result (lit/display.py): "<CODE>: <suite> :: <test> (<i> of <n>)"
    ran = (
        "UNSUPPORTED: AIR :: passthrough/run_npu2_makefile_peano.lit (1 of 3)\n"
        "XFAIL: AIR :: passthrough/run_npu1_chess.lit (2 of 3)\n"
        "PASS: AIR :: passthrough/run_npu1_makefile_peano.lit (3 of 3)\n"
    )
    assert summaries(ran) == [Summary("lit", 1, 0)]
    # cut off before its last test: what ran is no verdict, unless something failed
    assert summaries(ran.rsplit("PASS", 1)[0]) == []
    failed = ran.replace("(3 of 3)", "(3 of 4)") + "FAIL: AIR :: x/run.lit (4 of 4)\n"
    assert summaries(failed) == [Summary("lit", 1, 1)]
    timed_out = ran.replace("(3 of 3)", "(3 of 9)") + "TIMEOUT: AIR :: y/run.lit (4 of 9)\n"
    assert summaries(timed_out) == [Summary("lit", 1, 1)]
    # with the summary, the summary counts (once)
    assert summaries(ran + LIT_23) == [Summary("lit", 1, 1)]
    assert summaries("PASS: a test without lit's form\n") == []


def test_lit_failures_that_are_all_compiler_tests_say_nothing_ran_on_the_npu() -> None:
    # llvm-aie's own suite after an upstream merge: LLVM IR and MIR through the AIE backend
    codegen = (
        "Failed Tests (3):\n  LLVM :: CodeGen/AIE/aie2/set.ll\n"
        "  LLVM :: CodeGen/AIE/aie2p/combine-loads-stores.mir\n  AIE :: lower/bad.mir\n"
    )
    assert summaries(codegen) == [Summary("lit", 0, 3, compiler=True)]
    assert summaries(codegen)[0].describe().startswith("lit: 3 compiler test(s) failed")
    timed = codegen + "\nTesting Time: 41.20s\n  Passed     : 3118\n  Failed     : 3\n"
    assert summaries(timed) == [Summary("lit", 3118, 3, compiler=True)]
    # one test that runs on the NPU among them: a test run, as before
    mixed = codegen.replace("(3)", "(4)") + "  AIE :: npu-xrt/add_one_objFifo/run.lit\n"
    assert summaries(mixed) == [Summary("lit", 0, 4)]
    assert summaries(mixed)[0].describe() == "lit: 0 test(s) passed, 4 failed"
    # the list ends at its first line that is not an entry: what follows is not read
    after = codegen + "\nsomething else\n  AIE :: npu-xrt/x/run.lit\n"
    assert summaries(after) == [Summary("lit", 0, 3, compiler=True)]
    # result lines name the failed tests when the list is not there
    results = "PASS: LLVM :: CodeGen/AIE/a.ll (1 of 2)\nFAIL: LLVM :: CodeGen/AIE/b.ll (2 of 2)\n"
    assert summaries(results) == [Summary("lit", 1, 1, compiler=True)]
    npu = results.replace("LLVM :: CodeGen/AIE/b.ll", "AIE :: npu-xrt/b/run.lit")
    assert summaries(npu) == [Summary("lit", 1, 1)]


def test_the_matmul_examples_wrong_elements_are_a_failed_test() -> None:
    # print_error_summary: "[row, col] actual =!= expected", before the error count
    wrong = "Verifying against reference matmul ...\n[    0,     0] 0.00 =!= 264.00\n"
    assert summaries(wrong) == [Summary("mlir-aie test", 0, 1)]
    # with the program's own verdict after its times, that verdict counts (once)
    timed = "Avg NPU matmul time: 1021.0us.\n" + wrong + "\nError count: 4096\n\nFailed.\n"
    assert summaries(timed) == [Summary("mlir-aie test", 0, 1)]
    assert summaries("[0, 0] x =!= y\n") == []  # not numbers: not the verify's line


def test_iree_amd_aies_comparison_of_the_npus_output_is_a_failed_test() -> None:
    # output_comparer.py before and after September 2024
    for head in (
        "Values are not all close. Here is a summary of the differences:",
        "Values are not all close, here is a summary of the differences:",
    ):
        text = f"{head}\nNumber of positions where values are different is 4088 out of 8192\n"
        assert summaries(text) == [Summary("iree-amd-aie cpu_comparison", 0, 1)]
    assert summaries("All values are close to the CPU's.\n") == []


def test_triton_xdnas_examples_are_counted_line_by_line() -> None:
    # scripts/run_tests.py prints each example's run and its verdict
    ran = (
        "📁 Example: axpy\n   🔄 Running: axpy.py\n   ✅ PASS: axpy.py\n\n"
        "📁 Example: gelu\n   🔄 Running: gelu.py\n   ❌ FAIL: gelu.py (exit code 1)\n"
    )
    assert summaries(ran) == [Summary("Triton-XDNA examples", 1, 1)]
    assert summaries(ran.split("\n\n")[0]) == [Summary("Triton-XDNA examples", 1, 0)]
    assert summaries("   ✅ PASS: axpy.py\n") == []  # not the runner's output


# Google Benchmark's console reporter: dashes, the header, dashes, a row per run
BENCHMARK = (
    "-" * 60
    + "\nBenchmark              Time             CPU   Iterations UserCounters...\n"
    + "-" * 60
    + "\nBM_matmul/real_time  1.61 ms  0.671 ms  456 items_per_second=620.987/s\n"
    "BM_add/8/real_time   12.3 us   10.0 us  2048\n"
)


def test_google_benchmark_rows_are_runs_and_its_errors_failures() -> None:
    assert summaries(BENCHMARK) == [Summary("Google Benchmark", 2, 0)]
    failed = BENCHMARK + "BM_conv/real_time    ERROR OCCURRED: 'hw context failed'\n"
    assert summaries(failed) == [Summary("Google Benchmark", 2, 1)]
    skipped = BENCHMARK.split("BM_")[0] + "BM_conv    SKIPPED: 'no NPU'\n"
    assert summaries(skipped) == []  # nothing ran, nothing failed: no summary
    # a row alone, without the reporter's header, is no benchmark's output
    assert summaries("BM_add/8/real_time   12.3 us   10.0 us  2048\n") == []


def test_shim_tests_own_lines_are_counted_when_its_summary_is_not_there() -> None:
    # run_test (xdna-driver test/shim_test/shim_test.cpp): a line as each test starts and ends
    ran = (
        "====== 75: CERT log: attach/detach started =====\n"
        "====== 75: CERT log: attach/detach passed  =====\n"
        "====== 76: CERT log: max num_ucs started =====\n"
        "====== 76: CERT log: max num_ucs skipped =====\n"
    )
    assert summaries(ran) == [Summary("shim_test", 1, 0)]
    failed = ran + "====== 77: npu3 vadd \x1b[5m\x1b[31mFAILED\x1b[0m =====\n"
    assert summaries(failed) == [Summary("shim_test", 1, 1)]
    assert summaries(failed.replace("\x1b", "")) == [Summary("shim_test", 1, 1)]
    assert summaries(ran.splitlines()[0] + "\n") == []  # started, never ended
