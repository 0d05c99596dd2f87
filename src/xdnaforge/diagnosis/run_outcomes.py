"""What a program says of its own run when no reader knows the program. Pure.

The readers (diagnosis/readers.py) know the shapes of the stack's own tools; a log of any
other program that ran on the NPU (a demo, a benchmark, a test gate, a monitor) has none of
them. What such programs print of a good run has a few forms of its own, whatever the
program:

- a verdict line, alone on its line (after a logger's level tag, "INFO: ") or after the
  name of what passed: "Test Passed", "TEST PASSED!", "PASS!", "mha: PASS!", "GATE PASS",
  "All tests passed.", "Validation passed", "✅ PASS: average_pool.py"; or first on its line
  before what it was judged by ("PASS -- tolerance 2e-03 on 1-cos", "PASS (whole array)",
  "PASS!  fused kernel on the NPU"); or last, in capitals, in a column of its own after
  what was judged ("unbatched: median 676.2 us/call  VERIFIED"); or "SUCCESS: <what ran>",
  the word first, in capitals; or a comparison's "MATCH" or "VERIFIED" alone on its line,
  in capitals, or its answer as Python prints a bool ("Are the arrays equal?: True",
  print()'s "allclose True rtol=0.05 atol=0.1"); or a
  JSON report's verdict field alone on its line ('"status": "PASS",'); or MLPerf LoadGen's
  "Result is : VALID" (loadgen/results.cc; "INVALID" is a failed verdict), in its detail
  log ':::MLLOG {"key": "result_validity", "value": "VALID", ...}' as well;
- a summary line of named counts and nothing else, some passed, none failed, the total
  (where it gives one) those passed and skipped: "Total Tests Run: 34 | Passed: 34 |
  Failed: 0", "PASS: 12  FAIL: 0" (one with failures is a failed verdict);
- a tally of its tests, every one passed, alone on its line: "TOTAL 13/13 PASS", "13/13
  tests passed", "Passed: 13/13" (12/13 is no pass), or of its runs, every one completed
  ("Iterations completed: 100/100"); or of the values its comparison found
  equal to the reference's, every one: "exact-equal elements: 24576/24576", "all 1310720
  int32 accumulators BIT-EXACT vs CPU reference";
- a measured rate of the work it did: "Tokens per second: 4.40", "12.5 tokens/s", "TPS: 31.16",
  a JSON report's '"avg_tokens_per_second": 25.21' (Ryzen AI's model_benchmark), its text
  report's "avg (tokens/s): 14.9513" (onnxruntime-genai's benchmark/c/main.cpp),
  "items_per_second=620.987/s", "51.0 TOPS", "80547 op/s", "17965.3 run/sec", "30.00 fps",
  "203.68 dispatch/s", "23.4 seq/s" (any unit of work counted: tokens, items,
  sequences, iterations, steps, calls, kernels; never bytes); or a table's column of
  them, its header naming the rate and every row under it giving a figure above zero
  ("| Model | decode tok/s |", CSV's "decoding_avg_toks_per_s" written by a benchmark);
- the time the NPU's own work took, named so on its line ("NPU Execution Time: 0.0766",
  "IPU Total Time: 0.00053", "Average inference time with EP VitisAIExecutionProvider:
  206.06 ms"); a time the line names no NPU for may be a wait that timed out;
- a checklist of its steps, every item ticked and none crossed or marked with a warning
  sign ("[Attention] Rope ✔",
  "✓ Server health: OK"; three at least), unless the log ends at a step still running
  ("Step 3/6: Detecting NPU hardware...": the step that matters may be the one cut off);
- the NPU firmware's version read from the device ("FW Version: 1.5.2.380", a `cat` of the
  accel device's `fw_version`): the firmware answered the driver's query, so the driver
  probed and the firmware runs.
- an XRT program's own word that its hardware context was created ("Hardware context
  created", "hw_context created successfully"): xrt::hw_context is the first step of a run
  the firmware takes part in (the driver asks it for the context: aie2_create_context), so
  the driver, the firmware and the xclbin's partition all accepted it. Opening the device or
  registering the xclbin is the host's work alone and is no evidence.
- an XRT run's state printed as COMPLETED ("Execution state:
  ert_cmd_state.ERT_CMD_STATE_COMPLETED", ert.h's enumerator): the firmware answered that
  the command ran to its end.
- a build tool's own word that the build finished, in its format strings: CMake's
  Makefiles' last target at 100 % ("[100%] Built target xrt_native",
  cmGlobalUnixMakefileGenerator3.cxx), ninja's last step of all ("[57/57] Linking ...",
  a description CMake's or meson's Ninja rules give, or a command),
  kbuild linking a module ("LD [M]  drivers/accel/amdxdna/amdxdna.ko",
  scripts/Makefile.modfinal), MSBuild's "Build succeeded.", pip's "Successfully installed
  ..." and CMake's configure step ("-- Build files have been written to: ...", cmake.cxx),
  Riallto's app builder ("Successfully Building Application... x.xclbin & x.seq
  delivered"), mlir-aie's C++ aiecc ("Compilation completed successfully",
  tools/aiecc/aiecc.cpp) and aiecc.py's progress bar at 100 % ("AIE Compilation: ━━━ 100%",
  python/compiler/aiecc/main.py), clang's count of its warnings as the log's last line
  ("13 warnings generated.", with no "and N errors": CompilerInstance.cpp's
  printDiagnosticStats; Peano is clang), the AIE compiler's last lines ("Compilation
  Complete", then the Vitis message count "(WARNING:47, CRITICAL-WARNING:0, ERROR:0)"),
  xclbinutil writing an xclbin ("Successfully wrote (<n> bytes) to the output file:
  x.xclbin", XclBinClass.cxx), AMD Quark's summary row naming the quantized model it wrote
  ("| Quantized model path | m_xint8.onnx |", quark/onnx/utils/print_utils.py)
  and nixpkgs-review's report ("3 packages built:", nixpkgs_review/report.py).
- its accuracy measured over a dataset, in a log that names the NPU ("top-1: 60.50%",
  "mAP@0.5: 0.372");
- the program's own word, in the log's last three lines, that its work finished ("Done",
  "Done: x installed to /path", "Conversion complete! Output saved to x", "Benchmark
  complete!"), with no negation, failure or retry beside it.

These are the last positive evidence doctor looks for, and they stand only where nothing
else speaks: the verdict has already found no error line anywhere in the log, and a rate
measured where the log itself names another device (the CPU, a GPU) is not the NPU's.

The same programs say a wrong result in the forms of their pass (`failed_verdict`: "Failed.",
"Status: ❌ FAIL", "Are the arrays equal?: False"); readers.py makes that a finding where
the log names the NPU, after any other.
"""

