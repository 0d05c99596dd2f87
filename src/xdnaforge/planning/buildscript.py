"""What options a build script accepts, read from its `case` arms; pure.

Upstream's build.sh scripts parse options with `case $1 in -nokmod) ...`; xdna-driver 1.4's
has no `-nokmod` and exits "unknown option", so every option a recipe passes is checked
against the pinned script before anything builds, and nothing ever falls back to a build
with the kernel module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_OPTION = r"\"?-{1,2}[A-Za-z0-9][\w-]*\"?"
# a case arm starts where bash starts one: after `in`, after the `;;`, `;&` or `;;&` that
# ends the previous arm, or at the start of a line; so `-npu) npu=1;; -opt) opt=1;;` on one
# line is two arms
_ARM_RE = re.compile(
    rf"(?:^|;;&?|;&|\bin\b)\s*\(?\s*((?:{_OPTION}\s*\|\s*)*{_OPTION})\s*\)", re.MULTILINE
)
# options that take a value: the value is not an option
VALUE_OPTIONS = frozenset(
    {"-j", "-dir", "-install_prefix", "-cppstd", "-toolchain", "-with-static-boost", "-cmake-flags"}
)


def parse_options(script: str) -> set[str]:
    options = set()
    for match in _ARM_RE.finditer(script):
        for alternative in match.group(1).split("|"):
            options.add(alternative.strip().strip('"'))
    return options


def unknown_options(argv: Sequence[str], accepted: set[str]) -> list[str]:
    """The options in argv[1:] the script does not accept (values of -j etc. skipped)."""
    unknown = []
    skip = False
    for arg in argv[1:]:
        if skip:
            skip = False
            continue
        if arg.startswith("-"):
            if arg not in accepted:
                unknown.append(arg)
            skip = arg in VALUE_OPTIONS
    return unknown
