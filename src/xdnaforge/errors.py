"""The exception hierarchy and the exit-code table; nothing else.

Exit codes follow doit: 0 ok, 1 a step failed, 2 internal error (a bug), 3 invalid
configuration or environment, 128 + the signal when interrupted (130 Ctrl-C, 143 SIGTERM).
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BUG = 2
EXIT_CONFIG = 3
EXIT_INTERRUPTED = 130


class XdnaforgeError(Exception):
    """Base of every error the tool expects; carries an exit code and an optional hint."""

    exit_code = EXIT_FAILED

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\nhint: {self.hint}"
        return self.message


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """One thing wrong in a configuration file, with where it is."""

    source: str
    line: int
    column: int
    key_path: str
    message: str
    hint: str | None = None

    def render(self) -> str:
        where = f"{self.source}:{self.line}:{self.column}"
        key = f" {self.key_path}:" if self.key_path else ""
        text = f"{where}:{key} {self.message}"
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text


class ConfigError(XdnaforgeError):
    """Recipes, matrices, patch series or site.yaml are wrong; every problem is listed."""

    exit_code = EXIT_CONFIG

    def __init__(self, problems: list[Problem] | tuple[Problem, ...]) -> None:
        ordered = sorted(problems, key=lambda p: (p.source, p.line, p.column, p.key_path))
        self.problems = tuple(ordered)
        count = len(ordered)
        noun = "problem" if count == 1 else "problems"
        lines = [p.render() for p in ordered]
        lines.append(f"{count} {noun} in the configuration; nothing was run.")
        super().__init__("\n".join(lines))


class UsageError(XdnaforgeError):
    """The command line asked for something that does not exist (an unknown target, ...)."""

    exit_code = EXIT_CONFIG


class ToolNotFound(XdnaforgeError):
    """An external program the step needs is not on PATH."""

    exit_code = EXIT_CONFIG


class StageFailed(XdnaforgeError):
    """A stage could not complete for a reason the user can act on."""

    exit_code = EXIT_FAILED


class Interrupted(BaseException):
    """SIGINT or SIGTERM reached xdnaforge; what ran was stopped (`stopped` says what and how).

    A BaseException, as KeyboardInterrupt is: doit's runner and our adapters catch Exception,
    and an interruption must pass through them (and through the nested doit of `doit build`)
    to the one place that prints it and exits with 128 + the signal number.
    """

    def __init__(self, signum: int, stopped: str = "") -> None:
        super().__init__(signum, stopped)
        self.signum = signum
        self.stopped = stopped
        self.what = ""  # the stage that was running, once known ("build-xrt synthetic")

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum
