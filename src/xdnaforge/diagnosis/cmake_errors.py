"""CMake's error blocks in a build log, read by what they name: a failed `find_package` or
`pkg_check_modules` and the file that asked, a missing subdirectory, a policy version CMake
4 removed, a CMake too old, no compiler, an unknown command, the project's own
`message(FATAL_ERROR)`. Pure; build_errors.py turns what `describe` says into findings.

Read from the tools' own output formats: CMake's `CMake Error at <file>:<line>
(<command>):` followed by its indented message and `Call Stack (most recent call first):`
(cmake's `cmMessenger`), FindPackageHandleStandardArgs' `Could NOT find <Package>
(missing: <vars>) (found version "<v>")`, config mode's `Could not find a package
configuration file provided by "<Package>" (requested version <v>)` and `Could not find a
configuration file for package "<Package>" that is compatible with requested version
"<v>"` with the versions it `considered but not accepted`; CMake's own messages
(Kitware/CMake at 03676b05: cmAddSubDirectoryCommand.cxx `given source "<d>" which is not
an existing directory`, cmMakefile.cxx `The source directory <d> does not contain a
CMakeLists.txt file` and `Unknown CMake command "<c>"`, cmPolicies.cxx `Compatibility with
CMake < 3.5 has been removed from CMake`, cmCMakeMinimumRequired.cxx `CMake <v> or higher
is required.  You are running version <v>`, cmGlobalGenerator.cxx `No CMAKE_<LANG>_COMPILER
could be found`), FindPkgConfig's `A required package was not found` (before 3.28), `The
following required packages were not found:` with ` - <module>` (3.28 on) and `None of the
required '<modules>' found`, after pkg-config's own `No package '<m>' found` and `Requested
'<m> >= <v>' but version of <m> is <v>` or pkgconf's `Package '<m>', required by
'virtual:world', not found` and `Package '<m>' has version '<v>', required version is
'<op> <v>'`.
"""

from __future__ import annotations

import dataclasses
import re

from xdnaforge.diagnosis import build_log

# a CI runner's or an IDE's prefix before the tool's text: "[2023-06-09T18:42:13.630Z] ",
# "[cmake] "
_LEAD_RE = re.compile(r"^\[[^\]\n]{1,40}\] ?")
_CMAKE_ERROR_RE = re.compile(r"^CMake Error at (?P<file>\S+?):(?P<line>\d+) \((?P<command>\w+)\):")
_FRAME_RE = re.compile(r"^\s+(?P<file>\S+?):(?P<line>\d+) \((?P<command>\w+)\)\s*$")
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
# (a path from a word's start only: from each of a long word's characters, "\S+" would
# run to its end and back)
_CONSIDERED_RE = re.compile(r"(?<!\S)(?P<path>\S+\.cmake), version: (?P<found>\S+)")
# CMake's own messages (Source/cm*.cxx), a message joined into one line
_NOT_A_DIRECTORY_RE = re.compile(
    r'add_subdirectory given source "(?P<dir>[^"]+)" which is not an existing directory'
)
_NO_CMAKELISTS_RE = re.compile(
    r"The source directory\s+(?P<dir>.+?)\s+does not contain a CMakeLists\.txt file"
)
_COMPAT_REMOVED_RE = re.compile(
    r"Compatibility with CMake < (?P<below>[\d.]+) has been removed from CMake"
)
_TOO_OLD_RE = re.compile(
    r"CMake (?P<wanted>[\d.]+) or higher is required\.\s+You are running version "
    r"(?P<running>[\w.-]+)"
)
_NO_COMPILER_RE = re.compile(r"No CMAKE_(?P<lang>\w+?)_COMPILER could be found")
_BAD_COMPILER_RE = re.compile(
    r"The CMAKE_(?P<lang>\w+?)_COMPILER:\s+(?P<compiler>.+?)\s+is not a full path "
    r"(?P<what>and was not found in the PATH|to an existing compiler tool)"
)
_UNKNOWN_COMMAND_RE = re.compile(r'Unknown CMake command "(?P<command>[^"]+)"')
# FindPkgConfig (Modules/FindPkgConfig.cmake) and pkg-config's / pkgconf's own lines
_PKG_REQUIRED_RE = re.compile(
    r"A required package was not found"
    r"|The following required packages were not found:(?P<listed>.*)"
    r"|None of the required '(?P<alternatives>[^']+)' found"
)
_PKG_CHECKING_RE = re.compile(r"^-- Checking for (?:one of the )?modules? '")
_PKG_SAID_RE = re.compile(
    r"^(?:--\s+)?(?P<said>Package '(?P<a>[^']+)', required by '[^']*', not found"
    r"|No package '(?P<b>[^']+)' found"
    r"|Package '(?P<c>[^']+)' has version '[^']*', required version is '[^']*'"
    r"|Requested '(?P<d>[^'\s]+) [^']*' but version of \S+ is \S+)"
)
_PKG_CALLERS = ("pkg_check_modules", "pkg_search_module")
# where a CMake installation keeps its own modules: /usr/share/cmake-3.28/Modules/
_CMAKE_MODULES_RE = re.compile(r"(?i)/cmake(?:-(?P<v>\d+\.\d+))?/Modules/")
_CMAKE_VERSION_RE = re.compile(r"^cmake version (?P<v>\d+\.\d+(?:\.\d+)?\S*)", re.M)
_MAX_MESSAGE = 300  # characters of a project's message quoted
_MAX_BLOCK = 40  # lines of a CMake message read after its header
_MAX_STATUS = 20  # lines above FindPkgConfig's error read for pkg-config's own