from __future__ import annotations

import re
from collections import deque

from xdnaforge.diagnosis.knowledge import NPU_RE

# a comparison asked and answered with Python's bool, alone on its line: "Are the arrays
# equal?: True", "match: False", "allclose = True"
_COMPARED = (
    r"^[^\w\n]*(?:[\w' -]{0,60}\b)?(?i:equal|match(?:es|ed)?|correct(?:ness)?|allclose|identical"
    r"|verified|passed|success)\??[ \t]*[:=][ \t]*"
)
# or as print() writes its arguments, the comparison's name alone first, then the bool and
# what it was judged by ("allclose True rtol=0.05 atol=0.1")
_PRINTED = r"^[^\w\n]*(?i:allclose|array_equal|equal|match(?:es|ed)?|identical)[ \t]+"
_PRINTED_TAIL = r"(?:[ \t]+[\w.]+=\S+)*[ \t]*$"

_VERDICT_RE = re.compile(
    # after a logger's level tag, if any ("INFO: Test passed", "[INFO] ")
    r"(?i)^[^\w\n]*(?:\[?(?:info|notice)\]?:?[ \t]+)?(?:"
    # ("all 12 tests", "ALL REQUIRED HARDWARE-BACKED AND REFERENCE REGRESSION TESTS": the
    # words between naming the tests, never an exception, "all but two tests passed")
    r"(?:all (?:(?!(?:but|except|not|no|none|only|some)\b)[\w-]{1,40} ){0,6}?)?"
    r"(?:tests?|gates?|checks?|validation|verification|examples?|runs?)"
    r" (?:have |has )?(?:passed|pass|succeeded|successful)"
    # "PASS!", "PASS: x.py", or after the name of what passed ("mha: PASS!", mlir-aie's
    # test programs run one after another)
    r"|(?:[\w./-]{1,80}: )?(?:all )?(?:test |gate )?pass(?:ed)?(?:: \S+)?"
    r")[^\w\n]*$"
    # "PASS -- tolerance 2e-03 on 1-cos", "PASS (whole array)", "PASS!  fused kernel on the
    # NPU": the verdict first, in capitals, then what was judged or by what
    r"|^[^\w\n]*(?-i:(?:[Tt]est |TEST |[Gg]ate |GATE )?PASS(?:ED)?"
    r"(?: (?:--?|\u2014|\u2013) | \(|! +)\S.*)$"
    # ... or after a colon, the word and its test in capitals ("TEST PASS: AIE output matches
    # golden quantized output", "CASE1 PASS: known canonical final token reached")
    r"|^[^\w\n]*(?-i:(?:TEST|GATE|CASE ?\d{1,4}|TEST ?\d{1,4}) PASS(?:ED)?: +\S.*)$"
    # "SUCCESS: Phoenix NPU executed ...", "SUCCESS!": the word first, in capitals
    r"|^[^\w\n]*(?-i:SUCCESS(?:!|: +\S.*)?)[ \t]*$"
    # a comparison's verdict alone on its line, in capitals ("MATCH" under the NPU's output
    # and the reference's; never "MISMATCH")
    r"|^[^\w\n]*(?-i:(?:MATCH(?:ED|ES)?|VERIFIED))[^\w\n]*$"
    # or last, in capitals, in a column of its own after what was judged and its figures
    # ("unbatched: median 676.2 us/call  VERIFIED", "  base-j0-i0        PASS")
    # (greedy, then back from the line's end: linear, where a lazy scan before "[ \t]{2,}"
    # retried every run of blanks from each of its characters)
    r"|^(?-i:[ \t]*\w[^\n]*[ \t]{2}(?:PASS(?:ED)?|VERIFIED)!?)(?:[ \t]+\([^()\n]*\))?[ \t]*$"
    # or right after the figure it judged, a name=value, and what it was judged by
    # ("rel_fro=3.167e-04 worst_abs=1.304e-04 PASS  (K_real=384 K_aug=448)")
    rf"|^(?-i:[^\n]*\w=[\w.+-]+ PASS(?:ED)?)(?:[ \t]+\([^()\n]*\))?[ \t]*$"
    # or a comparison's answer as Python prints a bool ("Are the arrays equal?: True")
    rf"|{_COMPARED}True[ \t]*$"
    # or its answer in capitals, OK, and what it was judged on ("correctness: OK (4096
    # int32 elements)")
    rf"|{_COMPARED}(?-i:OK)(?:[ \t]+\([^()\n]*\))?[ \t]*$"
    rf"|{_PRINTED}True{_PRINTED_TAIL}"
    # or MLPerf LoadGen's verdict on the run (loadgen/results.cc, the summary's "Result is :
    # VALID"; "INVALID" when a constraint of the scenario was not met)
    r"|^[ \t]*Result is[ \t]*:[ \t]*VALID[ \t]*$"
    # ... and its detail log's record of it (logging.h's MLPERF_LOG: ":::MLLOG " and one JSON
    # object, the key first)
    r'|^:::MLLOG \{"key": "result_validity", "value": "VALID"[,}]'
    # or a JSON report's own verdict field, alone on its line ('  "status": "PASS",'): a
    # test's word, not a server's "ok" or an API's "success"
    r'|^[ \t]*"(?:status|result|verdict|outcome)"[ \t]*:[ \t]*"pass(?:ed)?"[ \t]*,?[ \t]*$',
    re.M,
)
# Or its result after a tick ("RESULT: ✓ the ONNX MLP runs on the NPU and matches the CPU
# reference"), or a tick first and its test finished ("✅ Encoder block test complete!"), on
# a line with no cross. Apart from _VERDICT_RE and searched only in a log with a tick: a
# look for a cross at every line's start cost the whole log a second read.
_TICKS_MARKS = ("\u2713", "\u2714", "\u2705")
_TICKED_VERDICT_RE = re.compile(
    # (the marks before the word, possessive, and the tick the first of its line: a line of
    # ticks is not retried from every one of them)
    r"^(?:[^\w\n]*+(?i:result|verdict|outcome)[ \t]*:[ \t]*[\u2713\u2714\u2705][^\n]*\w[^\n]*"
    r"|[^\w\n\u2713\u2714\u2705]*+[\u2713\u2714\u2705][ \t]*(?:[\w-]{1,30} ){0,4}?"
    r"(?i:tests?|run|benchmark|inference)"
    r" (?i:complete[d]?|finished|done|passed)\b[^\n]*)$",
    re.M,
)
_UNITS = (
    r"tokens?|tok|items?|ops?|frames?|fps|images?|img|samples?|inferences?|queries|it"
    r"|runs?|commands?|cmds?|requests?|dispatch(?:es)?"
    # the other units of work a program counts: sequences, iterations, steps, batches, the
    # texts it embedded, the calls, kernels or tiles it ran ("23.4 seq/s", "12.1 iters/s")
    r"|seq(?:uence)?s?|iters?|iterations?|steps?|batch(?:es)?|embeddings?|texts?|calls?"
    r"|kernels?|tiles?|words?"
)
_RATE_RES = (
    re.compile(  # "Tokens per second: 4.40", "items_per_second=620.987/s", JSON's key
        rf"(?i)(?:\b|(?<=_))({_UNITS})[ _]per[ _]second\"?\s*[:=]\s*(\d+(?:\.\d+)?)"
    ),
    # a number from its first digit only: tried once per number, never at each of its digits
    # "12.5 tok/s", "169.07 samples/second"
    re.compile(rf"(?i)(?<![\d.])(\d+(?:\.\d+)?)\s*({_UNITS})\s*/\s*s(?:ec(?:ond)?s?)?\b"),
    re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(TOPS|GOPS|TFLOPS|GFLOPS)\b"),
    re.compile(r"(?i)(?<![\d.])(\d+(?:\.\d+)?)\s*(fps)\b(?!\s*/)"),  # "= 30.00 fps": a rate
    re.compile(r"\b(TPS)\s*[:=]\s*(\d+(?:\.\d+)?)"),  # "Avg TPS : 31.16": tokens per second
    # the unit in parentheses after what was timed, then the figure (onnxruntime-genai's
    # model_benchmark, benchmark/c/main.cpp: "avg (tokens/s): 14.9513")
    re.compile(rf"(?i)\(({_UNITS})\s*/\s*s(?:ec)?\)\s*[:=]\s*(\d+(?:\.\d+)?)"),
)
# or the rate's unit as the figure's label ("Tokens/sec:6.2", RyzenAI-SW's transformers
# examples; "tok/s = 12.5"): a word, possessive (tried once from each word's start), whose
# unit is checked after the match, as the units' alternation at every word cost a fifth of
# the line-by-line path on a hostile line
_LABELLED_RATE_RE = re.compile(r"(?i)\b([a-z]++)\s*/\s*s(?:ec(?:ond)?)?\s*[:=]\s*(\d+(?:\.\d+)?)")
_UNIT_RE = re.compile(rf"(?i)(?:{_UNITS})")
# a program that says it produced no tokens did no work, whatever rate it prints beside it
# (Lemonade's telemetry: "Output tokens: 0" with "TPS: 10.33")
_NO_OUTPUT_RE = re.compile(r"(?im)^\W*(?:avg )?output tokens\s*:\s*0\s*$")
_OTHER_DEVICE_RE = re.compile(
    r"(?i)\b(?:on|device[:=]?|using|backend[:=]?)\s+(?:the\s+)?(?:cpu|gpu|igpu|cuda|rocm|vulkan)\b"
    r"|CPUExecutionProvider|DmlExecutionProvider|\bllama-bench\b"
)
_FIRMWARE_RE = re.compile(
    r"(?i)\b(?:npu\s+)?(?:fw|firmware)[ _]version\s*[:=]\s*(\d+\.\d+\.\d+(?:\.\d+)?)\b"
)
_FW_FILE_RE = re.compile(
    r"\bcat \S{0,200}?accel\S{0,200}?/fw_version[ \t]*\n+[ \t]*(\d+\.\d+\.\d+(?:\.\d+)?)\s*$",
    re.M,
)


