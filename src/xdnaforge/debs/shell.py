"""Maintainer scripts judged by what they are proven to do, not by patterns they avoid.

A pattern match fails open: `sudo -n modprobe`, `m=modprobe; $m`, `sh -c '...'`, a Perl
postinst or `base64 -d | sh` all pass one. Here a script is clean only when every command
in it is one this module understands and knows to be harmless: the commands debhelper and
CPack generate (ldconfig, dpkg-trigger, dpkg-maintscript-helper, deb-systemd-helper,
update-alternatives, py3compile, ...), shell structure (if, case, for, while, functions),
and file operations whose arguments name no kernel or module-loading path. Anything else is
a Problem with its line: an unknown or non-literal command name, a command substitution,
a shell, eval or `.`, a wrapper (sudo, env, xargs, timeout, busybox ...), a redirection into
a sensitive or non-literal path, a NUL byte (dash drops it from a command name), a script
that is not POSIX shell (Perl, Python), a line the tokenizer cannot read.
Pure text in, problems out; the audit (debs/rules.py) turns them into findings.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass

# shells dpkg may run a script with; no "#!" at all is /bin/sh too (execvp's ENOEXEC rule)
SHELLS = frozenset({"/bin/sh", "/usr/bin/sh", "/bin/dash", "/usr/bin/dash", "/bin/bash"})
SHELL_OPTIONS = frozenset({"", "-e", "-eu", "-ue", "-u", "-x", "-ex", "-e -x"})

# what debhelper's and CPack's generated snippets run, and shell builtins with no side
# effect outside the script; each is harmless as long as no argument names a sensitive path
HARMLESS = frozenset(
    {
        ":",
        "[",
        "test",
        "true",
        "false",
        "echo",
        "printf",
        "set",
        "exit",
        "return",
        "shift",
        "local",
        "unset",
        "export",
        "readonly",
        "break",
        "continue",
        "wait",
        "umask",
        "ldconfig",
        "dpkg-trigger",
        "dpkg-maintscript-helper",
        "dpkg-query",
        "deb-systemd-helper",
        "deb-systemd-invoke",
        "systemctl",
        "invoke-rc.d",
        "update-rc.d",
        "update-alternatives",
        "py3compile",
        "py3clean",
        "pypy3compile",
        "pypy3clean",
        "pycompile",
        "pyclean",
        "update-desktop-database",
        "update-mime-database",
        "gtk-update-icon-cache",
        "glib-compile-schemas",
        "install-info",
        "getent",
        "rm",
        "rmdir",
        "mkdir",
        "chmod",
        "chown",
        "touch",
        "ln",
        "cp",
        "mv",
        "install",
        "cat",
        "grep",
        "which",
        "read",
        "type",
        "hash",
        "adduser",
        "addgroup",
        "useradd",
        "groupadd",
        "usermod",
        "systemd-sysusers",
        "systemd-tmpfiles",
    }
)
# of those, the ones that only read or print: their arguments may name any path
READ_ONLY = frozenset(
    {":", "[", "test", "true", "false", "echo", "printf", "cat", "grep", "which", "getent"}
    | {"dpkg-query", "read", "exit", "return", "set", "shift", "local", "unset", "wait"}
    | {"type", "hash"}
)
# commands harmless only with these first arguments: a lookup or a comparison, never an action
QUERIES = {
    "command": frozenset({"-v", "-V"}),
    "dpkg": frozenset(
        {"--compare-versions", "--print-architecture", "--assert-multi-arch", "-L", "-s", "-l"}
    ),
}
# words that start, separate or end shell structure rather than name a command
RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!"}
)
SEPARATORS = frozenset({";", "&", "&&", "||", "|", "(", ")", ";;", ";&", ";;&", "\n"})
REDIRECTS = frozenset({">", ">>", "<", "<>", ">|", ">&", "<&", "&>", "&>>"})
SAFE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "1", "2", "-"})
CONFMODULE = "/usr/share/debconf/confmodule"  # debconf's library, sourced by config scripts
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_LOOKUP = re.compile(r"\$\(command -v [A-Za-z0-9_.+-]+\)")
_FUNCTION = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\(\s*\)")


@dataclass(frozen=True, slots=True)
class Problem:
    line: int  # 1-based line of the script
    text: str  # the line, stripped
    reason: str
    # a generated line harmless only if the package it names is the one being audited and
    # none of its .py paths carries shell syntax: the package it names (the audit checks)
    own_py_names: str | None = None


_PACKAGE = r"(?P<package>[a-z0-9][a-z0-9+.-]+)(?::[a-z0-9-]+)?"


def _template(text: str) -> re.Pattern[str]:
    """A generated line, matched whole, with the package name as its only variable."""
    return re.compile(re.escape(text).replace(re.escape("{package}"), _PACKAGE) + r"\Z")


# lines debhelper generates verbatim (dh_python3's prerm, as in Debian forky's python3-xrt), each
# harmless as written; the sed one runs `rm "DIR/__pycache__/NAME".*` through the shell for
# each .py path dpkg lists for the package, so it is harmless only when the package named is
# the audited one and no such path carries a quote, `$`, a backquote, a backslash or a newline
GENERATED: tuple[tuple[re.Pattern[str], bool], ...] = (
    (
        _template("if command -v py3clean >/dev/null 2>&1 && python3 -c 'pass' 2>/dev/null; then"),
        False,
    ),
    (
        _template(
            r"""dpkg -L {package} | sed -En -e '/^(.*)\/(.+)\.py$/s,,rm "\1/__pycache__/\2".*,e'"""
        ),
        True,
    ),
    (
        _template(
            "find /usr/lib/python3/dist-packages/ -type d -name __pycache__ -empty -print0 "
            "| xargs --null --no-run-if-empty rmdir"
        ),
        False,
    ),
)


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Logical lines: a backslash-newline joins the next line, as the shell does."""
    number, pending, start = 0, "", 0
    for number, raw in enumerate(text.split("\n"), 1):
        if not pending:
            start = number
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            pending += raw[:-1]
            continue
        yield start, pending + raw
        pending = ""
    if pending:
        yield start, pending


