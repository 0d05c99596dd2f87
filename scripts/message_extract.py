"""Message templates from source text: the calls that print or throw an error or a warning in
C, C++, CMake and shell (Python's: python_extract.py), turned into (level, template,
function, driver-prefixed) and regexes.

Pure, used by scripts/gen_upstream_messages.py (run by hand on upstream snapshots). A
template keeps the literal text of a call's format argument; a piece computed at run time
becomes "\x00" (shown as "%s"), a format specifier a regex of what it prints. No code
bodies are kept.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling, wherever it is run from
from python_extract import extract_python

from xdnaforge.diagnosis.upstream import SHIM_ERR_SUFFIX
from xdnaforge.diagnosis.upstream import SPEC_RE as _SPEC_RE

# call -> (level, index of the format argument, does the driver prefix "<function>: ")
# shim_err() appends SHIM_ERR_SUFFIX to its format (src/shim/shim_debug.h)
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
    # shim_debug.h: shim_err(ENOTSUP, msg); most calls pass __func__, whose name no log shows
    "shim_not_supported_err": ("error", 0, False),
    "std::runtime_error": ("error", 0, False),
    "std::logic_error": ("error", 0, False),
    "std::invalid_argument": ("error", 0, False),
    "std::system_error": ("error", -1, False),
    "xrt_core::error": ("error", -1, False),
    "xrt_core::system_error": ("error", -1, False),
    "xrt_core::generic_error": ("error", -1, False),
    # "No device handle" (the shim's device.cpp), XRT's sysfs readers
    "xrt_core::internal_error": ("error", -1, False),
    # IREE's runtime (iree-amd-aie's amdxdna and xrt HAL drivers): iree_make_status(code,
    # "format", ...), printed as "<file>:<line>: <CODE>; <message>"
    "iree_make_status": ("error", 1, False),
    "xrt_core::query::sysfs_error": ("error", -1, False),
    # aie-rt (driver/src/common/xaie_helper.h): XAie_Log prints "[AIE ERROR] <func>():<line>: "
    "XAIE_ERROR": ("error", 0, False),
    "XAIE_WARN": ("warning", 0, False),
}
_CALL_RE = re.compile(r"(?<![\w:])(" + "|".join(re.escape(c) for c in CALLS) + r")\s*\(")
_LOGGER_RE = re.compile(r"\blogger\s*\(")
# FastFlowLM: header_print("ERROR", "text" << value) (and header_print_r, its right-aligned
# twin; later releases also spell the tag "Error", "Warning"); Lemonade: LOG(ERROR, "Tag") << "text"
_HEADER_PRINT_RE = re.compile(r'\bheader_print(?:_r)?\s*\(\s*"((?i:ERROR|WARNING|WARN))"\s*,')
# its other tags ("FLM", "LOG", "Linux") carry news and results, and failures too: kept
# when the text says itself that something failed (src/pull/model_downloader.cpp: "Model "
# + tag + " is not compatible with the current FLM version. ", "Hash not matched!")
_HEADER_PRINT_TAG_RE = re.compile(r'\bheader_print(?:_[rg])?\s*\(\s*"(FLM|LOG|Linux|Windows)"\s*,')
_HEADER_FAIL_RE = re.compile(
    r"(?i)\b(?:error|fail(?:ed|ure)?|not (?:compatible|exist|matched|supported|found)"
    r"|could not|cannot|can't|unable|invalid|unsupported)\b"
)
_LOG_STREAM_RE = re.compile(
    r'\bLOG\s*\(\s*(ERROR|WARNING|WARN)\s*(?:,\s*"[^"]*"\s*)?\)\s*<<([^;]*);'
)
# XRT core: xrt_core::message::send(severity_level::error, "XRT", text)
_SEND_RE = re.compile(
    r"\bmessage::send\s*\(\s*(?:xrt_core::message::)?severity_level::(error|critical|warning)\s*,"
)
# CMake: message(FATAL_ERROR "text ${VAR}")
_CMAKE_RE = re.compile(
    r'\bmessage\s*\(\s*(FATAL_ERROR|SEND_ERROR|WARNING)\s+((?:"(?:[^"\\]|\\.)*"\s*)+)', re.I
)
# shell: echo/printf/error/die "text" on a line that says something failed
_SHELL_RE = re.compile(r'^\s*(?:echo(?:\s+-e)?|printf|fatal|err)\s+"((?:[^"\\]|\\.)*)"', re.M)
# a script's own error and warning functions: the call says it is one, whatever its words.
# DKMS (dkms.in): `die 10 $"Bad return status ..."`, `report_build_problem 7 \` with its
# text on the next line, `warn $"..."`, `error "..."` ($"...": bash's translated string);
# error() prints "Error! " before the text, warn() "Warning: "
_SHELL_CALL_RE = re.compile(
    r'^[ \t]*(?:[^\n"]*?(?:\|\||&&|;|\bthen|\belse)[ \t]+)?'  # `[[ -e $f ]] || die ...`
    r"(die|error|warn|report_build_problem)[ \t]+(?:\d+[ \t]+)?(?:\\\n[ \t]*)?"
    r'\$?"((?:[^"\\]|\\.)*)"',
    re.M,
)
# a shell function's header, `name() {` or `function name {`, and its end, a `}` or `)`
# (a subshell function's) alone at the start of a line
_SHELL_FUNCTION_RE = re.compile(
    r"^(?:function[ \t]+)?([A-Za-z_][\w-]*)[ \t]*\(\)|^function[ \t]+([A-Za-z_][\w-]*)", re.M
)
_SHELL_END_RE = re.compile(r"^[})][ \t]*$", re.M)
# a script with an error function of its own reports its errors through it: its other
# echoes are news ("Certificate or key are missing, generating them ..."), unless they
# say themselves that something failed ("error", "fatal", "failed", "failure")
_SHELL_OWN_ERROR_RE = re.compile(
    r"^(?:function[ \t]+)?(?:die|error|fatal|err|report_build_problem)[ \t]*\(\)", re.M
)
_SHELL_ERROR_MARK_RE = re.compile(r"(?i)\b(?:error|fatal|fail(?:ed|ure)?)\b")
# a script's help text is no error, whatever its words ("[-noert] Do not treat missing ERT
# FW as a build error")
_SHELL_HELP_FUNCTIONS = {"usage", "help", "print_usage", "show_usage", "print_help"}
_SHELL_FAIL_RE = re.compile(
    r"(?i)\b(?:error|fail|failed|not found|missing|unsupported|cannot|can't|unable|invalid|must)\b"
)
_SHELL_VAR_RE = re.compile(r"\$(?:\{[^}]*\}|\(\([^)]*\)\)|\([^)]*\)|\w+|[@*#?0-9])")
# example tests and tools print failures to a stream: `std::cout << "ERROR: ..."`, or
# through boost::format (xrt-smi's `std::cerr << boost::format("Error: ... %s\n") % x`)
_STREAM_RE = re.compile(
    r"std::(?:cout|cerr)\s*<<\s*(?:boost::format\s*\(\s*)?"
    r'"((?:ERROR|Error|TEST FAILED|FAILED)[^"\\]*(?:\\.[^"\\]*)*)"'
)
# a message formatted into a variable and thrown after it (XRT's tools and xclbinutil):
# `auto errMsg = boost::format("ERROR: ... %s") % x;` or `boost::format errMsg("...");`,
# then `throw std::runtime_error(errMsg.str())` or `(boost::str(errMsg))`
_NAMED_FORMAT_RE = re.compile(
    r"(?:\bauto\s+(\w+)\s*=\s*boost::format\s*\(|\bboost::format\s+(\w+)\s*\()\s*"
    r'"((?:[^"\\\n]|\\.)*)"\s*\)'
)
_THROWN_SPAN = 600  # the characters after the format in which its throw is written
# a report that found no device says so in its text, not through an error call
_NO_DEVICES_RE = re.compile(r'<<\s*"(\s*0 devices? found[^"\\]*)"')
_LITERAL_RE = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_FUNCTION_RE = re.compile(
    r"^(?!\s)(?:[\w<>:,~]+[ \t\n\*&]+)*?([A-Za-z_~][\w:~]*)\s*\(([^;{}]*?)\)\s*"
    r"(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?\n?\{",
    re.MULTILINE,
)
_NOT_FUNCTIONS = {"if", "for", "while", "switch", "return", "sizeof", "else"}
# MLIR's diagnostics (mlir-aie's passes and tools): op.emitOpError("text") << value << "text",
# emitError(loc, "text"), emitError(loc) << "text"; MLIR prints them "error: <loc>: 'op' op
# text" (emitOpError) or "error: <loc>: text", a warning likewise
_MLIR_EMIT_RE = re.compile(r"(?<![\w:])emit(?:Op)?(Error|Warning)\s*\(")
_MLIR_CHAIN = 400  # characters after the call in which its "<<" chain is read, to its ";"


def _unescape(literal: str) -> str:
    return literal.replace('\\"', '"').replace("\\n", " ").replace("\\t", " ").replace("\\\\", "\\")


def _call_args(text: str, start: int) -> list[str]:
    """Top-level arguments of the call whose "(" is at text[start-1]."""
    return _call(text, start)[0]


def _call(text: str, start: int) -> tuple[list[str], int]:
    """The top-level arguments of the call whose "(" is at text[start-1], and the offset
    just after its closing ")"."""
    depth, args, current, index = 1, [], [], start
    while index < len(text) and depth:
        char = text[index]
        if char == '"':
            end = text.index('"', index + 1) if '"' in text[index + 1 :] else len(text)
            while text[end - 1] == "\\" and text[end - 2] != "\\" and '"' in text[end + 1 :]:
                end = text.index('"', end + 1)
            current.append(text[index : end + 1])
            index = end + 1
            continue
        if char == "'" and index + 2 < len(text):
            close = text.find("'", index + 1)
            if close < 0:
                close = index
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
    return [a.strip() for a in args], index + 1


def _runtime(expression: str) -> str:
    """The placeholder of a piece computed at run time: "\x01" for a caught exception's own
    text (`e.what()`), which makes the message a caller passing its callee's failure up,
    "\x00" for any other value."""
    return "\x01" if re.search(r"\.\s*what\s*\(\s*\)", expression) else "\x00"


def _template(argument: str) -> str | None:
    """The literal text of a format argument; pieces computed at run time become "\x00"."""
    literals = list(_LITERAL_RE.finditer(argument))
    if not literals:
        return None
    pieces: list[str] = []
    position = 0
    for literal in literals:
        before, after = argument[: literal.start()].rstrip(), argument[literal.end() :].lstrip()
        if before.endswith("[") and after.startswith("]"):
            continue  # a subscript's key (model_info["details"]): part of a run-time value
        between = argument[position : literal.start()]
        if pieces and re.search(r"[\w\)\]]", between.replace("boost::format", "")):
            pieces.append(_runtime(between))
        pieces.append(_unescape(literal.group(1)))
        position = literal.end()
    tail = argument[position:]
    if re.search(r"(?:\+|<<)\s*[\w(]", tail):
        pieces.append(_runtime(tail))
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
            template += SHIM_ERR_SUFFIX
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
    for match in _NO_DEVICES_RE.finditer(text):  # ReportHost: "  0 devices found"
        messages.append(("error", match.group(1).strip(), function_at(match.start()), False))
    for match in _STREAM_RE.finditer(text):
        template = _unescape(match.group(1)).strip()
        said = re.sub(r"^(?:ERROR|Error)\b[\s:()\[]*", "", template)
        if re.search(r"[A-Za-z]{2}", _SPEC_RE.sub("", said)):
            # a tag alone ("ERROR: %s", "Error:") prints another message: it is found
            # where that one is thrown; "TEST FAILED!" says what failed
            messages.append(("error", template, function_at(match.start()), False))
    for match in _HEADER_PRINT_RE.finditer(text):
        args = _call_args(text, text.index("(", match.start()) + 1)
        template = _template(args[1]) if len(args) > 1 else None
        if template:
            level = "error" if match.group(1).upper() == "ERROR" else "warning"
            messages.append((level, template, function_at(match.start()), False))
    for match in _HEADER_PRINT_TAG_RE.finditer(text):
        args = _call_args(text, text.index("(", match.start()) + 1)
        template = _template(args[1]) if len(args) > 1 else None
        said = (template or "").replace("\x00", " ").replace("\x01", " ")
        if template and _HEADER_FAIL_RE.search(said) and _telling(template):
            level = "warning" if template.lower().startswith("warning") else "error"
            messages.append((level, template, function_at(match.start()), False))
    for match in _LOG_STREAM_RE.finditer(text):
        stream = match.group(2).replace("std::endl", "")
        template = _template(stream)  # a value streamed after the last literal included
        if template:
            level = "error" if match.group(1) == "ERROR" else "warning"
            messages.append((level, template, function_at(match.start()), False))
    for match in _NAMED_FORMAT_RE.finditer(text):
        name = match.group(1) or match.group(2)
        after = text[match.end() : match.end() + _THROWN_SPAN]
        thrown = re.search(
            rf"\bthrow\s+[\w:]+\s*\([^;]*?(?:\b{name}\.str\(\)|boost::str\(\s*{name}\s*\))", after
        )
        if thrown is None or re.search(rf"\b{name}\s*=[^=]", after[: thrown.start()]):
            continue  # not thrown, or given another format before the throw
        template = _unescape(match.group(3)).strip()
        if re.search(r"[A-Za-z]{3}", _SPEC_RE.sub("", template)):
            messages.append(("error", template, function_at(match.start()), False))
    for match in _MLIR_EMIT_RE.finditer(text):
        args, close = _call(text, match.end())
        literal = next((arg for arg in args if _LITERAL_RE.match(arg)), "")
        after = text[close : close + _MLIR_CHAIN]
        chain = after[: after.index(";")] if ";" in after else ""
        chain = chain if chain.lstrip().startswith("<<") else ""
        template = _template(" << ".join(part for part in (literal, chain.lstrip()[2:]) if part))
        if template:
            level = "error" if match.group(1) == "Error" else "warning"
            messages.append((level, template, function_at(match.start()), False))
    for match in _SEND_RE.finditer(text):
        args = _call_args(text, text.index("(", match.start()) + 1)
        template = _template(args[2]) if len(args) > 2 else None
        if template:
            level = "warning" if match.group(1) == "warning" else "error"
            messages.append((level, template, function_at(match.start()), False))
    return messages


def extract_cmake(text: str) -> list[tuple[str, str, str, bool]]:
    """message(FATAL_ERROR|SEND_ERROR|WARNING "...") of a CMake file; ${VAR} -> "\x00"."""
    found = []
    for match in _CMAKE_RE.finditer(text):
        literal = " ".join(_unescape(m.group(1)) for m in _LITERAL_RE.finditer(match.group(2)))
        template = re.sub(r"\$\{[^}]*\}", "\x00", literal).strip()
        if re.search(r"[A-Za-z]{3}", template.replace("\x00", "")):
            level = "warning" if match.group(1).upper() == "WARNING" else "error"
            found.append((level, template, "", False))
    return found


def _shell_functions(text: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of each shell function, from its header to its closing line."""
    spans = []
    for match in _SHELL_FUNCTION_RE.finditer(text):
        end = _SHELL_END_RE.search(text, match.end())
        spans.append(
            (match.start(), end.end() if end else len(text), match.group(1) or match.group(2))
        )
    return spans