# "Hardware context created", "hw_context created successfully", "Created HW context 1": the
# whole line, after a logger's name, a tag or a bullet ("INFO:xdna2.server:  ", "[pyxrt] ",
# "✅ "), says that the step was done, and nothing else
_CONTEXT = r"(?:hardware|hw)[ _-]?(?:context|ctx)"
_CONTEXT_ID = r"(?:\s+(?:#?\d+|\(\w+\)|0x[0-9a-fA-F]+|id[ =:]\S+))?"
_HWCTX_DONE_RE = re.compile(
    # the lead matched possessively (a tag before a bullet): each piece is taken once, never
    # split another way
    r"(?im)^[ \t]*(?:\[[^\]\n]{1,30}+\]\s*+|[^\w\s]++\s*+|[A-Za-z][\w.-]{0,40}+:\s*+)*+"
    rf"(?:{_CONTEXT}{_CONTEXT_ID}\s+(?:created|opened|ready)(?:\s+successfully)?"
    rf"|created\s+(?:an?\s+|the\s+|new\s+)?{_CONTEXT}){_CONTEXT_ID}"
    r"(?:\s+on\s+(?:the\s+)?(?:NPU|device)\b[^\n]{0,40}?)?[ \t]*[.!]?[ \t]*$"
)
_TICK_RE = re.compile(r"[✓✔☑✅]|\[ ?(?:OK|PASS) ?\]")
# a crossed item, or one the program marks with a warning sign: not every item went well
_CROSS_RE = re.compile(r"[✗✘❌☒⚠]|\[ ?(?:FAIL|FAILED|ERROR|WARN|WARNING) ?\]")
_TICKS = 3


def _positive(number: str) -> bool:
    return float(number) > 0


# a tally of passes out of all, alone on its line: "TOTAL 13/13 PASS", "13/13 tests passed",
# "Passed: 13/13"; only when every one passed
_TALLY_RES = (
    re.compile(
        r"(?im)^[^\w\n]*(?:(?:total|summary|result|overall)\s*(?::\s*)?)?(\d+)\s*/\s*(\d+)\s+"
        r"(?:(?:tests?|checks?|cases?|gates?)\s+)?pass(?:ed|es)?\b[^\w\n]*$"
    ),
    # (blanks around an optional colon read once: "\s*:?\s*" shared a run of blanks every
    # way between its two halves, quadratic on a hostile line)
    re.compile(r"(?im)^[^\w\n]*pass(?:ed)?\s*(?:[:=]\s*)?(\d+)\s*/\s*(\d+)[^\w\n]*$"),
    # a count of the runs it completed, every one: "Iterations completed: 100/100",
    # "runs succeeded: 5/5", "100/100 iterations completed"
    re.compile(
        r"(?im)^[^\w\n]*(?:[a-z][\w -]{0,40}?\s)?(?:completed|succeeded|successful)\s*[:=]\s*"
        r"(\d+)\s*/\s*(\d+)[^\w\n]*$"
    ),
    re.compile(
        r"(?im)^[^\w\n]*(\d+)\s*/\s*(\d+)\s+(?:[a-z][\w-]*\s+){0,2}(?:completed|succeeded)"
        r"(?: successfully)?[^\w\n]*$"
    ),
    # a comparison's own count of the values that matched its reference, first on its line:
    # "exact-equal elements: 24576/24576 (100.0000%)", "matching outputs: 64/64"
    re.compile(
        r"(?im)^[^\w\n]*(?:exact[- ]equal|exact[- ]match(?:es|ing)?|matching|matched|bit[- ]exact)"
        r"(?: [a-z]+)?\s*(?:[:=]\s*)?(\d+)\s*/\s*(\d+)\b"
    ),
)
# "ok  all 1310720 int32 accumulators BIT-EXACT vs CPU reference": every value the same as
# the reference's, in capitals
_ALL_EXACT_RE = re.compile(r"(?m)^[^\w\n]*(?:ok\s+)?all \d+ [^\n]{0,60}?\bBIT-EXACT\b")


