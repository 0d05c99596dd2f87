#!/usr/bin/env python3
"""Extract the error- and warning-level message templates of the NPU stack from upstream
snapshots and write src/xdnaforge/diagnosis/data/upstream_messages.json.

Run by hand (never at run time, never by a test) against fetched git snapshots:

    python3 scripts/gen_upstream_messages.py \
        --xdna /work/.mirror/amd+xdna-driver/repo --xrt /work/.mirror/Xilinx+XRT/repo \
        [--linux-excerpts DIR]

Files are read with `git show <commit>:<path>` (no work tree needed). What is kept per
message: level, the format string as printed (after the driver's "%s: " function prefix),
the regular expression its format specifiers turn into, file, function and the upstream
commits where it occurs. No code bodies are kept: this is generated data, not source.

--linux-excerpts reads *.c files named after drivers/accel/amdxdna/ files of the in-tree
driver (Linux is too large to fetch here): each holds the lines of one upstream file that
carry function headers and message calls, first line `// commit <sha>`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

# the xdna-driver commits the recipes pin (recipes/*.yaml)
XDNA_COMMITS = {
    "49c590dc74fe5779bf613e357ed0a57efba0b4df": "1.4 (ryzen-ai-ubuntu24)",
    "f0b7bd5fbc9d45892d050cb55701541350390b99": "1.6 (ubuntu26-compat)",
    "beb9e450fe123ecdf395453971576179cedcf1dd": "2.21.75 (xdna-2.21.75)",
    "ca5bce25951b1f8e4c01405d7ff1a033d5e8fd81": "main (upstream-main)",
}
# XRT of the recipes plus the release branches 2.17 (2024.1) .. 2.20 (2025.2)
XRT_COMMITS = {
    "2024.1": "2.17 (branch 2024.1)",
    "2024.2": "2.18 (branch 2024.2)",
    "2025.1": "2.19 (branch 2025.1)",
    "021204355eeaa034ff69aae407ace2265adf047a": "2.20 (ubuntu26-compat)",
    "4eb1f4392a012b4e6eca759762389c612537f7c7": "2.21.75 (xdna-2.21.75)",
    "b4bbf24c54b355b585d59f15264aba47d9aa54b9": "2.26 line (upstream-main)",
}
XDNA_DIRS = ("src/driver/amdxdna/", "src/shim/", "example/")
XRT_DIRS = (
    "src/runtime_src/core/tools/common/tests/",
    "src/runtime_src/core/tools/common/XBUtilities.cpp",
    "src/runtime_src/core/tools/common/reports/ReportHost.cpp",
    "src/runtime_src/core/tools/xbutil2/SubCmdValidate.cpp",
    "src/runtime_src/core/tools/xbutil2/SubCmdExamine.cpp",
    "src/runtime_src/core/tools/common/SubCmdExamineInternal.cpp",
)

# call -> (level, index of the format argument, does the driver prefix "<function>: ")
# shim_err() appends " (err=%d)" to its format (src/shim/shim_debug.h)
CALLS = {
    "XDNA_ERR": ("error", 1, True),
    "XDNA_ERR_ONCE": ("error", 1, True),
    "XDNA_WARN": ("warning", 1, True),
    "XDNA_WARN_ONCE": ("warning", 1, True),
    "dev_err": ("error", 1, False),
    "dev_err_ratelimited": ("error", 1, False),
    "dev_err_probe": ("error", 2, False),
    "dev_warn": ("warning", 1, False),
    "dev_warn_once": ("warning", 1, False),
    "drm_err": ("error", 1, False),
    "drm_warn": ("warning", 1, False),
    "pr_err": ("error", 0, False),
    "pr_warn": ("warning", 0, False),
    "shim_err": ("error", 1, False),
    "std::runtime_error": ("error", 0, False),
    "xrt_core::error": ("error", -1, False),
    "xrt_core::system_error": ("error", -1, False),
    "xrt_core::generic_error": ("error", -1, False),
}
_CALL_RE = re.compile(r"(?<![\w:])(" + "|".join(re.escape(c) for c in CALLS) + r")\s*\(")
_LOGGER_RE = re.compile(r"\blogger\s*\(")
# example tests and tools print failures to a stream: `std::cout << "ERROR: ..."`
_STREAM_RE = re.compile(
    r'std::(?:cout|cerr)\s*<<\s*"((?:ERROR|Error|TEST FAILED|FAILED)[^"\\]*(?:\\.[^"\\]*)*)"'
)
_LITERAL_RE = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_FUNCTION_RE = re.compile(
    r"^(?!\s)(?:[\w\*&<>:,~]+[ \t\n\*&]+)*?([A-Za-z_~][\w:~]*)\s*\(([^;{}]*?)\)\s*"
    r"(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?\n?\{",
    re.MULTILINE,
)
_NOT_FUNCTIONS = {"if", "for", "while", "switch", "return", "sizeof", "else"}
# conversion: one letter, or %p with the kernel's extensions (%pK, %pe, %pad)
_SPEC_RE = re.compile(
    r"%(?:%|\d+%|[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t|L)?(?:p[A-Za-z]*|[a-oq-zA-Z]))"
)


def spec_pattern(spec: str) -> str:
    """A printf/boost format specifier -> the regular expression of what it prints."""
    if spec == "%%":
        return "%"
    if re.fullmatch(r"%\d+%", spec):
        return ".*?"
    if spec.startswith("%p"):  # %p, %pK, %pe (an error name), %pad, ...
        return r"\S+"
    letter = spec[-1]
    if letter in "diu":
        return r"-?\d+"
    if letter in "xX":
        return r"(?:0x)?[0-9a-fA-F]+"
    if letter in "fgeE":
        return r"-?[0-9.]+(?:e[-+]?\d+)?"
    if letter == "c":
        return "."
    return ".*?"


def template_pattern(template: str) -> str:
    """The template with each specifier (and each piece not known here: "\x00") as a regex."""
    parts = []
    position = 0
    for match in _SPEC_RE.finditer(template):
        parts.append(_escape(template[position : match.start()]))
        parts.append(spec_pattern(match.group(0)))
        position = match.end()
    parts.append(_escape(template[position:]))
    return "".join(parts).rstrip()


def _escape(text: str) -> str:
    return ".*?".join(re.escape(piece).replace("\\ ", " ") for piece in text.split("\x00"))


def _unescape(literal: str) -> str:
    return literal.replace('\\"', '"').replace("\\n", " ").replace("\\t", " ").replace("\\\\", "\\")


def _call_args(text: str, start: int) -> list[str]:
    """Top-level arguments of the call whose "(" is at text[start-1]."""
    depth, args, current, index = 1, [], [], start
    while index < len(text) and depth:
        char = text[index]
        if char == '"':
            end = text.index('"', index + 1) if '"' in text[index + 1 :] else len(text)
            while text[end - 1] == "\\" and text[end - 2] != "\\":
                end = text.index('"', end + 1)
            current.append(text[index : end + 1])
            index = end + 1
            continue
        if char == "'" and index + 2 < len(text):
            close = text.find("'", index + 1)
            current.append(text[index : close + 1])
            index = close + 1
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if not depth:
                break
        if char == "," and depth == 1:
            args.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    args.append("".join(current))
    return [a.strip() for a in args]


def _template(argument: str) -> str | None:
    """The literal text of a format argument; pieces computed at run time become "\x00"."""
    literals = list(_LITERAL_RE.finditer(argument))
    if not literals:
        return None
    pieces: list[str] = []
    position = 0
    for literal in literals:
        between = argument[position : literal.start()]
        if pieces and re.search(r"[\w\)\]]", between.replace("boost::format", "")):
            pieces.append("\x00")
        pieces.append(_unescape(literal.group(1)))
        position = literal.end()
    tail = argument[position:]
    if re.search(r"\+\s*[\w(]", tail):
        pieces.append("\x00")
    text = "".join(pieces).strip()
    return text if re.search(r"[A-Za-z]{3}", text) else None


def _functions(text: str) -> list[tuple[int, str]]:
    found = []
    for match in _FUNCTION_RE.finditer(text):
        name = match.group(1)
        if name.split("::")[-1] in _NOT_FUNCTIONS:
            continue
        found.append((match.start(), name))
    return found


def extract(text: str) -> list[tuple[str, str, str, bool]]:
    """(level, template, function, driver-prefixed) for every message call in one file."""
    functions = _functions(text)
    messages = []

    def function_at(offset: int) -> str:
        name = ""
        for start, candidate in functions:
            if start > offset:
                break
            name = candidate
        return name

    for match in _CALL_RE.finditer(text):
        level, index, prefixed = CALLS[match.group(1)]
        args = _call_args(text, match.end())
        if index == -1:  # xrt_core errors: (code, "text") or ("text")
            index = 1 if len(args) > 1 and not _LITERAL_RE.search(args[0]) else 0
        if index >= len(args):
            continue
        template = _template(args[index])
        if template and match.group(1) == "shim_err":
            template += " (err=%d)"
        if template:
            messages.append((level, template, function_at(match.start()), prefixed))
    for match in _LOGGER_RE.finditer(text):  # XRT validate: logger(ptree, "Error", text)
        args = _call_args(text, match.end())
        if len(args) < 3 or args[1] not in ('"Error"', '"Warning"', '"Details"'):
            continue
        template = _template(args[2])
        if args[1] == '"Details"' and not (template and "Skipping" in template):
            continue  # Details are results; "... not available. Skipping" says a file is missing
        if template:
            level = "error" if args[1] == '"Error"' else "warning"
            messages.append((level, template, function_at(match.start()), False))
    for match in _STREAM_RE.finditer(text):
        template = _unescape(match.group(1)).strip()
        messages.append(("error", template, function_at(match.start()), False))
    return messages


def git(repo: Path, *args: str) -> str:
    """One git command on a bare snapshot (GitPython: no work tree needed)."""
    import git as gitpython

    output: str = gitpython.Git().execute(["git", "--git-dir", str(repo), *args])
    return output


def files_at(repo: Path, commit: str, roots: tuple[str, ...]) -> list[str]:
    listing = git(repo, "ls-tree", "-r", "--name-only", commit, "--", *roots).splitlines()
    return [p for p in listing if p.endswith((".c", ".cpp", ".h", ".hpp"))]


def collect(
    table: dict[tuple[str, str, str, str], dict[str, object]],
    component: str,
    path: str,
    commit: str,
    text: str,
) -> None:
    for level, template, function, prefixed in extract(text):
        key = (component, path, function, template)
        entry = table.setdefault(
            key,
            {
                "component": component,
                "level": level,
                "file": path,
                "function": function,
                "template": template.replace("\x00", "%s"),
                "pattern": (re.escape(function) + ": " if prefixed and function else "")
                + template_pattern(template),
                "commits": [],
            },
        )
        commits = entry["commits"]
        assert isinstance(commits, list)
        if commit not in commits:
            commits.append(commit)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--xdna", type=Path, required=True)
    parser.add_argument("--xrt", type=Path, required=True)
    parser.add_argument("--linux-excerpts", type=Path)
    parser.add_argument(
        "--output",
        type=Path,
        default=Path(__file__).resolve().parent.parent
        / "src/xdnaforge/diagnosis/data/upstream_messages.json",
    )
    options = parser.parse_args()
    table: dict[tuple[str, str, str, str], dict[str, object]] = {}
    sources = []
    for commit, label in XDNA_COMMITS.items():
        sha = git(options.xdna, "rev-parse", commit).strip()
        sources.append({"repo": "amd/xdna-driver", "commit": sha, "label": label})
        for path in files_at(options.xdna, sha, XDNA_DIRS):
            component = {"src/driver/": "amdxdna", "example/": "example"}.get(
                path[: path.index("/", 4) + 1] if path.startswith("src/") else "example/", "shim"
            )
            collect(table, component, path, sha, git(options.xdna, "show", f"{sha}:{path}"))
    for commit, label in XRT_COMMITS.items():
        sha = git(options.xrt, "rev-parse", commit).strip()
        sources.append({"repo": "Xilinx/XRT", "commit": sha, "label": label})
        for path in files_at(options.xrt, sha, XRT_DIRS):
            collect(table, "xrt-smi", path, sha, git(options.xrt, "show", f"{sha}:{path}"))
    if options.linux_excerpts:
        for excerpt in sorted(options.linux_excerpts.glob("*.c")):
            text = excerpt.read_text()
            sha = text.splitlines()[0].split()[-1]
            path = f"drivers/accel/amdxdna/{excerpt.name}"
            sources.append({"repo": "torvalds/linux", "commit": sha, "label": f"in-tree {path}"})
            collect(table, "amdxdna", path, sha, text)
    messages = sorted(
        table.values(), key=lambda m: (str(m["component"]), str(m["file"]), str(m["template"]))
    )
    document = {
        "schema": 1,
        "generated_by": "scripts/gen_upstream_messages.py",
        "sources": sources,
        "messages": messages,
    }
    options.output.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    print(f"{len(messages)} message templates from {len(sources)} sources -> {options.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