def unprefixed_lines(body: str) -> list[str]:
    return [_LEAD_RE.sub("", line, count=1) for line in body.splitlines()]


@dataclasses.dataclass(frozen=True, slots=True)
class CMakeError:
    file: str
    line: int
    command: str
    message: str  # the indented message, joined into one line
    caller: str  # "CMakeLists.txt:76", the find_package call of a module's message
    # the Call Stack's frames, innermost first: (file, line, command)
    stack: tuple[tuple[str, int, str], ...] = ()
    # what pkg-config said in the status lines just above FindPkgConfig's error
    pkg_config: tuple[tuple[str, str], ...] = ()  # (module, pkg-config's words)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def called(self, commands: tuple[str, ...]) -> str:
        """ "CMakeLists.txt:20": the outermost frame (or the header) calling one of
        `commands`; "" when none does."""
        for file, line, command in reversed(self.stack):
            if command in commands:
                return f"{file}:{line}"
        return self.where if self.command in commands else ""


def _pkg_config_said(lines: list[str], index: int) -> tuple[tuple[str, str], ...]:
    """pkg-config's own words above line `index`, back to FindPkgConfig's `Checking for`."""
    said = []
    for line in reversed(lines[max(0, index - _MAX_STATUS) : index]):
        if _PKG_CHECKING_RE.match(line):
            break
        found = _PKG_SAID_RE.match(line)
        if found:
            module = found.group("a") or found.group("b") or found.group("c") or found.group("d")
            said.append((module, found.group("said")))
    return tuple(reversed(said))


def cmake_errors(body: str) -> list[CMakeError]:
    """Each `CMake Error at <file>:<line> (<command>):` block with its message."""
    lines = unprefixed_lines(body)
    found = []
    for index, line in enumerate(lines):
        header = _CMAKE_ERROR_RE.match(line)
        if header is None:
            continue
        message: list[str] = []
        stack: list[tuple[str, int, str]] = []
        in_stack = False
        for following in lines[index + 1 : index + 1 + _MAX_BLOCK]:
            if following.startswith("Call Stack"):
                in_stack = True
                continue
            if following and not following[0].isspace():
                break
            if in_stack:
                frame = _FRAME_RE.match(following)
                if frame:
                    stack.append(
                        (frame.group("file"), int(frame.group("line")), frame.group("command"))
                    )
            elif following.strip():
                message.append(following.strip())
        callers = [
            f"{file}:{number}" for file, number, command in stack if command == "find_package"
        ]
        file = header.group("file")
        found.append(
            CMakeError(
                file,
                int(header.group("line")),
                header.group("command"),
                " ".join(message),
                callers[-1] if callers else "",
                tuple(stack),
                _pkg_config_said(lines, index) if file.endswith("FindPkgConfig.cmake") else (),
            )
        )
    return found