def _substitutes(line: str) -> bool:
    """A command substitution (`...` or $(...)) outside single quotes and escapes."""
    quoted = escaped = False
    for index, char in enumerate(line):
        if escaped:
            escaped = False
        elif quoted:
            quoted = char != "'"
        elif char == "\\":
            escaped = True
        elif char == "'":
            quoted = True
        elif char == "`" or (char == "$" and line[index + 1 : index + 2] == "("):
            return True
        elif char == "#" and (index == 0 or line[index - 1] in " \t;&|"):
            return False  # a comment
    return False


def _tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def judge(text: str, sensitive: Callable[[str], str | None]) -> list[Problem]:
    """The script's problems; `sensitive(word)` says why a path argument is a kernel or
    module-loading path (or None). An empty list is a proof: every command is known."""
    if "\0" in text:
        where = text[: text.index("\0")].count("\n") + 1
        shown = text.split("\n")[where - 1].replace("\0", "\\0").strip()
        return [Problem(where, shown, "a NUL byte (dash drops it from a command name)")]
    first = text.split("\n", 1)[0]
    if first.startswith("#!"):
        interpreter, _, options = first[2:].strip().partition(" ")
        if interpreter not in SHELLS or options.strip() not in SHELL_OPTIONS:
            return [Problem(1, first.strip(), "not a POSIX shell script: it cannot be judged")]
    problems: list[Problem] = []
    state = _State()
    for number, line in _lines(text):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        shown = line.strip()
        generated = next(
            ((m, own) for pattern, own in GENERATED if (m := pattern.match(shown))), None
        )
        if generated is not None:
            match, own = generated
            if own:
                problems.append(
                    Problem(
                        number,
                        shown,
                        "dh_python3's fallback runs, through sed's e flag, an rm built from "
                        f"each .py path of {match['package']}",
                        own_py_names=match["package"],
                    )
                )
            continue
        # debhelper's `[ -x "$(command -v systemd-tmpfiles)" ]`: a lookup, not a command
        line = _LOOKUP.sub("/usr/bin/looked-up", line)
        if _substitutes(line):
            problems.append(Problem(number, shown, "a command substitution"))
            continue
        try:
            words = _tokens(line)
        except ValueError:
            problems.append(Problem(number, shown, "a line the audit cannot read"))
            continue
        function = _FUNCTION.match(line)
        if function:
            state.functions.add(function[1])
            words = _tokens(line[function.end() :])
        for reason in _judge_words(words, state, sensitive):
            problems.append(Problem(number, shown, reason))
            break
    return problems