# a line of named counts and nothing else, as a program's summary prints them: "Total Tests
# Run: 34 | Passed: 34 | Failed: 0", "PASS: 12  FAIL: 0", "passed=5, failed=0, skipped=1"
_COUNT_RE = re.compile(
    r"(?i)\b(total(?: tests?)?(?: run)?|tests? run|ran|pass(?:ed)?|fail(?:ed|ures?)?|errors?"
    r"|skipped|skips?)[ \t]*[:=][ \t]*(\d+)\b"
)
_COUNT_GAP_RE = re.compile(r"[\s|,;/()\[\]*=-]*")


def _counts(line: str) -> dict[str, int] | None:
    """The named counts of a line that holds nothing else, a passed and a failed count among
    them ("passed", "failed", "skipped", "total"); None for any other line (prose with a
    count in it)."""
    if len(line) > 300:
        return None
    counts: dict[str, int] = {}
    at = 0
    for match in _COUNT_RE.finditer(line):
        if not _COUNT_GAP_RE.fullmatch(line, at, match.start()):
            return None
        kind = match.group(1).lower()
        if kind.startswith("pass"):
            key = "passed"
        elif kind.startswith(("fail", "error")):
            key = "failed"
        elif kind.startswith("skip"):
            key = "skipped"
        else:
            key = "total"
        counts[key] = counts.get(key, 0) + int(match.group(2))
        at = match.end()
    if "passed" not in counts or "failed" not in counts or not _COUNT_GAP_RE.fullmatch(line, at):
        return None
    return counts


def counted_pass(body: str) -> str | None:
    """The first summary line of named counts, when some passed, none failed and the total,
    where it gives one, is those that passed and were skipped."""
    for line in body.splitlines():
        if ":" not in line and "=" not in line:
            continue
        counts = _counts(line)
        if counts is None:
            continue
        passed, failed = counts["passed"], counts["failed"]
        total = counts.get("total", passed + counts.get("skipped", 0))
        if passed > 0 and failed == 0 and total == passed + counts.get("skipped", 0):
            return f"the program reported its own pass ({line.strip()})"
        return None
    return None


def verdict(body: str) -> str | None:
    """The program's own verdict that it passed ("Test Passed"), or its tally of every test
    passed ("TOTAL 13/13 PASS"), as the log shows it."""
    match = _VERDICT_RE.search(body)
    if match:
        return f"the program reported its own pass ({match.group(0).strip()})"
    if any(mark in body for mark in _TICKS_MARKS):
        for ticked in _TICKED_VERDICT_RE.finditer(body):
            if not _CROSSES.intersection(ticked.group(0)):
                return f"the program reported its own pass ({ticked.group(0).strip()})"
    for pattern in _TALLY_RES:
        for tally in pattern.finditer(body):
            if int(tally.group(1)) == int(tally.group(2)) > 0:
                return f"the program reported its own pass ({tally.group(0).strip()})"
    exact = _ALL_EXACT_RE.search(body)
    if exact:
        return f"the program reported its own pass ({exact.group(0).strip()})"
    tabled = tabled_verdicts(body)
    if tabled is not None and tabled[0] == "passed":
        return f"the program reported its own pass (a table of its checks, {tabled[1]})"
    return counted_pass(body)


# The same programs' own word that a run's result was wrong, in the same forms as a pass:
# the word alone ("Failed.": mlir-aie's test programs; "TEST FAILED!"), after the name of
# what failed ("Status: ❌ FAIL", "mha: FAILED"), first in capitals before what failed ("❌
# FAIL: kernel achieves nan% correlation"; "FAIL:" only: ninja's "FAILED: <target>" is a
# build step), a cross mark first and the word in capitals ("❌ Softmax sum check FAILED
# (got 0.0)"), in capitals in a column of its own ("acvp-tcId-16      FAIL", "rel_fro =
# 7.07e-01  FAIL (tol 5e-3)", what it was judged by after it), or a tally
# with failures ("TOTAL 0/25 FAIL")
_FAILED_RE = re.compile(
    r"^[^\w\n]*(?i:(?:\[?(?:error|info)\]?:?[ \t]+)?(?:test |check )?fail(?:ed)?)[^\w\n]*$"
    r"|^[^\w\n]*[\w./-]{1,40}(?: [\w./-]{1,40}){0,3}[ \t]*:[^\w\n]*(?i:fail(?:ed|ure)?)[^\w\n]*$"
    r"|^[^\w\n]*(?:FAIL|(?:TEST|GATE|CASE ?\d{1,4}|TEST ?\d{1,4}) FAIL(?:ED)?)(?::| --?) +\S.*$"
    r"|^[ \t]*[\u274c\u2717\u2718][^\n]*?\bFAIL(?:ED)?\b[^\n]*$"
    # or the cross mark right before a grade in capitals that says the result is bad
    # ("Status: ❌ POOR - Needs debugging", "❌ LOW - kernel needs fixes"), on a line with
    # no tick (a legend shows both)
    r"|^(?![^\n]*[\u2705\u2713\u2714])[^\n]*?[\u274c\u2717\u2718][ \t]*"
    r"(?:POOR|LOW|BAD|WRONG|INCORRECT|MISMATCH(?:ED)?|BROKEN)\b[^\n]*$"
    r"|^[ \t]*\w[^\n]*[ \t]{2}FAIL(?:ED)?!?(?:[ \t]+\([^()\n]*\))?[ \t]*$"
    r"|^[^\n]*\w=[\w.+-]+ FAIL(?:ED)?(?:[ \t]+\([^()\n]*\))?[ \t]*$"
    r"|^[^\w\n]*(?i:(?:total|summary|result|overall)?\s*(?::\s*)?\d+\s*/\s*\d+\s+fail(?:ed|s)?)\b[^\w\n]*$"
    r"|^[ \t]*Result is[ \t]*:[ \t]*INVALID[ \t]*$"  # MLPerf LoadGen's
    r'|^:::MLLOG \{"key": "result_validity", "value": "INVALID"[,}]'
    r'|^:::MLLOG \{[^\n]*"metadata": \{"is_error": true\b'  # its error records
    # or a comparison's answer as Python prints a bool ("Are the arrays equal?: False")
    rf"|{_COMPARED}False[ \t]*$"
    rf"|{_PRINTED}False{_PRINTED_TAIL}"
    # or print()'s arguments with what was compared first ("t0 match False actual_sha 5540...
    # expected_sha 12fe... first_mismatch 31"): the failed side only, whatever it printed after
    r"|^[^\w\n]*[\w.\[\]-]{1,40}[ \t]+(?i:match(?:es|ed)?|equal|allclose|identical)[ \t]+False"
    r"(?:[ \t][^\n]*)?$",
)


