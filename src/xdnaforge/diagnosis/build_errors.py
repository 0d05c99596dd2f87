"""What a build log says across its lines: which compiler built it, CMake's error blocks
(diagnosis/cmake_errors.py), kbuild's check that an out-of-tree module is compiled by the
kernel's own compiler, and the static checkers' reports on the driver's code (Smatch, the
kernel test robot).

Pure. Read from the tools' own output formats: kbuild's `warning: the compiler differs from
the one used to build the kernel` with `The kernel was built by:` and `You are using:` (the
top Makefile of Linux, for external modules); CMake's `The CXX compiler identification is
GNU 15.1.1`, `gcc version 15.1.1` (gcc -v) and GCC's drivers' own prefixes (`cc1plus:`).
What these say becomes `xdnaforge: ...` lines that knowledge.yaml entries match
(findings), or fills the `{compiler}` of a build diagnosis (complete); the causes and fixes
stay in the knowledge base. What a line alone names (a header, a symbol, a library, a
warning flag) is read by the entries' signatures, and its package by build_log.py.

A build's log (`building`) is one where a build tool printed its own lines: CMake's
configure messages (`-- Configuring done`, `-- Build files have been written to`, cmake.cxx
and cmGlobalGenerator), its makefile generator's progress (`[ 42%] Building CXX object`,
`Built target`, `Scanning dependencies of target`), CPack's (`CPack: ` before every line,
cmCPackLog), make's own (`make[2]: Entering directory`, `make: *** [...] Error 1`,
GNU make's main.c and remake.c), ninja's status before CMake's `Building CXX object`, kbuild's
quiet commands (`  CC [M]  `, scripts/Makefile.build), pip's install steps (`Collecting `,
`Building wheel for `, pip/_internal), meson's `Build started`, MSBuild's `Build FAILED.`;
an error line after them that no entry names is a step of that build failing.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterable

from xdnaforge.diagnosis.cmake_errors import cmake_errors, describe, unprefixed_lines
from xdnaforge.diagnosis.knowledge import Diagnosis

_BUILDING_RE = re.compile(
    r"^(?:-- (?:Configuring done|Generating done|Build files have been written to: |The (?:C|CXX)"
    r" compiler identification is )"
    r"|\[ {0,2}\d{1,3}%\] (?:Building \w+ object |Linking \w+ |Built target |Generating )"
    r"|Scanning dependencies of target "
    r"|CPack: "
    r"|make(?:\[\d+\])?: (?:Entering directory|Leaving directory|\*\*\* )"
    r"|\[\d+/\d+\] (?:Building \w+ object|Linking \w+ )"
    r"|  (?:CC|LD|AR|CXX) \[M\]  "
    r"|Collecting \S|Building wheel for \S|Installing collected packages: "
    r"|Build started at "
    r"|Build FAILED\.)",
    re.M,
)


def building(body: str, line: str) -> bool:
    """Whether a build tool's own line (module doc) comes before `line` in the log."""
    at = body.find(line.strip())
    head = body if at < 0 else body[:at]
    return _BUILDING_RE.search(head) is not None


# kbuild, for external modules (Linux's top Makefile)
_KBUILD_DIFFERS = "the compiler differs from the one used to build the kernel"
_KERNEL_BUILT_BY_RE = re.compile(r"^\s*The kernel was built by: (?P<cc>.+?)\s*$")
_YOU_ARE_USING_RE = re.compile(r"^\s*You are using:\s+(?P<cc>.+?)\s*$")
# which compiler: CMake's identification, gcc -v, and what only GCC's or Clang's output shows
_IDENTIFIED_RE = re.compile(
    r"The CXX compiler identification is (?P<id>GNU|Clang|AppleClang|IntelLLVM) (?P<v>[\d.]+)"
    r"|The C compiler identification is (?P<cid>GNU|Clang|AppleClang|IntelLLVM) (?P<cv>[\d.]+)"
)
_GCC_VERSION_RE = re.compile(r"^gcc version (?P<v>\d+\.\d+(?:\.\d+)?)", re.M)
_DRIVER_RE = re.compile(
    r"^(?P<driver>cc1plus|cc1): (?:all warnings being treated as errors|error|warning)", re.M
)
_CLANG_WERROR_RE = re.compile(r"\[-Werror,-W[\w+-]+\]")
# a compile command make echoed: "i586-slackware-linux-gcc -DHAVE_CONFIG_H ... -c -o x.o x.c"
_COMMAND_RE = re.compile(
    r"^(?:\S*/)?(?P<cc>(?:[\w.]+-)*(?:gcc|g\+\+|clang\+\+|clang)(?:-\d+(?:\.\d+)?)?) .*\s-c\s",
    re.M,
)
_NAMES = {"GNU": "GCC", "Clang": "Clang", "AppleClang": "Apple Clang", "IntelLLVM": "Intel oneAPI"}
_DRIVERS = {"cc1plus": "GCC's C++ compiler (cc1plus)", "cc1": "GCC's C compiler (cc1)"}


