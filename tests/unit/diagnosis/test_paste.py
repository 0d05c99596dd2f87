"""What a copy adds to a log (terminal escapes, HTML references, quotes around a line, line
numbers, a service column, an indentation, a terminal's line breaks) is taken off before the
log is read: the shapes of tests/fixtures/shapes, copied as users copy them, get the
verdicts they get as printed."""

from __future__ import annotations

import html
import quopri
from collections.abc import Callable

import pytest

from tests.conftest import REPO
from xdnaforge.diagnosis.log_verdict import judge
from xdnaforge.diagnosis.paste import clean, unpasted

SHAPES = REPO / "tests/fixtures/shapes"
LOGS = [
    "xrt-smi-2.21-validate-text-windows.txt",  # healthy, by its report's structure
    "example-noop-passed.txt",
    "xrt-smi-2.21-validate-text-failed.txt",
    "cmake-boost-not-found.txt",
    "flm-validate-old-driver.txt",
]


def lines(text: str) -> list[str]:
    return [line for _, line in unpasted(enumerate(text.splitlines()))]


def outcome(text: str) -> tuple[str, str | None, tuple[str, ...]]:
    verdict = judge(text)
    return verdict.status, verdict.evidence, tuple(d.code for d in verdict.diagnoses)


def wrapped(text: str, width: int) -> str:
    """The text as a terminal of that width shows it: every longer line broken there."""
    out = []
    for line in text.split("\n"):
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return "\n".join(out)


def numbered(form: str, first: int) -> Callable[[str], str]:
    def copy(text: str) -> str:
        return "\n".join(form.format(n, line) for n, line in enumerate(text.split("\n"), first))

    return copy


COPIES: dict[str, Callable[[str], str]] = {
    "line numbers": numbered("{:4d}  {}", 1),
    "numbers and a bar": numbered("{} | {}", 7),
    "compose column": lambda t: "\n".join(f"npu-1  | {line}" for line in t.split("\n")),
    "code block": lambda t: "\n".join(f"    {line}" for line in t.split("\n")),
    "tab": lambda t: "\n".join(f"\t{line}" for line in t.split("\n")),
    "html": html.escape,
    "colours": lambda t: "\n".join(f"\x1b[1;31m{line}\x1b[0m" for line in t.split("\n")),
    "wrapped": lambda t: wrapped(t, 80),  # a terminal that broke its lines at its width
}


@pytest.mark.parametrize("copy", sorted(COPIES))
@pytest.mark.parametrize("name", LOGS)
def test_a_copied_log_reads_as_printed(name: str, copy: str) -> None:
    text = (SHAPES / name).read_text()
    assert outcome(COPIES[copy](text)) == outcome(text)


def test_escapes_and_references_are_taken_off_a_line() -> None:
    gcc = "\x1b[01m\x1b[Kfoo.c:3:1:\x1b[m\x1b[K \x1b[01;31merror: \x1b[mx"
    assert clean(gcc) == "foo.c:3:1: error: x"
    assert clean("^[[31mFAILED^[[0m: a") == "FAILED: a"  # cat -v
    assert clean("\u241b[32mPASSED\u241b[0m") == "PASSED"
    assert clean("\x1b]0;title\x07ok") == "ok"  # a terminal title
    assert clean("std::vector&lt;int&gt; &amp;&amp; &#39;x&#39;") == "std::vector<int> && 'x'"
    # text that only looks like a reference keeps its letters
    assert clean("R&D; a && b; &unknown;") == "R&D; a && b; &unknown;"


def test_the_quotes_around_a_line_quoted_whole_are_taken_off() -> None:
    error = "[ERROR]  Failed to load model: Failed to create context virtual (0xc01e0009)"
    for quoted in (f'"{error}"', f"`{error}`", f"\u201c{error}\u201d"):
        assert clean(quoted + "\n") == error + "\n"
        assert outcome(quoted) == outcome(error)
    # quotes that belong to the line stay: JSON, a fence, a quote only opened
    for line in ('"status": "passed"', "```", '"', '""', '"Error: x', "`a` and `b`"):
        assert clean(line) == line


def test_a_prefix_only_some_lines_carry_is_the_logs_own() -> None:
    text = "  indented first\nnot indented\n  indented again"
    assert lines(text) == text.splitlines()
    # numbers that do not count up by one are the log's (a column of figures)
    figures = "10 ms first\n25 ms second\n40 ms third"
    assert lines(figures) == figures.splitlines()


def test_a_log_of_one_line_keeps_its_prefix() -> None:
    # nothing to compare it with: "1 passed" is a runner's summary, not a line number
    assert lines("1 passed in 0.2s") == ["1 passed in 0.2s"]


def test_the_prefix_is_read_on_the_first_lines_and_taken_off_everywhere() -> None:
    text = "\n".join(f"{n}: line {n}" for n in range(1, 101))
    assert lines(text) == [f"line {n}" for n in range(1, 101)]
    service = ["lemonade-1  | Starting", "lemonade-1  |", "lemonade-1  | Ready"]
    assert lines("\n".join(service)) == ["Starting", "", "Ready"]