_CROSSES = frozenset("\u274c\u2717\u2718")  # the cross marks a program fails a check with


def failed_verdict(line: str) -> bool:
    """Whether the line is a program's own verdict that its run's result was wrong (or its
    summary of named counts, some failed: "Total: 34 | Passed: 33 | Failed: 1")."""
    lowered = line.lower()
    if not (
        "fail" in lowered
        or "error" in lowered
        or "INVALID" in line
        or "False" in line
        or _CROSSES.intersection(line)
    ):
        return False  # none of its words or marks (an error count is a failed one)
    if _FAILED_RE.match(line.strip("\r\n")) is not None:
        return True
    counts = _counts(line) if (":" in line or "=" in line) else None
    return counts is not None and counts["failed"] > 0


def _other_device(body: str) -> bool:
    """Whether the log names another device for the work: a line of ONNX Runtime's
    providers that lists the Vitis AI EP first is the session's preference, with the CPU as
    its fallback for what the NPU does not take, not a run on the CPU."""
    if "VitisAIExecutionProvider" not in body:
        return _OTHER_DEVICE_RE.search(body) is not None
    for line in body.splitlines():  # each line searched once
        found = _OTHER_DEVICE_RE.search(line)
        if found is None:
            continue
        vitis = line.find("VitisAIExecutionProvider")
        if vitis < 0 or vitis > found.start():
            return True
    return False


def measured_rate(body: str) -> str | None:
    """A rate of work the program measured, unless the log names another device for it."""
    if _other_device(body) or _NO_OUTPUT_RE.search(body):
        return None
    for pattern in _RATE_RES:
        for match in pattern.finditer(body):
            number = match.group(2) if match.group(1)[0].isalpha() else match.group(1)
            if _positive(number):
                return f"the program measured its work ({match.group(0).strip()})"
    if "/" in body:
        for match in _LABELLED_RATE_RE.finditer(body):
            if _UNIT_RE.fullmatch(match.group(1)) and _positive(match.group(2)):
                return f"the program measured its work ({match.group(0).strip()})"
    return tabled_rate(body) or npu_timed(body)


# the time the NPU took for its work, measured and named so on its line: "NPU Execution
# Time: 0.0766", "IPU Total Time: 0.00053" (Ryzen AI's tutorials beside the CPU's), "Avg
# NPU time: 61.5us." (mlir-aie's test programs), "Average inference time with EP
# VitisAIExecutionProvider: 206.06 ms"; a time the log names no NPU for ("Prefill time:
# 0.69 seconds") may be a wait that timed out, and is no evidence
_TIME_UNIT = r"(?:ns|us|\u00b5s|ms|s|sec|secs|seconds?)"
_FIGURE = r"(\d+(?:\.\d+)?(?:[eE]-?\d+)?)"
_NPU_TIME_RES = (
    re.compile(
        rf"(?im)^[^\n]{{0,40}}?\b(?:NPU|IPU)\b[ \t\w]{{0,30}}?\b(?:time|latency)\b[ \t]*"
        rf"(?:\({_TIME_UNIT}\)[ \t]*)?[:=][ \t]*{_FIGURE}[ \t]*(?:{_TIME_UNIT}\b)?\.?[ \t]*$"
    ),
    re.compile(
        rf"(?im)^[^\n]{{0,40}}?\b(?:time|latency)\b[ \t\w]{{0,30}}?\b(?:NPU|IPU|"
        rf"VitisAIExecutionProvider)[ \t]*[:=][ \t]*{_FIGURE}[ \t]*{_TIME_UNIT}\b\.?[ \t]*$"
    ),
)


def npu_timed(body: str) -> str | None:
    """A time above zero the NPU's own work took, as the program measured it."""
    for pattern in _NPU_TIME_RES:
        for match in pattern.finditer(body):
            if _positive(match.group(1)):
                return f"the program timed the NPU's work ({match.group(0).strip()})"
    return None


# A table of a program's measures, a run a row: the unit of a rate in a column's header
# ("decode tok/s", "decoding_avg_toks_per_s", "Throughput (fps)", "TOPS"), its figures in
# the rows under it. Markdown's pipe tables (and the ones `column -t`-like tools draw with
# '|') and CSV's header line are the two forms a program writes or a person pastes.
_RATE_HEADER_RE = re.compile(
    rf"(?i)(?:^|[^a-z])(?:{_UNITS}|toks)\s*(?:/|_?per_?)\s*s(?:ec(?:ond)?)?(?![a-z])"
    r"|(?:^|[^a-z])(?:TPS|TOPS|GOPS|TFLOPS|GFLOPS|fps)(?![a-z])"
)
# a figure with its unit, if any: "58.30", "1,466.81", "12.5 tok/s"
_FIGURE_RE = re.compile(r"^(\d{1,12}(?:,\d{3})*(?:\.\d+)?)(?:\s*[a-zA-Z/]{1,12})?$")
# a row that says a run did not give its figures
_NO_FIGURE_RE = re.compile(r"(?i)\b(?:fail(?:ed|ure)?|error|timed? ?out|crash(?:ed)?|hang|oom)\b")
_TABLE_LINES = 5000  # the rows of a table read: a results table, not a log
_TABLE_WIDTH = 2000  # a header's characters: a table's, not a hostile line's


def _cells(line: str) -> list[str] | None:
    text = line.strip()
    if text.startswith("|") and text.endswith("|") and len(text) > 2:
        return [cell.strip() for cell in text[1:-1].split("|")]
    if text.count(",") >= 2 and "|" not in text:
        return [cell.strip() for cell in text.split(",")]
    return None