def compiler(body: str) -> str:
    """The compiler a build log shows, as it says it ("GCC 15.1.1 (CMake: The CXX compiler
    identification is GNU 15.1.1)"); "" when the log does not say."""
    found = _IDENTIFIED_RE.search(body)
    if found:
        ident, version = (
            found.group("id") or found.group("cid"),
            found.group("v") or found.group("cv"),
        )
        return f"{_NAMES[ident]} {version} (CMake: {found.group(0)})"
    using = kbuild_compilers(body)
    if using is not None:
        return f"{using[0]} (kbuild: You are using)"
    version = _GCC_VERSION_RE.search(body)
    if version:
        return f"GCC {version.group('v')} (gcc version {version.group('v')})"
    driver = _DRIVER_RE.search(body)
    if driver:
        return _DRIVERS[driver.group("driver")]
    if _CLANG_WERROR_RE.search(body):
        return "Clang ([-Werror,-W...] is Clang's format)"
    command = _COMMAND_RE.search(body)
    if command:
        return f"{command.group('cc')}, the compiler of the log's compile command"
    return ""


def kbuild_compilers(body: str) -> tuple[str, str] | None:
    """(the compiler in use, the kernel's) when kbuild warned that they differ."""
    if _KBUILD_DIFFERS not in body:
        return None
    kernel = using = ""
    for line in unprefixed_lines(body[body.index(_KBUILD_DIFFERS) :])[1:6]:
        built = _KERNEL_BUILT_BY_RE.match(line)
        kernel = built.group("cc") if built else kernel
        used = _YOU_ARE_USING_RE.match(line)
        using = used.group("cc") if used else using
    return (using, kernel) if using and kernel else None


# the kernel test robot's report (lkp-tests' mail to a patch's author): its compiler output
# under "All warnings (new ones prefixed by >>):", each new one marked ">> " before GCC's or
# clang's "<file>:<line>:<col>: warning: <text> [-W<flag>]"
_ROBOT_WARNINGS = "All warnings (new ones prefixed by >>):"
# (a reader of a mail's quotes sees the line without its mark: then the report's first one)
_ROBOT_NEW_WARNING_RE = re.compile(
    r"^(?:>> )?([\w./+-]+:\d+(?::\d+)?): warning: ([^\n]{1,200}?)\s*$", re.M
)


def robot_warning(body: str) -> str | None:
    """The first new warning of a kernel test robot's warnings report ('<file>:<line>:
    <text>'), None in any other log. The robot reports it because the patch added it: the
    tree is built with -Werror (CONFIG_WERROR) by many, and the maintainers take it as a
    defect to fix."""
    at = body.find(_ROBOT_WARNINGS)
    if at < 0:
        return None
    warnings = list(itertools.islice(_ROBOT_NEW_WARNING_RE.finditer(body, at), 50))
    new = next((w for w in warnings if w.group(0).startswith(">> ")), None)
    first = new or (warnings[0] if warnings else None)
    return f"{first.group(1)}: {first.group(2)}" if first else None


# Smatch, the kernel's static checker (smatch.h: sm_printf("%s:%d %s() ", file, line,
# function) before "warn: ", "error: " or "info: " and the message), on one line as it
# prints it, or in two as a bug report mails it (the place, then the message, indented)
_SMATCH_RE = re.compile(
    r"^[ \t]*(?P<where>[\w./-]{1,200}\.[ch]:\d+ [\w]{1,100}\(\))(?:[ \t]+|[ \t]*\n[ \t]*)"
    r"(?P<level>warn|error): (?P<text>\S[^\n]{0,300})$",
    re.M,
)


def smatch_warning(body: str) -> str | None:
    """Smatch's first warning or error ('<file>:<line> <function>() warn: <text>'), None in
    a log without one."""
    if "warn: " not in body and "error: " not in body:
        return None
    found = _SMATCH_RE.search(body)
    if found is None:
        return None
    return f"{found.group('where')} {found.group('level')}: {found.group('text').strip()}"


def findings(body: str) -> list[str]:
    """`xdnaforge: ...` lines for what a build log shows across lines: each CMake error
    block a reader knows (a failed find_package or pkg_check_modules, a missing
    subdirectory, a removed policy version, a CMake too old, no compiler, an unknown
    command, the project's own message), Smatch's warning, the kernel test robot's report of
    a new warning, and kbuild's two compilers when they differ."""
    lines = []
    if "CMake Error at " in body:
        for error in cmake_errors(body):
            described = describe(error, body)
            if described is not None:
                lines.append(f"xdnaforge: CMake: {described}")
    checked = smatch_warning(body)
    if checked is not None:
        lines.append(f"xdnaforge: the Smatch static checker reports ({checked})")
    warned = robot_warning(body)
    if warned is not None:
        lines.append(f"xdnaforge: the kernel test robot reports a new compiler warning ({warned})")
    compilers = kbuild_compilers(body)
    if compilers is not None:
        lines.append(
            f"xdnaforge: kbuild: the module is compiled by {compilers[0]}; "
            f"the kernel was built by {compilers[1]}"
        )
    return list(dict.fromkeys(lines))


def complete(diagnoses: Iterable[Diagnosis], body: str) -> list[Diagnosis]:
    """The diagnoses with `{compiler}` filled from the log (or said not to be named)."""
    diagnoses = list(diagnoses)
    if not any("{compiler}" in d.cause or "{compiler}" in d.fix for d in diagnoses):
        return diagnoses
    named = compiler(body) or "the log does not name the compiler"
    return [
        dataclasses.replace(
            d, cause=d.cause.replace("{compiler}", named), fix=d.fix.replace("{compiler}", named)
        )
        if "{compiler}" in d.cause or "{compiler}" in d.fix
        else d
        for d in diagnoses
    ]
