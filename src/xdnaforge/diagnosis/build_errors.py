"""What a build log says across its lines: which compiler built it, CMake's error blocks
(a failed `find_package` and the file that asked), and kbuild's check that an out-of-tree
module is compiled by the kernel's own compiler.

Pure. Read from the tools' own output formats: CMake's `CMake Error at <file>:<line>
(<command>):` followed by its indented message and `Call Stack (most recent call first):`
(cmake's `cmMessenger`), FindPackageHandleStandardArgs' `Could NOT find <Package>
(missing: <vars>) (found version "<v>")`, config mode's `Could not find a package
configuration file provided by "<Package>" (requested version <v>)` and `Could not find a
configuration file for package "<Package>" that is compatible with requested version
"<v>"` with the versions it `considered but not accepted`; kbuild's `warning: the compiler
differs from the one used to build the kernel` with `The kernel was built by:` and `You
are using:` (the top Makefile of Linux, for external modules); CMake's `The CXX compiler
identification is GNU 15.1.1`, `gcc version 15.1.1` (gcc -v) and GCC's drivers' own
prefixes (`cc1plus:`). What these say becomes `xdnaforge: ...` lines that knowledge.yaml
entries match (findings), or fills the `{compiler}` of a build diagnosis (complete); the
causes and fixes stay in the knowledge base. What a line alone names (a header, a symbol,
a library, a warning flag) is read by the entries' signatures, and its package by
build_log.py.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from xdnaforge.diagnosis.knowledge import Diagnosis

# a CI runner's or an IDE's prefix before the tool's text: "[2023-06-09T18:42:13.630Z] ",
# "[cmake] "
_LEAD_RE = re.compile(r"^\[[^\]\n]{1,40}\] ?")
_CMAKE_ERROR_RE = re.compile(r"^CMake Error at (?P<file>\S+?):(?P<line>\d+) \((?P<command>\w+)\):")
_CALLER_RE = re.compile(r"^\s+(?P<file>\S+?):(?P<line>\d+) \(find_package\)\s*$")
_FPHSA_RE = re.compile(
    r"Could NOT find (?P<package>[\w:.+-]+)(?::| \()\s*missing: ?(?P<missing>[^)]*)\)?"
)
_FOUND_RE = re.compile(r'found (?:suitable )?version "(?P<found>[^"]+)"')
_REQUIRED_RE = re.compile(
    r'(?:Required is at least version|minimum required is) "(?P<wanted>[^"]+)"'
)
_NO_CONFIG_RE = re.compile(
    r'Could not find a package configuration file provided by "(?P<package>[^"]+)"'
    r"(?:\s+\(requested\s+version\s+(?P<version>[^)]+)\))?"
)
_INCOMPATIBLE_RE = re.compile(
    r'Could not find a configuration file for package "(?P<package>[^"]+)" that is\s+'
    r'compatible with requested version "(?P<version>[^"]+)"'
)
_CONSIDERED_RE = re.compile(r"(?P<path>\S+\.cmake), version: (?P<found>\S+)")
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
_MAX_BLOCK = 40  # lines of a CMake message read after its header


def _lines(body: str) -> list[str]:
    return [_LEAD_RE.sub("", line, count=1) for line in body.splitlines()]


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
    for line in _lines(body[body.index(_KBUILD_DIFFERS) :])[1:6]:
        built = _KERNEL_BUILT_BY_RE.match(line)
        kernel = built.group("cc") if built else kernel
        used = _YOU_ARE_USING_RE.match(line)
        using = used.group("cc") if used else using
    return (using, kernel) if using and kernel else None


@dataclasses.dataclass(frozen=True, slots=True)
class CMakeError:
    file: str
    line: int
    command: str
    message: str  # the indented message, joined into one line
    caller: str  # "CMakeLists.txt:76", the find_package call of a module's message


def cmake_errors(body: str) -> list[CMakeError]:
    """Each `CMake Error at <file>:<line> (<command>):` block with its message."""
    lines = _lines(body)
    found = []
    for index, line in enumerate(lines):
        header = _CMAKE_ERROR_RE.match(line)
        if header is None:
            continue
        message: list[str] = []
        caller = ""
        in_stack = False
        for following in lines[index + 1 : index + 1 + _MAX_BLOCK]:
            if following.startswith("Call Stack"):
                in_stack = True
                continue
            if following and not following[0].isspace():
                break
            if in_stack:
                called = _CALLER_RE.match(following)
                caller = f"{called.group('file')}:{called.group('line')}" if called else caller
            elif following.strip():
                message.append(following.strip())
        found.append(
            CMakeError(
                header.group("file"),
                int(header.group("line")),
                header.group("command"),
                " ".join(message),
                caller,
            )
        )
    return found


def _find_package(error: CMakeError) -> str | None:
    """ "find_package(pybind11 2.10.4) failed at python/CMakeLists.txt:75: ..." or None."""
    where = error.caller or (
        f"{error.file}:{error.line}" if error.command == "find_package" else ""
    )
    text = error.message
    missing = _FPHSA_RE.search(text)
    if missing and where:
        wanted = _REQUIRED_RE.search(text)
        found = _FOUND_RE.search(text)
        package = missing.group("package")
        asked = f" {wanted.group('wanted')}" if wanted else ""
        also = f" (found version {found.group('found')})" if found else ""
        missed = " ".join(missing.group("missing").split())
        return f"find_package({package}{asked}) failed at {where}: missing {missed}{also}"
    incompatible = _INCOMPATIBLE_RE.search(text)
    if incompatible and where:
        package, version = incompatible.group("package"), incompatible.group("version")
        versions = sorted({m.group("found") for m in _CONSIDERED_RE.finditer(text)})
        only = f"only version {', '.join(versions)} found" if versions else "no compatible version"
        return f"find_package({package} {version}) failed at {where}: {only}"
    config = _NO_CONFIG_RE.search(text)
    if config and where:
        package = config.group("package")
        version = f" {config.group('version').strip()}" if config.group("version") else ""
        return (
            f"find_package({package}{version}) failed at {where}: "
            f"no package configuration file ({package}Config.cmake)"
        )
    return None


def findings(body: str) -> list[str]:
    """`xdnaforge: ...` lines for what a build log shows across lines: a failed
    find_package (the package, the version asked and found, the CMakeLists line that asked)
    and kbuild's two compilers when they differ."""
    lines = []
    if "CMake Error at " in body:
        for error in cmake_errors(body):
            described = _find_package(error)
            if described is not None:
                lines.append(f"xdnaforge: CMake: {described}")
    compilers = kbuild_compilers(body)
    if compilers is not None:
        lines.append(
            f"xdnaforge: kbuild: the module is compiled by {compilers[0]}; "
            f"the kernel was built by {compilers[1]}"
        )
    return lines


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