def _separator(cells: list[str]) -> bool:
    return all(re.fullmatch(r":?-{2,}:?", cell) for cell in cells)


# or the time the NPU's own work took, a column named for it ("run_aie_time(ns)", RyzenAI-SW's
# operator benchmarks; "npu_latency_ms", "IPU time (ms)")
_NPU_TIME_HEADER_RE = re.compile(
    r"(?i)(?:^|[^a-z])(?:npu|aie|ipu)[_ ]?(?:[a-z]{1,12}[_ ])?(?:time|latency)"
)


def _measure_column(cell: str) -> bool:
    return _RATE_HEADER_RE.search(cell) is not None or _NPU_TIME_HEADER_RE.search(cell) is not None


def tabled_rate(body: str) -> str | None:
    """A rate of work in a table's column (or the NPU's own time), every row under its
    header giving a figure above zero there and none saying the run failed; the first such
    column of the log."""
    lines = body.splitlines()[:_TABLE_LINES]
    for at, line in enumerate(lines):
        if len(line) > _TABLE_WIDTH or not _measure_column(line):
            continue  # no rate's unit on it (the cells are split only where one is)
        header = _cells(line)
        if header is None or len(header) < 2:
            continue
        columns = [i for i, cell in enumerate(header) if _measure_column(cell)]
        if not columns:
            continue
        figures: list[str] = []
        for row_line in lines[at + 1 :]:
            row = _cells(row_line)
            if row is None or len(row) != len(header):
                break
            if _separator(row):
                continue
            if _NO_FIGURE_RE.search(row_line):
                return None
            figure = _FIGURE_RE.match(row[columns[0]])
            if figure is None or not _positive(figure.group(1).replace(",", "")):
                return None
            figures.append(row[columns[0]])
        if figures:
            rows = f"{len(figures)} row" + ("s" if len(figures) > 1 else "")
            return f"the program measured its work ({header[columns[0]]}: {figures[0]}; {rows})"
    return None


# A table of a program's checks with a column of its verdicts: a header naming that column
# ("result", "status", "verdict", "outcome", the columns 2+ blanks or '|' apart), an optional
# ruler, then a row per check up to a blank line, each with one verdict word in capitals
# (no blanks matched before the word but at the line's start or after '|': a run of blanks
# is tried from each of its places only once, never again inside)
_VERDICT_HEADER_RE = re.compile(
    r"(?i)(?:^\s*|\s{2}|\|\s*)(?:result|status|verdict|outcome)s?(?=\s*\||\s{2}|\s*$)"
)
_ROW_VERDICT_RE = re.compile(r"(?:^|\s|\|)(PASS(?:ED)?|FAIL(?:ED)?)(?=\s|\||$)")
_RULER_RE = re.compile(r"^[\s|:+=-]*$")
_VERDICT_ROWS = 2  # rows a table needs: one row is a line, not a table


def tabled_verdicts(body: str) -> tuple[str, str] | None:
    """The first table of verdicts in the log (above): ("passed", its header) when every
    row passed, ("failed", the first failed row) when one did; None when there is none."""
    lines = body.splitlines()[:_TABLE_LINES]
    for at, line in enumerate(lines):
        if len(line) > _TABLE_WIDTH or not _VERDICT_HEADER_RE.search(line):
            continue
        if _ROW_VERDICT_RE.search(line) or len(re.split(r"\s{2,}|\|", line.strip())) < 2:
            continue  # a row itself, or one word alone
        words: list[tuple[str, str]] = []
        for row in lines[at + 1 : at + 1 + _TABLE_LINES]:
            if not row.strip():
                break
            if _RULER_RE.match(row):
                continue
            found = _ROW_VERDICT_RE.findall(row)
            if len(found) != 1:
                break
            words.append((found[0], row.strip()))
        if len(words) < _VERDICT_ROWS:
            continue
        failed = next((row for word, row in words if word.startswith("FAIL")), None)
        if failed is not None:
            return "failed", failed[:160]
        return "passed", f"{line.strip()[:80]}: {len(words)} rows PASS"
    return None


def checklist(body: str) -> str | None:
    """Every item of the program's own checklist ticked (a legend naming both marks, "✔ =
    NPU / ✘ = CPU", is no item)."""
    lines = [line for line in body.splitlines() if re.search(r"\w", line)]  # not a fence
    if not lines or lines[-1].rstrip().endswith("..."):
        return None
    ticked = crossed = 0
    for line in lines:
        tick, cross = _TICK_RE.search(line), _CROSS_RE.search(line)
        if tick and cross:
            continue
        ticked += tick is not None
        crossed += cross is not None
    if ticked >= _TICKS and not crossed:
        return f"the program ticked every item of its checklist ({ticked})"
    return None


def firmware_answered(body: str) -> str | None:
    """The NPU firmware's version as read from the device, in a log of the NPU stack."""
    read = _FW_FILE_RE.search(body)
    if read:
        return f"the NPU firmware answered the driver (fw_version {read.group(1)})"
    match = _FIRMWARE_RE.search(body)
    if match and NPU_RE.search(body):
        return f"the NPU firmware answered the driver (firmware {match.group(1)})"
    return None


def hardware_context(body: str) -> str | None:
    """An XRT program's own word that its hardware context was created, in a log of the NPU."""
    if not NPU_RE.search(body) and "xclbin" not in body:
        return None
    done = _HWCTX_DONE_RE.search(body)
    if done is None:
        return None
    return f"the program created its hardware context on the NPU ({done.group(0).strip()})"


# an XRT run's state as the program prints it once the run ended: the enumerator of
# ert_cmd_state (XRT's ert.h) as pyxrt's enum prints it ("ert_cmd_state.ERT_CMD_STATE_COMPLETED")
# or as C++ code names it, after "state" and a colon or an equals sign, last on its line; a
# comparison against it ("!= ERT_CMD_STATE_COMPLETED", "expected ...") says nothing ran
_RUN_COMPLETED_RE = re.compile(
    r"(?im)^[^\n]{0,120}?\bstate\b[ \t]*[:=][ \t]*(?:ert_cmd_state\.)?ERT_CMD_STATE_COMPLETED"
    r"(?:[ \t]*\(4\))?[ \t.]*$"
)


def run_completed(body: str) -> str | None:
    """An XRT run's own state, COMPLETED: the NPU executed the command to its end (the
    driver marks it so when the firmware's response says it finished)."""
    done = _RUN_COMPLETED_RE.search(body)
    if done is None or re.search(r"(?i)expect|!=|==|\bnot\b", done.group(0)):
        return None
    return f"an XRT run on the NPU completed ({done.group(0).strip()})"


