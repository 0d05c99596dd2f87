"""The survey: what a source tree's CMake files ask of the toolchain, read without building.

From the configure roots of the recipe's build steps it follows add_subdirectory() (and
XRT's xrt_add_subdirectory wrappers) and include() into every nested project that the
configuration reaches, skipping the recipe's unused submodules and branches whose if()
condition is known to be false for the recipe's flags. It reports:

- cmake_minimum_required / cmake_policy(VERSION) below 3.5 without a `min...max` range
  (CMake 4 refuses them);
- -Werror added anywhere, and whether the recipe's flags switch it off;
- the Boost components requested;
- the libraries linked by name (`-lcrypt`, `crypt`), for the edge to map to packages.

Pure: files come through a `read(path) -> text | None` callable; no processes, no writes.
Function and macro bodies are not followed (a -Werror inside one counts only if called,
which is not tracked).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from xdnaforge.sources.cmake import Command, evaluate, expand, parse_commands

MIN_POLICY = (3, 5)
_LINK_KEYWORDS = {
    "PRIVATE",
    "PUBLIC",
    "INTERFACE",
    "LINK_PRIVATE",
    "LINK_PUBLIC",
    "LINK_INTERFACE_LIBRARIES",
    "debug",
    "optimized",
    "general",
}
_LIB_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_+.-]*$")
# what XRT's build.sh passes to CMake for the flags a recipe gives it (domain knowledge,
# from build/build.sh at the pinned XRT); other build scripts pass nothing we know of
BUILD_SH_DEFINES: Mapping[str, Mapping[str, str]] = {
    "-npu": {"XRT_NPU": "1"},
    "-alveo": {"XRT_ALVEO": "1"},
    "-base": {"XRT_BASE": "1"},
    "-edge": {"XRT_EDGE": "1"},
    "-disable-werror": {"XRT_ENABLE_WERROR": "0"},
    "-opt": {"CMAKE_BUILD_TYPE": "Release"},
    "-dbg": {"CMAKE_BUILD_TYPE": "Debug"},
}
BUILD_SH_DEFAULTS: Mapping[str, str] = {
    "XRT_ENABLE_WERROR": "1",
    "XRT_NPU": "0",
    "XRT_ALVEO": "0",
    "XRT_BASE": "0",
    "XRT_EDGE": "0",
    "XRT_ENABLE_HIP": "0",
    "XRT_XRT": "0",  # build.sh never passes it: undefined, so false
    "XRT_PSKERNEL_BUILD": "0",
    "XRT_CLANG_TIDY": "0",
    "CMAKE_SYSTEM_PROCESSOR": "x86_64",
    "CMAKE_SYSTEM_NAME": "Linux",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    kind: str  # cmake-minimum | cmake-policy | werror | boost | link
    where: str  # path:line
    message: str
    warning: bool


@dataclass(slots=True)
class Survey:
    findings: list[Finding] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    not_found: list[str] = field(default_factory=list)  # files a reached command names
    libraries: dict[str, list[str]] = field(default_factory=dict)  # name -> places
    targets: set[str] = field(default_factory=set)  # defined by add_library/add_executable


def flag_variables(argv: tuple[str, ...]) -> dict[str, str]:
    """The CMake variables a build step's argv sets (build.sh flags, -DVAR=value)."""
    variables: dict[str, str] = {}
    if any(posixpath.basename(a) == "build.sh" for a in argv[:1]):
        variables.update(BUILD_SH_DEFAULTS)
        variables.setdefault("CMAKE_BUILD_TYPE", "Debug")
    for arg in argv:
        variables.update(BUILD_SH_DEFINES.get(arg, {}))
        if arg.startswith("-D") and "=" in arg:
            name, _, value = arg[2:].partition("=")
            variables[name.split(":")[0]] = value
    return variables


def _version(text: str) -> tuple[int, ...] | None:
    parts = re.findall(r"\d+", text.split("...")[0])
    return tuple(int(p) for p in parts[:2]) if parts else None