def _shell_template(literal: str) -> str:
    template = _SHELL_VAR_RE.sub("\x00", _unescape(literal)).replace("%s", "\x00").strip()
    template = re.sub(r"\$\(.*$", "\x00", template)  # a command whose own quotes end the match
    return re.sub(r"\\e\[[0-9;]*m|\\033\[[0-9;]*m", "", template).strip()


def extract_shell(text: str) -> list[tuple[str, str, str, bool]]:
    """A shell script's echo/printf lines that say something failed, and every call of its
    die/error/warn/report_build_problem functions; the function is the shell function the
    line is in ("" at the script's top level)."""
    spans = _shell_functions(text)

    def function_at(position: int) -> str:
        return next((name for start, end, name in spans if start <= position < end), "")

    own_error = _SHELL_OWN_ERROR_RE.search(text) is not None
    found: list[tuple[int, tuple[str, str, str, bool]]] = []
    for match in _SHELL_RE.finditer(text):
        literal = _unescape(match.group(1))
        if own_error and not _SHELL_ERROR_MARK_RE.search(literal):
            continue
        function = function_at(match.start())
        if _SHELL_FAIL_RE.search(literal) and function not in _SHELL_HELP_FUNCTIONS:
            template = _shell_template(match.group(1))
            found.append((match.start(), ("error", template, function, False)))
    for match in _SHELL_CALL_RE.finditer(text):
        level = "warning" if match.group(1) == "warn" else "error"
        template = _shell_template(match.group(2))
        found.append((match.start(), (level, template, function_at(match.start()), False)))
    return [
        message for _, message in sorted(found, key=lambda item: item[0]) if _telling(message[1])
    ]


def _telling(template: str) -> bool:
    """Enough words to say which script printed it: four, or three when nothing in it is
    computed at run time ("%s does not exist" is anyone's; "bitbake xrt failed" is not)."""
    words = re.findall(r"[A-Za-z][A-Za-z0-9_.-]*", template.replace("\x00", " "))
    letters = len(re.sub(r"[^A-Za-z]", "", template))
    return letters >= 8 and len(words) >= (4 if "\x00" in template else 3)


def extract_any(path: str, text: str) -> list[tuple[str, str, str, bool]]:
    """The messages of one file, by its kind (C/C++, CMake, shell, Python)."""
    if path.endswith(".py"):
        return extract_python(text)
    if path.endswith((".cmake", "CMakeLists.txt")):
        return extract_cmake(text)
    if path.endswith(".sh") or re.match(r"#![^\n]*\b(?:ba|da|z)?sh\b", text):
        return extract_shell(text)  # a script by its name, or by its #! line (dkms.in)
    return extract(text)