def cmake_version(body: str) -> str:
    """The CMake a log names: "CMake 4.0.2 (cmake version 4.0.2)", "CMake 3.28 (its modules
    under /usr/share/cmake-3.28/)"; "" when the log does not say."""
    version = _CMAKE_VERSION_RE.search(body)
    if version:
        return f"CMake {version.group('v')} (cmake version {version.group('v')})"
    running = _TOO_OLD_RE.search(body)
    if running:
        return f"CMake {running.group('running')} (You are running version)"
    modules = _CMAKE_MODULES_RE.search(body)
    if modules and modules.group("v"):
        return f"CMake {modules.group('v')} (its modules under cmake-{modules.group('v')}/Modules/)"
    return ""


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


def _named_cmake(body: str) -> str:
    named = cmake_version(body)
    return f"the log names {named}" if named else "the log does not name the CMake version"


def _subdirectory(error: CMakeError) -> str | None:
    """ "add_subdirectory at CMakeLists.txt:36: the source directory D does not contain a
    CMakeLists.txt file" or None."""
    missing = _NOT_A_DIRECTORY_RE.search(error.message)
    if missing:
        what = f"the source directory {missing.group('dir')} is not an existing directory"
    else:
        empty = _NO_CMAKELISTS_RE.search(error.message)
        if empty is None:
            return None
        what = f"the source directory {empty.group('dir')} does not contain a CMakeLists.txt file"
    return f"add_subdirectory at {error.called(('add_subdirectory',)) or error.where}: {what}"


def _policy_version(error: CMakeError, body: str) -> str | None:
    """ "cmake_minimum_required at CMakeLists.txt:1 asks for compatibility with CMake < 3.5,
    which CMake 4 removed; the log names CMake 4.0.2 (cmake version 4.0.2)" or None."""
    removed = _COMPAT_REMOVED_RE.search(error.message)
    if removed is None:
        return None
    command = error.command if error.command == "cmake_policy" else "cmake_minimum_required"
    running = _named_cmake(body)
    return (
        f"{command} at {error.where} asks for compatibility with CMake < "
        f"{removed.group('below')}, which CMake 4 removed; {running}"
    )


def _too_old(error: CMakeError) -> str | None:
    old = _TOO_OLD_RE.search(error.message)
    if old is None:
        return None
    return (
        f"cmake_minimum_required at {error.where} needs CMake {old.group('wanted')} or "
        f"higher; the CMake running is {old.group('running')}"
    )


def _no_compiler(error: CMakeError) -> str | None:
    """ "project at CMakeLists.txt:2 found no C++ compiler (CMAKE_CXX_COMPILER): none could
    be found; it comes from g++ (...)" or None."""
    none = _NO_COMPILER_RE.search(error.message)
    bad = None if none else _BAD_COMPILER_RE.search(error.message)
    found = none or bad
    if found is None:
        return None
    language = found.group("lang")
    name, who = build_log.compiler_provider(language)
    if bad is not None:
        what = f"{bad.group('compiler')} is not a full path {bad.group('what')}"
    else:
        what = "none could be found"
    return (
        f"{error.command} at {error.where} found no {name} compiler "
        f"(CMAKE_{language}_COMPILER): {what}; it comes from {who}"
    )


