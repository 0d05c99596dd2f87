"""The man page xdnaforge(1), in roff, from the same text as `TASK --help` (actions/helppage.py
and dodo.py's options); the shipped man/xdnaforge.1 is this output."""

from __future__ import annotations

from types import ModuleType

import xdnaforge
from xdnaforge.actions import helppage
from xdnaforge.cli import tasklist


def _roff(text: str) -> str:
    """Text safe in a roff line: backslashes doubled, a leading dot or quote escaped."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text[:1] in (".", "'") else text


def render(dodo: ModuleType) -> str:
    lines = [
        f'.TH XDNAFORGE 1 "" "xdnaforge {xdnaforge.__version__}" "User Commands"',
        ".SH NAME",
        "xdnaforge \\- build, audit, install and validate AMD NPU userspace from pinned recipes",
        ".SH SYNOPSIS",
        ".B xdnaforge",
        "[\\fB\\-C\\fR \\fIPROJECT_DIR\\fR] \\fITASK\\fR [\\fIoptions\\fR]",
        ".SH DESCRIPTION",
        "Runs the doit tasks of the xdnaforge project (the same as \\fBdoit\\fR \\fITASK\\fR in "
        "the checkout). The project directory is \\fB\\-C\\fR, else XDNAFORGE_PROJECT_DIR, else "
        "the current directory when it holds recipes/.",
        ".SH TASKS",
    ]
    for command in tasklist.commands(dodo):
        page = helppage.render(command.name, command.doc, command.params, "xdnaforge")
        lines += [".SS " + command.name, _roff(command.doc), ".nf"]
        lines += [_roff(line) for line in page.splitlines()[2:]]
        lines.append(".fi")
    lines += [
        ".SH EXIT STATUS",
        "0 done, or a preview without \\-\\-yes; 1 a stage failed; 2 a bug; 3 bad configuration, "
        "an unknown target or a missing tool; 130 and 143 stopped by SIGINT and SIGTERM.",
        ".SH SEE ALSO",
        "README.md, docs/tasks.md, docs/troubleshooting.md, \\fBdoit\\fR(1)",
    ]
    return "\n".join(lines) + "\n"
