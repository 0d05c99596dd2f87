"""The error records Windows PowerShell prints when a command stops on an error. A pure
parser; nothing is run here.

PowerShell 5.1's default view of an error (ErrorView NormalView) is the error's message,
then where it was raised and the code there, then its category and id:

    OpenVINO installed, but NPU was not available to the portable runtime.
    At C:\\src\\setup.ps1:128 char:28
    + ... { throw "OpenVINO installed, but NPU was not available ..."
    +       ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
        + CategoryInfo          : OperationStopped: (...) [], RuntimeException
        + FullyQualifiedErrorId : OpenVINO installed, but NPU was not available ...

(`At line:2 char:1` where the command was typed). The message is the script's or cmdlet's
own word that it failed; the console wraps a long one at its width, so the lines before its
last that fill a console's line (79 characters or more) are its start. A native program's
standard error shows in the same form with the id `NativeCommandError`, whatever it wrote
there (a warning too): that one says nothing.
"""

from __future__ import annotations

import re

_RECORD_RE = re.compile(
    # (the message ends at a non-blank: one split of its line, never each of them in turn;
    # the place may be rejoined with its code line where a paste's wrapping was undone)
    r"^(?P<message>[^\n]*\S)[ \t]*\n[ \t]*At (?:line:\d+|\S[^\n]*?:\d+) char:\d+[ \t]*\n?"
    r"(?:[ \t]*\+[^\n]*\n){1,4}?"
    r"[ \t]*\+ CategoryInfo[ \t]*:[^\n]*\n(?:[ \t]*[^+\s][^\n]*\n){0,2}"  # (its wrapped rest)
    r"[ \t]*\+ FullyQualifiedErrorId[ \t]*:[ \t]*(?P<id>[^\n]*)",
    re.M,
)


_CONSOLE = 79  # a line the console wrapped is as wide as it: 80 columns and more
_WRAPPED = 3  # lines of a message before its last, at most


def stopped_errors(text: str) -> list[str]:
    """The messages of the error records in `text` (module doc), in order, but those of a
    native program's standard error."""
    if "FullyQualifiedErrorId" not in text:
        return []
    found = []
    for match in _RECORD_RE.finditer(text):
        if match.group("id").strip().startswith("NativeCommandError"):
            continue
        before = text[max(0, match.start() - _WRAPPED * 4096) : match.start()]
        head = [line.strip() for line in _wrapped_start(before.splitlines()[-_WRAPPED:])]
        found.append(" ".join([*head, match.group("message").strip()]))
    return found


def _wrapped_start(before: list[str]) -> list[str]:
    """The lines right before a message's last that a console wrapped it from."""
    start: list[str] = []
    for line in reversed(before):
        if len(line) < _CONSOLE:
            break
        start.insert(0, line)
    return start