def _pkg_config(error: CMakeError) -> str | None:
    """ "pkg_check_modules at CMakeLists.txt:20 found no pkg-config module libdrm
    (pkg-config: ...); libdrm.pc is in libdrm-dev (...)" or None."""
    required = _PKG_REQUIRED_RE.search(error.message)
    if required is None or not error.file.endswith("FindPkgConfig.cmake"):
        return None
    named: list[str] = []
    if required.group("listed"):
        named = [m.strip() for m in required.group("listed").split(" - ") if m.strip(" -")]
    elif required.group("alternatives"):
        named = required.group("alternatives").split(";")
    said = dict(error.pkg_config)
    modules = [re.split(r"[<>=\s]", m.strip(" -"), maxsplit=1)[0] for m in named] or list(said)
    modules = [m for m in dict.fromkeys(modules) if m]
    call = next(
        (command for _, _, command in reversed(error.stack) if command in _PKG_CALLERS),
        "pkg_search_module" if required.group("alternatives") else "pkg_check_modules",
    )
    where = error.called(_PKG_CALLERS) or error.where
    if not modules:
        return (
            f"{call} at {where} found no pkg-config module (the log does not show which: "
            "pkg-config's line above the error is not in it); the package that ships it is "
            "unknown"
        )
    described = ", ".join(f"{m} (pkg-config: {said[m]})" if m in said else m for m in modules)
    shipped = "; ".join(f"{m}.pc is in {build_log.pkg_config_provider(m)}" for m in modules)
    plural = "s" if len(modules) > 1 else ""
    return f"{call} at {where} found no pkg-config module{plural} {described}; {shipped}"


def _unknown_command(error: CMakeError, body: str) -> str | None:
    unknown = _UNKNOWN_COMMAND_RE.search(error.message)
    if unknown is None:
        return None
    name = unknown.group("command")
    running = _named_cmake(body)
    return (
        f"{error.where} calls {name}, a command this CMake does not know; "
        f"{build_log.cmake_command(name)}; {running}"
    )


def _upstream(error: CMakeError, text: str) -> str:
    """Where XRT's or xdna-driver's CMake files print `text` (the upstream catalogue), the
    file of the error first; "" when the catalogue does not have it."""
    from xdnaforge.diagnosis.upstream import catalogue  # a project's message only

    located = catalogue().locate(text)
    # a message() comes from a CMake file: a shell script's template with the same words
    # ("%s is not found") is not where it was printed
    if located is None or not located.file.endswith((".cmake", "CMakeLists.txt")):
        return ""
    name = error.file.rsplit("/", 1)[-1]
    same = next(
        (
            m
            for m in catalogue().messages
            if m.template == located.template and m.file.endswith(f"/{name}")
        ),
        located,
    )
    return same.source()


def _project_message(error: CMakeError) -> str | None:
    """ "the configuration stopped at cmake/x.cmake:20 with the project's message: "...";
    upstream: ..." for a message() of the project's own files, or None."""
    if error.command != "message" or _CMAKE_MODULES_RE.search(error.file) or not error.message:
        return None
    text = error.message
    if len(text) > _MAX_MESSAGE:
        text = text[: _MAX_MESSAGE - 3].rstrip() + "..."
    upstream = _upstream(error, error.message)
    source = (
        f"upstream: {upstream}"
        if upstream
        else "a check of the project's own, not in xdnaforge's upstream catalogue"
    )
    return (
        f"the configuration stopped at {error.where} with the project's message: "
        f'"{text}"; {source}'
    )


def describe(error: CMakeError, body: str = "") -> str | None:
    """What one CMake error block names, as a finding's text; None when no reader knows it
    (the generic build-cmake-failed then reads its header)."""
    return (
        _find_package(error)
        or _pkg_config(error)
        or _subdirectory(error)
        or _policy_version(error, body)
        or _too_old(error)
        or _no_compiler(error)
        or _unknown_command(error, body)
        or _project_message(error)
    )
