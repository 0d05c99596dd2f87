"""What options a build script accepts, read from its `case` arms; pure.

Upstream's build.sh scripts parse options with `case $1 in -nokmod) ...`; xdna-driver 1.4's
has no `-nokmod` and exits "unknown option", so every option a recipe passes is checked
against the pinned script before anything builds, and nothing ever falls back to a build
with the kernel module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_ARM_RE = re.compile(
    r"^\s*\(?\s*((?:\"?-{1,2}[A-Za-z0-9][\w-]*\"?\s*\|\s*)*\"?-{1,2}[A-Za-z0-9][\w-]*\"?)\s*\)"
)
# options that take a value: the value is not an option
VALUE_OPTIONS = frozenset(
    {"-j", "-dir", "-install_prefix", "-cppstd", "-toolchain", "-with-static-boost", "-cmake-flags"}
)


def parse_options(script: str) -> set[str]:
    options = set()
    for line in script.splitlines():
        match = _ARM_RE.match(line)
        if match:
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
