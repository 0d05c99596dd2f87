"""A live one-line progress display for long steps: stage, elapsed time, last log line.

Only on a terminal (and never with NO_COLOR's cousin TERM=dumb); elsewhere silent, since
logs already hold every line.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.shown = 0.0
        self.live = self.stream.isatty() and os.environ.get("TERM") != "dumb"

    def elapsed(self) -> str:
        seconds = int(time.monotonic() - self.started)
        return f"{seconds // 60:02d}:{seconds % 60:02d}"

    def update(self, line: str) -> None:
        now = time.monotonic()
        if not self.live or now - self.shown < 0.1:
            return
        self.shown = now
        width = shutil.get_terminal_size().columns
        text = f"[{self.label} {self.elapsed()}] {line.strip()}"
        self.stream.write("\r\033[K" + text[: width - 1])
        self.stream.flush()

    def done(self, outcome: str) -> None:
        if self.live:
            self.stream.write("\r\033[K")
        self.stream.write(f"[{self.label} {self.elapsed()}] {outcome}\n")
        self.stream.flush()