# A program's own word, at the end of its log, that its work finished: "Done", "Done.",
# "Done: x installed to /path", "Done in 0.689 sec: ...", "Conversion complete! Output
# saved to x", "Test Done.", "Testing edgeDetect done!", "Benchmark complete!", "Test
# Finished" (a phrase of at most six words, then the word, "successfully" and a "!" or "."
# if any), or the output it saved ("Saved final model"), after a logger's prefix. Read
# in the log's last lines only: a step's "done" in the middle of a run says nothing of how
# the run ended; never with a negation or a failure beside it ("did not complete",
# "Configuring incomplete", "done with errors", "completed on attempt 2 of 8").
_FINISHED_RE = re.compile(
    # after a logger's prefix, if any: a time, a level tag, a source file and line
    # ("2026-01-13 22:21:44 [INFO] partitioner.py(744): "), at most 120 characters to the
    # last "]" or ":" before the words
    r"^(?:[^\n]{0,120}?[\]:][ \t]+)?[^\w\n]*(?:\[\w+\][ \t]*|\w+:[ \t]+)?"
    r"(?:(?i:all )?Done(?:[.!]|:[ \t]+\S[^\n]*| in \d[^\n]*)?"
    # or its output written: "Saved final model", "Saved -> C:\\out.jpg", "wrote x.xclbin"
    r"|(?i:saved|wrote)(?: [\w-]{1,30}){0,4}(?:[ \t]+(?:to|->|\u2192|at|in|as)[ \t]+\S[^\n]*"
    r"|[ \t]+\S*[\w/\\]\.\w{1,8}\b[^\n]*)?"
    r"|(?:[\w-]{1,30} ){0,5}[\w-]{1,30} (?i:(?:complete[d]?|finished|done)(?: successfully)?)"
    r"(?:[!.](?:[ \t]+\S[^\n]*)?)?)"
    r"[ \t]*$"
)
_UNFINISHED_RE = re.compile(
    r"(?i)\b(?:not|n't|never|incomplete|error|errors|fail\w*|abort\w*|attempt|retry|timeout"
    r"|timed out|partial(?:ly)?|skipp\w+)\b"
)
_FINISHED_TAIL = 3  # the last non-empty lines read
_FINISHED_SPAN = 4096  # the characters at the log's end those lines are looked for in


def finished(body: str) -> str | None:
    """The program's own word, in the log's last lines, that its work finished."""
    end = body[-_FINISHED_SPAN:].splitlines()
    tail = [line for line in end if line.strip()][-_FINISHED_TAIL:]
    for line in reversed(tail):
        if _FINISHED_RE.match(line) and not _UNFINISHED_RE.search(line):
            return f"the program reported its work finished ({line.strip()})"
    return None


_BUILT_RES = (
    (re.compile(r"^\[100%\] Built target (\S+)", re.M), "make built target {}"),
    (re.compile(r"^[ \t]*LD \[M\] +(\S+\.ko)\s*$", re.M), "kbuild linked {}"),
    (re.compile(r"^[ \t]*(Build succeeded)\.\s*$", re.M), "MSBuild: {}"),
    # CPack once it wrote a package (cmCPackGenerator: "- package: <file> generated.", its
    # log's "CPack: " before it): packaging runs after the build and install steps
    (re.compile(r"^CPack: - package: (\S+) generated\.\s*$", re.M), "CPack wrote {}"),
    # (what is named ends at a non-blank: a lazy name before "\s*$" retried every run of
    # blanks from each of its characters, quadratic on a hostile line)
    (re.compile(r"^(Successfully installed \S(?:.*?\S)?)\s*$", re.M), "pip: {}"),
    (
        re.compile(r"^-- Build files have been written to: (\S(?:.*?\S)?)\s*$", re.M),
        "CMake configured {}",
    ),
    # Riallto's app builder (npu/build/appbuilder.py) once the xclbin is copied out
    (
        re.compile(r"^Successfully Building Application\.\.\. (\S+\.xclbin)\b", re.M),
        "Riallto built {}",
    ),
    # nixpkgs-review's report (nixpkgs_review/report.py: html_pkgs_section's summary, and
    # print_console's "<n> packages built:"); a package that failed is its own line,
    # "failed to build"
    (
        re.compile(
            r"^\s*(?:<summary>:white_check_mark: )?(\d+ packages? built):(?:</summary>)?\s*$", re.M
        ),
        "nixpkgs-review: {}",
    ),
    # mlir-aie's C++ aiecc (tools/aiecc/aiecc.cpp, main: after compileAIEModule succeeded;
    # "Compilation failed" otherwise), and xclbinutil writing the xclbin (XclBinClass.cxx)
    (re.compile(r"^(Compilation completed successfully)\s*$", re.M), "aiecc: {}"),
    # mlir-aie's aiecc.py (python/compiler/aiecc/main.py): its rich progress bar of the
    # cores' compilation, "[green] AIE Compilation:", at 100 % once every core was compiled
    (re.compile(r"^[ \t]*(AIE Compilation):[^\n%]{0,200}?\b100%", re.M), "aiecc.py: {} 100%"),
    # the AIE compiler of Vitis and Ryzen AI (aiecompiler, and VAIML's compile through it):
    # its last line, the Vitis message system's count of what it printed, no error among them
    (
        re.compile(
            r"^(Compilation Complete)\s*\n\(WARNING:\d+, CRITICAL-WARNING:\d+, ERROR:0\)\s*$", re.M
        ),
        "aiecompiler: {}, no error",
    ),
    (
        re.compile(
            r"^Successfully wrote \(\d+ bytes\) to the output file: (\S+\.xclbin)\s*$", re.M
        ),
        "xclbinutil wrote {}",
    ),
    # AMD Quark's ONNX quantizer (quark/onnx/utils/print_utils.py print_fp32_nodes, called by
    # quantize_static once the quantized model is written): its summary table's row naming
    # the model written, as rich draws it (box characters, or "|" where it draws plain ASCII)
    (
        re.compile(
            r"^[ \t]*[|\u2502\u2503][ \t]*Quantized model path[ \t]*[|\u2502\u2503][ \t]*"
            r"([^|\u2502\u2503\s]+)[ \t]*[|\u2502\u2503][ \t]*$",
            re.M,
        ),
        "Quark wrote the quantized model {}",
    ),
)
# ninja's status, "[N/M] " before what the step does: the description CMake's Ninja
# generator gives its rules (cmNinjaTargetGenerator, cmNinjaNormalTargetGenerator,
# cmGlobalNinjaGenerator: "Building CXX object ...", "Linking CXX executable ...",
# "Generating ...", "Running utility command ...", "Re-running CMake...", "Creating ...",
# "Copying ...", "Install the project..."; ExternalProject's "Performing ... step" and
# "Completed ..."), meson's ("Compiling C object", "Linking target"), or the command itself
# where a rule has none ("/usr/bin/c++ ...", "cd /b && ..."); a program's own step counter
# ("[5/5] Validating accuracy ...", "[10/10] 09_memtile_locks  cached") is not a build
_NINJA_RE = re.compile(
    r"^\[(\d+)/(\d+)\] (?:(?:Building|Linking|Generating|Running|Re-running|Creating|Copying"
    r"|Install(?:ing)?|Performing|Completed|Compiling|Scanning|Archiving)\b|/|cd )",
    re.M,
)