class _State:
    """What carries from line to line: functions defined, a case or for being read."""

    __slots__ = ("functions", "in_case", "skip_to")

    def __init__(self) -> None:
        self.functions: set[str] = set()
        self.in_case = ""  # "pattern" or "body" inside case ... esac
        self.skip_to = ""  # "in" after case, "do" after for


def _judge_words(
    words: list[str], state: _State, sensitive: Callable[[str], str | None]
) -> Iterator[str]:
    """Why the commands of one line are not proven harmless (the first reason is enough)."""
    at_start = True  # the next word is in command position
    command = ""  # the command whose arguments are being read
    functions = state.functions
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if state.skip_to:  # "for x in a b c" and "case WORD in": words, not commands
            if word == state.skip_to:
                state.skip_to = ""
                at_start = True
            continue
        if state.in_case == "pattern":  # "configure|abort-upgrade)": a pattern, then commands
            if word == "esac":
                state.in_case = ""
            elif word == ")":
                state.in_case = "body"
                at_start = True
            continue
        if word in (";;", ";&", ";;&") and state.in_case:
            state.in_case = "pattern"
            continue
        if word in SEPARATORS:
            at_start = True
            continue
        if word in REDIRECTS:
            target = words[index] if index < len(words) else ""
            index += 1
            if target not in SAFE_TARGETS:
                why = sensitive(target)
                if why or "$" in target:
                    yield f"writes to {target!r}" + (f" ({why})" if why else "")
            continue
        if not at_start and word not in ("esac", "fi", "done", "}"):
            why = None if command in READ_ONLY else sensitive(word)
            if why:
                yield f"names {word!r} ({why})"
            continue
        if word in RESERVED or word in ("fi", "done", "esac"):
            if word == "esac":
                state.in_case = ""
            continue
        if word == "for":
            state.skip_to = "do"
            continue
        if word == "case":
            state.skip_to, state.in_case = "in", "pattern"
            continue
        if _ASSIGNMENT.match(word):
            if "$" in word.partition("=")[2] and sensitive(word.partition("=")[2]):
                yield f"an assignment names a sensitive path: {word!r}"
            continue  # "X=1 cmd": the command follows
        at_start = False
        if word in (".", "source"):
            target = words[index] if index < len(words) else ""
            if target == CONFMODULE:
                index += 1
                continue
            yield f"sources {target!r}: a file the audit does not read"
            return
        if "$" in word or "*" in word or "?" in word or "[" in word[1:]:
            yield f"the command name {word!r} is not a literal"
            return
        name = word.rpartition("/")[2] if word.startswith("/") else word
        command = name
        if "/" in word and not word.startswith(("/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/")):
            yield f"runs {word!r}: a program the audit does not read"
            return
        if name in functions or name in HARMLESS:
            continue
        if name in QUERIES and index < len(words) and words[index] in QUERIES[name]:
            command = "test"  # a lookup: what follows is read, not run
            index += 1
            if name == "command" and index < len(words):
                index += 1  # the name looked up
            continue
        yield f"runs {name!r}: not a command the audit knows to be harmless"
        return
