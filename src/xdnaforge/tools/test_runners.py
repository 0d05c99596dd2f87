"""The summary lines test runners print, read from their format strings: ctest, GoogleTest,
pytest, unittest, libtest, Catch2, lit and the NPU projects' own runners below. Pure
parsers; nothing is run here.

- ctest (Source/CTest/cmCTestTestHandler.cxx): "<P>% tests passed, <F> tests failed out of <N>";
- GoogleTest (googletest/src/gtest.cc, PrettyUnitTestResultPrinter): "[==========] <N> tests
  from <S> test suites ran.", "[  PASSED  ] <N> tests.", "[  FAILED  ] <N> tests, listed below:";
- pytest (_pytest/terminal.py, the final summary line): "== <n> passed, <m> skipped in 1.2s ==",
  with "failed" and "error(s)" counts when there are some;
- Python's unittest (Lib/unittest/runner.py, TextTestRunner.run): "Ran <n> test(s) in
  <t>s", a blank line, then "OK" or "FAILED (failures=<f>, errors=<e>)", with "skipped=<s>"
  and the expected failures among the counts in parentheses;
- Rust's libtest (library/test/src/formatters/pretty.rs, write_run_finish), one per test
  binary cargo runs: "test result: ok. <p> passed; <f> failed; <i> ignored; <m> measured;
  <o> filtered out; finished in <t>s" ("FAILED." for a binary with a failure);
- Catch2's console reporter (printTotals): "All tests passed (<a> assertion(s) in <c> test
  case(s))", or "test cases: <n> | <p> passed | <f> failed" when some failed;
- LLVM lit (lit/display.py, print_summary; run as lit 12, 17 and 23 print it), which
  mlir-aie and mlir-air run their hardware tests with: "Testing Time: <t>s", then one line
  per result ("  Passed     : 14", lit 23 adding " (50.00%)" after "Total Discovered
  Tests: <n>"): Failed, Unresolved, Timed Out and Unexpectedly Passed are failures; a
  paste cut after the "Failed Tests (<n>):" list (print_results, each "  SUITE :: test")
  counts those; without a summary, the result line it prints per test (print_result,
  "<CODE>: <suite> :: <test> (<i> of <n>)", every test with -v and --show-unsupported):
  FAIL, XPASS, UNRESOLVED and TIMEOUT are failures, and a run without one is evidence only
  once its last test is in the paste ("(<n> of <n>)"); where every failed test it names is
  a test of a compiler itself (LLVM IR or MIR, `.ll`/`.mir`, or a test of LLVM's, Clang's,
  MLIR's or lld's own suites: llvm-aie's "LLVM :: CodeGen/AIE/aie2/set.ll"), nothing ran
  on an NPU: the run is the toolchain's build, and the summary says so;
- Triton-XDNA's scripts/run_tests.py (amd/Triton-XDNA at HEAD): "🔄 Running: <file>.py"
  for each example, then "✅ PASS: <file>.py", "❌ FAIL: <file>.py (exit code <n>)" or
  "⏰ TIMEOUT: <file>.py" (counted line by line: a paste cut before its summary still says
  what ran);
- xdna-driver's shim_test (test/shim_test/shim_test.cpp, every 1.x branch and main):
  "<n>\ttest(s) executed", then "ALL <n> executed test(s) PASSED!" or "<f>\ttest(s) FAILED: <ids>"
  (FAILED between ANSI colour codes, which a paste may keep as "[5m[31m"); before it, each
  test's own lines (run_test): "====== <id>: <name> started =====", then "====== <id>:
  <name> passed  =====", "... skipped =====" or "... FAILED =====" (counted line by line
  when the summary is not in the paste);
- mlir-aie's test programs (runtime_lib/test_lib/xrt_test_wrapper.h, setup_and_run_aie, and
  the programming examples' test.cpp after it): the NPU times ("Avg NPU time: <t>us.", the
  matmul examples' "Avg NPU matmul time:"), then "PASS!" alone on its line, or "Error count:
  <n>" and "Failed."; the matmul examples' verify (programming_examples/basic/
  matrix_multiplication/common.h, print_error_summary) prints each element the NPU got
  wrong before that, "[<row>, <col>] <actual> =!= <expected>", which a paste cut before the
  count still shows: a failed test;
- Google Benchmark (src/console_reporter.cc, PrintHeader and PrintRunData), which
  iree-amd-aie's and other NPU benchmarks print: a header "Benchmark  Time  CPU  Iterations"
  between two lines of dashes, then a row per run, "<name> <t> <unit> <t> <unit> <iterations>"
  with its counters, or "<name> ERROR OCCURRED: '<message>'" (a failure) or "<name>
  SKIPPED: '<message>'";
- iree-amd-aie's comparison of the NPU's output with the CPU's (build_tools/ci/cpu_comparison,
  output_comparer.py, run.py): "Values are not all close. Here is a summary of the
  differences:" (", here is" from September 2024), then run.py raises "Test failed, exiting.":
  each is one failed test.

A summary is positive evidence only when it ran something and nothing failed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdnaforge.tools.ctest import SUMMARY_RE

_CTEST_RE = re.compile(r"^\s*" + SUMMARY_RE.pattern, re.M)  # at a line's start
_GTEST_RAN_RE = re.compile(r"^\[=+\] (\d+) tests? from \d+ test (?:suites?|cases?) ran", re.M)
_GTEST_PASSED_RE = re.compile(r"^\[  PASSED  \] (\d+) tests?\.", re.M)
_GTEST_FAILED_RE = re.compile(r"^\[  FAILED  \] (\d+) tests?, listed below", re.M)
_PYTEST_RE = re.compile(
    r"^=+ ((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|warnings?|deselected)"
    r"(?:, )?)+) in [\d.]+s(?: \([^)]*\))? =+\s*$",
    re.M,
)
_PYTEST_COUNT_RE = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")
_UNITTEST_RE = re.compile(
    r"^Ran (\d+) tests? in [\d.]+s[ \t]*\n(?:[ \t]*\n)*(OK|FAILED)(?: \(([^()\n]*)\))?[ \t]*$", re.M
)
_UNITTEST_COUNT_RE = re.compile(r"(failures|errors|skipped|expected failures)=(\d+)")
_LIBTEST_RE = re.compile(
    r"^test result: (?:\x1b?\[[\d;]*m)*(ok|FAILED)(?:\x1b?\[[\d;]*m)*\. "
    r"(\d+) passed; (\d+) failed;",
    re.M,
)
_CATCH2_PASSED_RE = re.compile(
    r"^All tests passed \((\d+) assertions? in (\d+) test cases?\)", re.M
)
_CATCH2_FAILED_RE = re.compile(r"^test cases: +(\d+) \|(?: +(\d+) passed \|)? +(\d+) failed", re.M)
_LIT_TIME_RE = re.compile(r"^Testing Time: [\d.]+s\s*$", re.M)
_LIT_COUNT_RE = re.compile(
    r"^\s*(Passed|Failed|Unsupported|Expectedly Failed|Unresolved|Timed Out|Unexpectedly Passed"
    r"|Excluded|Skipped)\s*: +(\d+)(?: \([\d.]+%\))?\s*$",
    re.M,
)
_LIT_FAILED_LIST_RE = re.compile(r"^Failed Tests \((\d+)\):[ \t]*\n[ \t]*\S[^\n]* :: ", re.M)
_LIT_BROKEN = ("Failed", "Unresolved", "Timed Out", "Unexpectedly Passed")
# the test's name is checked for lit's " :: " apart: one greedy run, read in linear time
_LIT_RESULT_RE = re.compile(
    r"^(PASS|FLAKYPASS|XFAIL|UNSUPPORTED|SKIPPED|EXCLUDED|FAIL|XPASS|UNRESOLVED|TIMEOUT): "
    r"(\S[^\n]*) \((\d+) of (\d+)\)[ \t]*$",
    re.M,
)
_LIT_RESULT_BROKEN = ("FAIL", "XPASS", "UNRESOLVED", "TIMEOUT")
_LIT_LISTED_RE = re.compile(r"^[ \t]*(\S[^\n]*?) :: (\S+)[ \t]*$", re.M)
_LIT_FAILED_RESULT_RE = re.compile(
    r"^(?:FAIL|XPASS|UNRESOLVED|TIMEOUT): (\S[^\n]*?) :: (\S+) \(\d+ of \d+\)[ \t]*$", re.M
)
_COMPILER_SUITES = {"LLVM", "Clang", "MLIR", "lld", "LLVM-Unit", "Clang-Unit", "MLIR-Unit"}
_COMPILER_TEST_SUFFIXES = (".ll", ".mir")
_IREE_NOT_CLOSE_RE = re.compile(
    r"^Values are not all close[.,] [Hh]ere is a summary of the differences:", re.M
)
_TRITON_RUNNING_RE = re.compile(r"^\s*(?:\S+ +)?Running: \S+\.py\s*$", re.M)
_TRITON_PASS_RE = re.compile(r"^\s*(?:\S+ +)?PASS: \S+\.py\s*$", re.M)
_TRITON_FAIL_RE = re.compile(
    r"^\s*(?:\S+ +)?(?:FAIL: \S+\.py \(exit code -?\d+\)|TIMEOUT: \S+\.py)\s*$", re.M
)
_SHIM_EXECUTED_RE = re.compile(r"^(\d+)\s+test\(s\) executed\s*$", re.M)
_SHIM_PASSED_RE = re.compile(r"^ALL (\d+) executed test\(s\) PASSED!", re.M)
_SHIM_FAILED_RE = re.compile(r"^(\d+)\s+test\(s\) (?:\x1b?\[[\d;]*m)*FAILED", re.M)
_SHIM_TEST_RE = re.compile(
    r"^====== \d+: .+ (passed|skipped|(?:\x1b?\[[\d;]*m)*FAILED(?:\x1b?\[[\d;]*m)*) +=====\s*$",
    re.M,
)
_AIE_TIME_RE = re.compile(r"^Avg NPU (?:\w+ )?time: [\d.]+ ?us\.?\s*$", re.M)
_AIE_PASS_RE = re.compile(r"^[`*]*PASS![`*]*\s*$", re.M)  # pasted: markdown around it
_AIE_FAILED_RE = re.compile(r"^Error count: (\d+)\s*\n(?:\s*\n)*Failed\.\s*$", re.M)
_AIE_MISMATCH_RE = re.compile(r"^\[ *\d+, +\d+\] +-?[\d.]+ =!= +-?[\d.]+\s*$", re.M)
_BENCHMARK_HEADER_RE = re.compile(r"^Benchmark +Time +CPU +Iterations\b.*\n-+\s*$", re.M)
_BENCHMARK_RUN_RE = re.compile(
    r"^\S+ +(?:[\d.]+(?:e[+-]?\d+)? (?:ns|us|ms|s|%) +){2}\d+\b", re.M
)  # a run's times and iterations (the other rows of PrintRunData print no iterations)
_BENCHMARK_ERROR_RE = re.compile(r"^\S+ +ERROR OCCURRED: '", re.M)


@dataclass(frozen=True, slots=True)
class Summary:
    runner: str  # ctest, gtest, pytest
    passed: int
    failed: int
    compiler: bool = False  # lit: every failed test it names is a compiler's own test

    @property
    def all_passed(self) -> bool:
        return self.passed > 0 and self.failed == 0

    def describe(self) -> str:
        if self.compiler:
            return (
                f"{self.runner}: {self.failed} compiler test(s) failed, {self.passed} passed"
                " (the toolchain's own tests: nothing ran on the NPU)"
            )
        return f"{self.runner}: {self.passed} test(s) passed, {self.failed} failed"


def _compiler_tests_only(text: str) -> bool:
    """lit's failed tests, as its list ("Failed Tests (<n>):", then "  <suite> :: <test>")
    or its result lines name them, are all tests of a compiler itself."""
    names: list[tuple[str, str]] = []
    listed = re.search(r"^Failed Tests \(\d+\):[ \t]*\n", text, re.M)
    if listed:
        for match in _LIT_LISTED_RE.finditer(text, listed.end()):
            if text.count("\n", listed.end(), match.start()) != len(names):
                break  # the list ends at the first line that is not one of its entries
            names.append((match.group(1), match.group(2)))
    names += [(m.group(1), m.group(2)) for m in _LIT_FAILED_RESULT_RE.finditer(text)]
    return bool(names) and all(
        suite in _COMPILER_SUITES or test.endswith(_COMPILER_TEST_SUFFIXES) for suite, test in names
    )


def summaries(text: str) -> list[Summary]:
    """Every runner summary in `text`, in the order the runners are listed above."""
    found = []
    for match in _CTEST_RE.finditer(text):
        failing, total = int(match.group(2)), int(match.group(3))
        found.append(Summary("ctest", total - failing, failing))
    ran = _GTEST_RAN_RE.search(text)
    if ran:
        ok = _GTEST_PASSED_RE.search(text)
        bad = _GTEST_FAILED_RE.search(text)
        found.append(
            Summary("gtest", int(ok.group(1)) if ok else 0, int(bad.group(1)) if bad else 0)
        )
    for match in _PYTEST_RE.finditer(text):
        counts = {
            kind.rstrip("s") if kind.startswith("error") else kind: int(n)
            for n, kind in _PYTEST_COUNT_RE.findall(match.group(1))
        }
        broken = counts.get("failed", 0) + counts.get("error", 0)
        found.append(Summary("pytest", counts.get("passed", 0), broken))
    for match in _UNITTEST_RE.finditer(text):
        counts = {kind: int(n) for kind, n in _UNITTEST_COUNT_RE.findall(match.group(3) or "")}
        broken = counts.get("failures", 0) + counts.get("errors", 0)
        if match.group(2) == "FAILED":
            broken = max(broken, 1)
        counted = int(match.group(1)) - counts.get("skipped", 0)
        found.append(Summary("unittest", max(counted - broken, 0), broken))
    for match in _LIBTEST_RE.finditer(text):
        failing = int(match.group(3))
        if match.group(1) == "FAILED":
            failing = max(failing, 1)
        found.append(Summary("cargo test", int(match.group(2)), failing))
    for match in _CATCH2_PASSED_RE.finditer(text):
        found.append(Summary("Catch2", int(match.group(2)), 0))
    for match in _CATCH2_FAILED_RE.finditer(text):
        found.append(Summary("Catch2", int(match.group(2) or 0), int(match.group(3))))
    timed_lit = _LIT_TIME_RE.search(text)
    if timed_lit:
        counts = {kind: int(n) for kind, n in _LIT_COUNT_RE.findall(text, timed_lit.end())}
        if counts:
            broken = sum(counts.get(kind, 0) for kind in _LIT_BROKEN)
            compiler = bool(broken) and _compiler_tests_only(text)
            found.append(Summary("lit", counts.get("Passed", 0), broken, compiler))
    listed = None if timed_lit else _LIT_FAILED_LIST_RE.search(text)
    if listed:
        found.append(Summary("lit", 0, int(listed.group(1)), _compiler_tests_only(text)))
    results = [] if timed_lit or listed else _LIT_RESULT_RE.findall(text)
    results = [(code, i, n) for code, name, i, n in results if " :: " in name]
    if results:
        broken = sum(code in _LIT_RESULT_BROKEN for code, _, _ in results)
        passes = sum(code in ("PASS", "FLAKYPASS") for code, _, _ in results)
        if broken or any(index == total for _, index, total in results):
            found.append(
                Summary("lit", passes, broken, bool(broken) and _compiler_tests_only(text))
            )
    compared = len(_IREE_NOT_CLOSE_RE.findall(text))
    if compared:
        found.append(Summary("iree-amd-aie cpu_comparison", 0, compared))
    if _TRITON_RUNNING_RE.search(text):
        passes, fails = len(_TRITON_PASS_RE.findall(text)), len(_TRITON_FAIL_RE.findall(text))
        if passes or fails:
            found.append(Summary("Triton-XDNA examples", passes, fails))
    executed = _SHIM_EXECUTED_RE.search(text)
    if executed:
        total = int(executed.group(1))
        bad = _SHIM_FAILED_RE.search(text, executed.end())
        if bad:
            found.append(Summary("shim_test", total - int(bad.group(1)), int(bad.group(1))))
        elif _SHIM_PASSED_RE.search(text, executed.end()):
            found.append(Summary("shim_test", total, 0))
    if not executed and "====== " in text:
        results = [r for r in _SHIM_TEST_RE.findall(text) if r != "skipped"]
        if results:
            passes = results.count("passed")
            found.append(Summary("shim_test", passes, len(results) - passes))
    timed = _AIE_TIME_RE.search(text)
    if timed:  # the NPU ran the design; its verdict follows the times
        after = text[timed.end() :]
        failed = _AIE_FAILED_RE.search(after)
        if failed:
            found.append(Summary("mlir-aie test", 0, 1))
        elif _AIE_PASS_RE.search(after):
            found.append(Summary("mlir-aie test", 1, 0))
    if not timed and _AIE_MISMATCH_RE.search(text):  # its verdict is not in the paste
        found.append(Summary("mlir-aie test", 0, 1))
    header = _BENCHMARK_HEADER_RE.search(text)
    if header:
        after = text[header.end() :]
        runs, errors = _BENCHMARK_RUN_RE.findall(after), _BENCHMARK_ERROR_RE.findall(after)
        if runs or errors:
            found.append(Summary("Google Benchmark", len(runs), len(errors)))
    return found