# clang's count of what it printed, its last line once a translation unit is compiled
# (lib/Frontend/CompilerInstance.cpp printDiagnosticStats: "N warning(s)", " and N error(s)",
# " generated."): warnings and no error is a compile that finished, as the log's last line
# (a paste's closing fence after it is no line of the log)
_CLANG_STATS_RE = re.compile(r"[ \t]*(\d+ warnings?) generated\.[ \t]*$")
_CLANG_STATS_TAIL = 200


def _last(pattern: re.Pattern[str], body: str) -> re.Match[str] | None:
    return next(iter(deque(pattern.finditer(body), maxlen=1)), None)


def build_finished(body: str) -> str | None:
    """A build tool's own word that its build (or configure step) finished."""
    for pattern, says in _BUILT_RES:
        found = _last(pattern, body)
        if found is not None:
            return f"the build finished ({says.format(found.group(1))})"
    last = _last(_NINJA_RE, body)
    if last is not None and last.group(1) == last.group(2):
        return f"the build finished (ninja ran all {last.group(2)} steps)"
    tail = [t for t in body[-_CLANG_STATS_TAIL:].splitlines() if t.strip(" \t`~")]
    compiled = _CLANG_STATS_RE.match(tail[-1]) if tail else None
    if compiled is not None:
        return f"the build finished (clang compiled with {compiled.group(1)} only)"
    return None


# A model's answer as the program that ran it prints it: its predicted label ("Predicted
# Label cat", "Predicted AIE: truck, Predicted CPU: truck"), its top prediction ("Final top
# prediction is: Golden Retriever", "Top 5 labels are:" above them), or its result
# ("Prediction Result: Hi, welcome to ..."): the model ran to its output. The NPU must be
# named, in its own words or the AI Engine's (AIE, IPU, the Vitis AI EP, `--ep npu`, an
# xclbin it loads): a
# prediction on the CPU is no evidence of the NPU
_PREDICTION_RE = re.compile(
    r"(?im)^[^\n]{0,60}?\b(?:predicted (?:label|class)[ \t]*[:=]?|predicted(?: aie| npu)?[ \t]*[:=]"
    r"|final top prediction is[ \t]*:?|prediction result[ \t]*[:=])[ \t]*\w"
    r"|^[^\w\n]*top \d+ (?:labels|predictions) (?:are|is)\b"
)
# ... or its accuracy measured over a dataset ("top-1: 60.50%    top-5: 79.80%", "Top1
# accuracy: 0.698", "mAP@0.5: 0.372"): the model ran over every image to be scored
_ACCURACY_RE = re.compile(
    r"(?im)^[^\n]{0,60}?\b(?:top[- ]?[15](?:[ \t]+acc(?:uracy)?)?|mAP(?:@[\d.:]+)?)[ \t]*[:=][ \t]*"
    r"\d{1,3}(?:\.\d+)?[ \t]*%?(?=[ \t]|$)"
)
# ... or a prompt and the model's response under it ("prompt: What is the meaning of life?"
# then "response: ...", RyzenAI-SW's run_awq.py; "You: ..." then "Assistant: ...")
_ANSWERED_RE = re.compile(
    r"(?im)^[ \t]*(?:prompt|you|user|question)[ \t]*:[ \t]*\S[^\n]*\n"
    r"(?:[^\n]*\n){0,2}?[ \t]*(?:response|assistant|answer)[ \t]*:[ \t]*\S"
)
_AIE_RE = re.compile(
    r"\b(?:AIE|IPU)\b|Vitis ?AI|--ep npu\b|--target aie\b"
    # an xclbin, the AI Engine's binary ("Setting xclbin file for STX", ".../AMD_AIE2P_4x4
    # _Overlay.xclbin")
    r"|\bxclbins?\b|\w\.xclbin\b"
)


def _names_npu(body: str) -> bool:
    """The log names the NPU, in the stack's words or the AI Engine's (`_AIE_RE`)."""
    return NPU_RE.search(body) is not None or _AIE_RE.search(body) is not None


def predicted(body: str) -> str | None:
    """The model's answer, printed by the program that ran it on the NPU (above)."""
    found = _PREDICTION_RE.search(body) or _ANSWERED_RE.search(body) or _ACCURACY_RE.search(body)
    if found is None or not _names_npu(body):
        return None
    answer = " ".join(found.group(0).split())
    return f"the model ran to its answer ({answer[:80]})"


# ggml's programs' own timings, printed once their run is done: whisper.cpp's
# whisper_print_timings ("encode time = %8.2f ms / %5d runs (%8.2f ms per run)", and the
# decode and batchd passes) and llama.cpp's llama_perf_context_print ("eval time = ... ms /
# %5d runs"); a pass that ran at least once, in a log that names the NPU (the backend that
# ran it: VitisAI, XDNA), is the model's work done
_GGML_TIMINGS_RE = re.compile(
    r"^(whisper_print_timings|llama_perf_context_print): +(encode|decode|batchd|eval) time = "
    r"+[\d.]+ ms / +(\d+) runs\b",
    re.M,
)


def ggml_timed(body: str) -> str | None:
    """The pass whisper.cpp or llama.cpp ran and timed at its end (above), when the log
    names the NPU."""
    ran = next((m for m in _GGML_TIMINGS_RE.finditer(body) if int(m.group(3)) > 0), None)
    if ran is None or not _names_npu(body):
        return None
    return f"{ran.group(1)}: the model's {ran.group(2)} pass ran {ran.group(3)} times"


def outcome(body: str) -> str | None:
    """The first of these that the log shows, or None."""
    return (
        verdict(body)
        or measured_rate(body)
        or predicted(body)
        or ggml_timed(body)
        or checklist(body)
        or firmware_answered(body)
        or hardware_context(body)
        or run_completed(body)
        or build_finished(body)
        or finished(body)
    )