class _Walker:
    def __init__(
        self,
        read: Callable[[str], str | None],
        variables: Mapping[str, str],
        skip: tuple[str, ...],
        switches: tuple[str, ...],
    ) -> None:
        self.read = read
        self.variables = dict(variables)
        self.skip = skip
        self.switches = switches
        self.survey = Survey()
        self.seen: set[str] = set()

    def skipped(self, path: str) -> bool:
        return any(path == s or path.startswith(f"{s}/") for s in self.skip)

    def visit(self, path: str, source_dir: str) -> None:
        if path in self.seen or self.skipped(path):
            return
        self.seen.add(path)
        text = self.read(path)
        if text is None:
            self.survey.not_found.append(path)
            return
        self.survey.files_read.append(path)
        stack: list[tuple[bool | None, bool, tuple[str, ...]]] = []  # value, taken, condition
        in_function = 0
        for command in parse_commands(text):
            name = command.name
            if name in ("function", "macro"):
                in_function += 1
                continue
            if name in ("endfunction", "endmacro"):
                in_function = max(0, in_function - 1)
                continue
            if in_function:
                continue
            if name == "if":
                value = evaluate(command.args, self.variables)
                stack.append((value, value is True, command.args))
                continue
            if name in ("elseif", "else") and stack:
                _, taken, _ = stack[-1]
                value = (
                    False
                    if taken
                    else (evaluate(command.args, self.variables) if name == "elseif" else None)
                )
                if name == "else" and not taken:
                    earlier = stack[-1][0]
                    value = True if earlier is False else None
                stack[-1] = (value, taken or value is True, command.args)
                continue
            if name == "endif":
                if stack:
                    stack.pop()
                continue
            conditions = [arg for _, _, args in stack for arg in args]
            if any(value is False for value, _, _ in stack):
                self.switched_off(command, path, conditions)
                continue
            self.assign(command, certain=all(value is True for value, _, _ in stack))
            self.command(command, path, source_dir, conditions)

    def assign(self, command: Command, *, certain: bool) -> None:
        """Track set()/option() of plain variables; a set() in a branch that may not run
        makes the variable unknown."""
        args = command.args
        if command.name == "option" and len(args) >= 3 and args[0] not in self.variables:
            self.variables[args[0]] = args[2]
        if command.name != "set" or len(args) < 2 or "${" in args[0]:
            return
        words = [a for a in args[1:] if a not in ("CACHE", "PARENT_SCOPE", "FORCE")]
        value = expand(" ".join(words[:1]), self.variables)
        if certain and value is not None:
            self.variables.setdefault(args[0], value)
        elif self.variables.get(args[0]) != value:
            self.variables.pop(args[0], None)

    def switched_off(self, command: Command, path: str, conditions: list[str]) -> None:
        """A -Werror in a branch the recipe's flags turn off is worth a line, not a warning."""
        switches = sorted({c for c in conditions if any(s in c for s in self.switches)})
        if switches and "-Werror" in " ".join(command.args).split():
            self.survey.findings.append(
                Finding(
                    kind="werror",
                    where=f"{path}:{command.line}",
                    message=f"-Werror added by {command.name}() only if({' '.join(conditions)}); "
                    f"switched off by the recipe's flags ({', '.join(switches)})",
                    warning=False,
                )
            )

    def command(self, command: Command, path: str, source_dir: str, conditions: list[str]) -> None:
        where = f"{path}:{command.line}"
        name, args = command.name, command.args
        if name in ("cmake_minimum_required", "cmake_policy") and "VERSION" in args:
            version_text = (
                args[args.index("VERSION") + 1] if len(args) > args.index("VERSION") + 1 else ""
            )
            version = _version(version_text)
            if version is not None and version < MIN_POLICY and "..." not in version_text:
                kind = "cmake-minimum" if name == "cmake_minimum_required" else "cmake-policy"
                self.survey.findings.append(
                    Finding(
                        kind=kind,
                        where=where,
                        message=f"{name}(VERSION {version_text}) is below 3.5 without a range: "
                        "CMake 4 refuses it (add '...3.5' or raise it)",
                        warning=True,
                    )
                )
        if "-Werror" in " ".join(args).split() and name not in ("message",):
            reached = [c for c in conditions if any(s in c for s in self.switches)]
            self.survey.findings.append(
                Finding(
                    kind="werror",
                    where=where,
                    message=f"-Werror added by {name}()"
                    + (
                        f"; switched off by the recipe's flags ({', '.join(sorted(set(reached)))})"
                        if reached
                        else "; the recipe's flags do not reach it: a new compiler warning "
                        "stops the build here"
                    ),
                    warning=not reached,
                )
            )
        if name == "find_package" and args and args[0] == "Boost" and "COMPONENTS" in args:
            components = [a for a in args[args.index("COMPONENTS") + 1 :] if a.islower()]
            self.survey.findings.append(
                Finding(
                    kind="boost",
                    where=where,
                    message=f"Boost components: {', '.join(components)}",
                    warning=False,
                )
            )
        if name in ("add_library", "add_executable") and args:
            target = expand(args[0], self.variables)
            if target:
                self.survey.targets.add(target)
        if name in ("target_link_libraries", "link_libraries"):
            for item in args[1:] if name == "target_link_libraries" else args:
                library = item[2:] if item.startswith("-l") else item
                if item.startswith("-") and not item.startswith("-l"):
                    continue
                if item in _LINK_KEYWORDS or not _LIB_NAME_RE.match(library):
                    continue
                if library.endswith((".so", ".a")) or "::" in library:
                    continue
                self.survey.libraries.setdefault(library, []).append(where)
        subdirectory = name.endswith("add_subdirectory") or name.startswith("xrt_add_subdirectory")
        if subdirectory and args:
            directory = expand(args[0], {**self.variables, "CMAKE_CURRENT_SOURCE_DIR": source_dir})
            if directory is not None:
                child = posixpath.normpath(posixpath.join(source_dir, directory))
                self.visit(f"{child}/CMakeLists.txt", child)
        if name == "include" and args:
            self.include(args[0], path, source_dir)

    def include(self, argument: str, path: str, source_dir: str) -> None:
        here = posixpath.dirname(path)
        target = expand(
            argument,
            {
                **self.variables,
                "CMAKE_CURRENT_SOURCE_DIR": source_dir,
                "CMAKE_CURRENT_LIST_DIR": here,
            },
        )
        if target is None or ("/" not in target and not target.endswith(".cmake")):
            return  # a module name (CTest, GNUInstallDirs): CMake's own, not the tree's
        candidate = posixpath.normpath(
            target.lstrip("/") if target.startswith("/") else posixpath.join(source_dir, target)
        )
        self.visit(candidate, source_dir)


def survey_tree(
    roots: list[str],
    read: Callable[[str], str | None],
    *,
    variables: Mapping[str, str],
    skip: tuple[str, ...],
    switches: tuple[str, ...],
) -> Survey:
    """Follow each configure root's CMakeLists.txt through the tree (paths relative to it)."""
    walker = _Walker(read, variables, skip, switches)
    for root in roots:
        walker.visit(posixpath.normpath(f"{root}/CMakeLists.txt"), posixpath.normpath(root))
    return walker.survey


def link_findings(
    survey: Survey,
    packages: Mapping[str, str | None],
    provided: set[str],
    how: str,
) -> list[Finding]:
    """A warning per linked library whose package the dependency list does not provide."""
    findings = []
    for library, places in sorted(survey.libraries.items()):
        if library in survey.targets:
            continue  # a target of the tree, not a system library
        package = packages.get(library)
        if package is None:
            continue  # not a system library we can name (an unresolved target name)
        listed = package in provided
        findings.append(
            Finding(
                kind="link",
                where=places[0],
                message=f"-l{library} needs {package} ({how})"
                + ("" if listed else "; the recipe's dependency list lacks it"),
                warning=not listed,
            )
        )
    return findings