def test_a_commands_output_pasted_as_shell_comments_under_it_reads_as_printed() -> None:
    text = (
        "flm validate\n# [Linux]  NPU: /dev/accel/accel0 with 8 columns\n"
        "# [Linux]  amdxdna version: 0.7"
    )
    assert lines(text) == [
        "flm validate",
        "[Linux]  NPU: /dev/accel/accel0 with 8 columns",
        "[Linux]  amdxdna version: 0.7",
    ]
    assert judge(text + "\n# [Linux]  NPU FW Version: 1.1.2.65\n").status == "healthy"
    # a script's own comments (it starts with one), or output of which only some lines are
    # marked, keep their marks
    script = "#!/bin/sh\n# build it\n# then run it"
    assert lines(script) == script.splitlines()
    some = "make\n# a note\nmake: *** [all] Error 1"
    assert lines(some) == some.splitlines()


def test_a_cis_stamp_before_a_programs_own_stamp_is_taken_off_with_it() -> None:
    lines_ = ["Failed Tests (1):", "  AIE :: npu-xrt/a/run.lit", "", "Testing Time: 1.0s"]
    lines_ += ["  Passed     : 3", "  Failed     : 1"]
    once = "\n".join("[2025-12-01 10:00:00.123] " + line for line in lines_) + "\n"
    twice = "\n".join("2025-01-09T13:41:14.1234567Z " + line for line in once.splitlines())
    assert [d.code for d in judge(once).diagnoses] == ["test-run-failed"]
    assert [d.code for d in judge(twice + "\n").diagnoses] == ["test-run-failed"]


def test_a_journal_keeps_its_prefix() -> None:
    journal = "\n".join(
        f"Dec 01 10:00:0{n} host kernel: amdxdna 0000:c5:00.1: message {n}" for n in range(5)
    )
    assert lines(journal) == journal.splitlines()


def test_a_log_copied_out_of_a_mails_quoted_printable_text_is_decoded() -> None:
    printed = [
        "[    4.254317] amdxdna 0000:c4:00.1: enabling device (0000 -> 0002)",
        "[    4.260408] r8169 0000:bf:00.0 eth0: RTL8126A, 9c:bf:0d:00:e0:8d, XID 649, IRQ 186",
        "[    4.262344] r8169 0000:bf:00.0 eth0: jumbo features [frames: 9194 bytes, tx ok]",
        "[    4.356598] [drm] Initialized amdxdna_accel_driver 0.0.0 for 0000:c4:00.1 on minor 0",
        "a=b",
    ]
    encoded = quopri.encodestring("\n".join(printed).encode()).decode()
    assert max(len(line) for line in encoded.splitlines()) <= 76
    assert sum(line.endswith("=") for line in encoded.splitlines()) >= 2
    assert lines(encoded) == printed
    assert outcome(encoded) == outcome("\n".join(printed))
    # a log whose lines end in "=" for their own reasons is not decoded
    own = "CFLAGS=\nLDFLAGS=\nx=3D\n"
    assert lines(own) == ["CFLAGS=", "LDFLAGS=", "x=3D"]


def test_lines_a_terminal_broke_at_its_width_are_joined_back() -> None:
    line = (
        "amdxdna 0000:c4:00.1: [drm] *ERROR* aie2_check_protocol: Incompatible firmware "
        "protocol major 7 minor 2"
    )
    log = f"{line}\namdxdna 0000:c4:00.1: aie2_hw_start: firmware is not alive\n"
    assert lines(wrapped(log, 80)) == lines(log)
    # lines of one width that are the log's own stay apart: a journal's, a separator, a
    # table's rows
    journal = "".join(
        f"Dec 01 10:00:0{n} host kernel: amdxdna 0000:c5:00.1: m {n}\n" for n in range(5)
    )
    table = "|" + "-" * 78 + "|\n|" + "x" * 78 + "|\n|" + "y" * 78 + "|\n"
    # records a program padded to one width: each closes before the next opens
    said = "'And so my fellow Americans ask not what your country can do for you.'"
    records = f"[CPU reference]    {said}\n[NPU bf16 encoder] {said}\nMATCH\n"
    separator = "-" * 80 + "\nTest 1 [0000:c5:00.1]     : latency\n" + "=" * 80
    for text in (journal, separator, table, records):
        assert lines(text) == text.rstrip("\n").split("\n")


def test_a_csv_header_as_wide_as_a_terminal_is_no_broken_line() -> None:
    # RyzenAI-SW's operator benchmark CSV (transformers tests): its header happens to be 132
    # characters, a terminal's width, and its rows have as many fields
    header = (
        "M,N,Executetime(ns),run_aie_time(ns),A_copy_time(ns),A_sync_time(ns),B_copy_time(ns),"
        "B_sync_time(ns),C_copy_time(ns),C_sync_time(ns)"
    )
    assert len(header) == 132
    rows = [
        "1.0,11008.0,307500.0,213700.0,2000.0,400.0,1800.0,300.0,1100.0,300.0",
        "128.0,11008.0,1053100.0,488700.0,102200.0,23100.0,81500.0,22500.0,84700.0,27200.0",
    ]
    assert [line for _, line in unpasted(enumerate([header, *rows]))] == [header, *rows]
