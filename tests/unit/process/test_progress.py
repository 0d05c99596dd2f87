"""Progress: a line every 30 s off a terminal, cut at a word, the clock kept by a ticker."""

from __future__ import annotations

import io
import time

from xdnaforge.process.progress import Progress, RootPhases, command_label, status_line, ticker


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_off_a_terminal_a_line_every_interval_with_stage_elapsed_and_what() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress("env ubuntu-26.04", out, now=clock)
    progress.update("I: Retrieving Packages")
    for second in range(1, 95):
        clock.now = float(second)
        progress.update(f"I: Validating package {second}")
    lines = out.getvalue().splitlines()
    assert lines == [
        "[env ubuntu-26.04 00:00] I: Retrieving Packages",
        "[env ubuntu-26.04 00:30] I: Validating package 30",
        "[env ubuntu-26.04 01:00] I: Validating package 60",
        "[env ubuntu-26.04 01:30] I: Validating package 90",
    ]


def test_a_line_is_cut_at_a_word_never_inside_one() -> None:
    line = status_line("fetch", 5, "checking out xrt/src/runtime_src/core/common", 30)
    assert line == "[fetch 00:05] checking out…"
    assert len(line) <= 30


def test_the_ticker_moves_the_clock_while_nothing_is_printed() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress("git fetch", out, interval=0.0, now=clock)
    progress.doing = "running"
    with ticker(progress, every=0.01):
        clock.now = 61.0
        deadline = time.monotonic() + 10
        while "01:01" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.005)
    progress.done("done")
    assert "[git fetch 01:01] running" in out.getvalue()
    assert out.getvalue().endswith("[git fetch 01:01] done\n")


def test_a_command_is_named_by_its_program_and_subcommand() -> None:
    assert command_label(["/usr/bin/git", "-c", "x=y", "fetch", "origin"]) == "git fetch"
    assert command_label(["debootstrap", "--variant=minbase", "forky", "/r"]) == "debootstrap forky"


def test_a_root_s_phases_count_the_packages_each_has_reached() -> None:
    out, clock = io.StringIO(), Clock()
    phases = RootPhases("env ubuntu-26.04", out, now=clock)
    for line in (
        "I: Retrieving InRelease",
        "I: Retrieving libc6 2.41-12",
        "I: Retrieving zlib1g 1:1.3",
        "some other output",
        "I: Extracting libc6...",
    ):
        clock.now += 31
        phases.update(line)
    assert out.getvalue().splitlines() == [
        "[env ubuntu-26.04 00:31] Retrieving InRelease",
        "[env ubuntu-26.04 01:02] retrieving 1 packages: libc6",
        "[env ubuntu-26.04 01:33] retrieving 2 packages: zlib1g",
        "[env ubuntu-26.04 02:04] retrieving 2 packages: zlib1g",
        "[env ubuntu-26.04 02:35] extracting 1 packages: libc6",
    ]
