"""Progress of long steps: the stage, elapsed time and what it is doing, as a live line on a
terminal and as a line every 30 s elsewhere (a CI log must show the run is alive).

`Progress` is one long step (a build step's output feeds `update`); `ticking` is what
process/run.py wraps every command in, so a fetch, a download, debootstrap or rebuild-check's
second build says it is alive without its stage doing anything. A ticker thread keeps the
clock moving when the command prints nothing. Only the terminal (or the log stream) is
written; nothing else.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import PurePath
from typing import Any, TextIO

INTERVAL_S = 30.0  # elsewhere than a terminal: one line this often
LIVE_REFRESH_S = 1.0  # on a terminal: the clock moves this often
QUIET_S = 5.0  # a command shorter than this shows nothing at all


def is_live(stream: TextIO) -> bool:
    """A terminal that can redraw a line (not TERM=dumb)."""
    return stream.isatty() and os.environ.get("TERM") != "dumb"


def clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60:02d}:{whole % 60:02d}"


def status_line(label: str, seconds: float, doing: str, width: int | None = None) -> str:
    """`[label mm:ss] doing`, cut to `width` at a word boundary (never inside a word)."""
    text = f"[{label} {clock(seconds)}] {doing.strip()}".rstrip()
    if width is None or len(text) <= width:
        return text
    cut = text[: max(width - 1, 0)]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut + "…"


class Progress:
    """One long step. On a terminal a redrawn line; elsewhere a line every INTERVAL_S."""

    def __init__(
        self,
        label: str,
        stream: TextIO | None = None,
        *,
        interval: float = INTERVAL_S,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.now = now
        self.started = now()
        self.shown = float("-inf")
        self.interval = interval
        self.live = is_live(self.stream)
        self.doing = "starting"
        self.lock = threading.Lock()
        self.closed = False

    def elapsed(self) -> str:
        return clock(self.now() - self.started)

    def _line(self) -> str:
        width = shutil.get_terminal_size().columns - 1 if self.live else None
        return status_line(self.label, self.now() - self.started, self.doing, width)

    def update(self, line: str) -> None:
        """What it is doing now (a line of the step's output, a phase)."""
        if line.strip():
            self.doing = line.strip()
        self.tick()

    def tick(self) -> None:
        """Show the line if it is time: at most every 0.1 s live, every `interval` elsewhere."""
        with self.lock:
            now = self.now()
            if self.closed or now - self.shown < (0.1 if self.live else self.interval):
                return
            self.shown = now
            if self.live:
                self.stream.write("\r\033[K" + self._line())
            else:
                self.stream.write(self._line() + "\n")
            self.stream.flush()

    def done(self, outcome: str) -> None:
        with self.lock:
            self.closed = True
            if self.live:
                self.stream.write("\r\033[K")
            self.stream.write(f"[{self.label} {self.elapsed()}] {outcome}\n")
            self.stream.flush()

    def clear(self) -> None:
        """End without a line of its own (a short command): wipe the live line if drawn."""
        with self.lock:
            self.closed = True
            if self.live and self.shown != float("-inf"):
                self.stream.write("\r\033[K")
                self.stream.flush()


@contextlib.contextmanager
def ticker(progress: Progress, every: float | None = None) -> Iterator[Progress]:
    """Keep `progress` ticking on a thread while the block runs (the clock moves even when the
    command prints nothing)."""
    stop = threading.Event()
    period = every if every is not None else (LIVE_REFRESH_S if progress.live else 1.0)

    def beat() -> None:
        while not stop.wait(period):
            progress.tick()

    thread = threading.Thread(target=beat, name=f"progress {progress.label}", daemon=True)
    thread.start()
    try:
        yield progress
    finally:
        stop.set()
        thread.join()


def command_label(argv: tuple[str, ...] | list[str]) -> str:
    """What a command is, in two words: `git fetch`, `debootstrap`, `apt-get download`."""
    words = [PurePath(argv[0]).name] if argv else ["command"]
    words += [a for a in argv[1:] if not a.startswith("-") and "/" not in a and "=" not in a][:1]
    return " ".join(words)


@contextlib.contextmanager
def ticking(argv: list[str], stream: TextIO | None = None) -> Iterator[None]:
    """Around a command run.run() starts: after QUIET_S, its label and elapsed time (live on a
    terminal, every INTERVAL_S elsewhere), and how long it took once it is done."""
    if os.environ.get("XDNAFORGE_PROGRESS") == "0":
        yield
        return
    progress = Progress(command_label(argv), stream)
    progress.doing = "running"
    # the first line only after QUIET_S: the many short commands stay silent
    progress.shown = progress.now() + QUIET_S - (0.1 if progress.live else progress.interval)
    outcome = "stopped"
    try:
        with ticker(progress):
            yield
        outcome = "done"
    finally:
        if progress.now() - progress.started >= QUIET_S:
            progress.done(outcome)
        else:
            progress.clear()


class RootPhases(Progress):
    """A root file system being made: debootstrap's and mmdebstrap's phases, with how many
    packages each per-package phase has reached (`retrieving 57 packages: libc6`)."""

    VERBS = ("Retrieving", "Validating", "Extracting", "Unpacking", "Configuring", "Installing")

    def __init__(self, label: str, stream: TextIO | None = None, **kwargs: Any) -> None:
        super().__init__(label, stream, **kwargs)
        self.counts: dict[str, int] = {}

    def update(self, line: str) -> None:
        self.doing = self.phase(line) or self.doing
        self.tick()

    def phase(self, line: str) -> str | None:
        """What a line of the tool's output says it is doing; None for other lines."""
        text = line.strip()
        if not text.startswith(("I: ", "W: ", "E: ")):
            return None
        words = text[3:].split()
        if len(words) >= 2 and words[0] in self.VERBS and not words[1][0].isupper():
            # a package's line: `I: Retrieving libc6 2.41-12`
            verb = words[0].lower()
            self.counts[verb] = self.counts.get(verb, 0) + 1
            return f"{verb} {self.counts[verb]} packages: {words[1].rstrip('.')}"
        return text[3:].rstrip(".")
