"""Known failures of the NPU stack: signatures -> code, family, severity, cause, fix.

Pure: the base is a YAML file shipped in the package (data/knowledge.yaml). Entries are
grouped in families (firmware, power, iommu, ...); each names its evidence (field cases in
tests/fixtures/field) and/or its upstream source (file:function of a message template in
data/upstream_messages.json). Specific entries name one failure; generic entries (one or
more per family) catch the family's other messages, on error-level lines only, and so do
lines whose upstream source file belongs to a family. Errno values in a line refine the
cause; an ioctl named in a line is decoded (ioctls.py); named groups of the matching
signature fill `{name}` fields of the cause and fix (the header, symbol or module a line
names), and a build line's header or symbol names the package that provides it
(build_log.py). What is recognised is classified line by line in diagnosis/classify.py (which
imports this module, never the other way round); what is not recognised is left to the
verdict (diagnosis/log_verdict.py), never guessed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.diagnosis.build_log import provider, std_header, unknown_provider
from xdnaforge.diagnosis.errnos import NAMES, decode
from xdnaforge.diagnosis.fw_messages import answer as fw_answer
from xdnaforge.diagnosis.ioctls import describe_ioctl
from xdnaforge.diagnosis.signature import Signature, alternation, compile_signature
from xdnaforge.errors import ConfigError
from xdnaforge.schema import Reader
from xdnaforge.yamlfile import parse

DATA_DIR = Path(__file__).resolve().parent / "data"  # shipped in the package
SHIPPED = "xdnaforge/diagnosis/data/knowledge.yaml"
SEVERITIES = ("error", "warning", "info")
# lines that say something failed: a line like this that nothing explains is an unknown
# failure, and a log with one is never called healthy
FAILURE_RE = re.compile(
    "|".join(
        (
            # "error" as a word, not a piece of a name ("libgpg-error-dev", "-Wno-error=")
            r"(?<![-\w])ERROR(?![-\w])|\*ERROR\*|\b[Ee]rror[:!]|(?<![-\w])error(?![-\w])",
            r"(?i:\bfail(ed|ure|s)?\b)",
            r"Error\(s\)\s*: \S|\bfatal\b|\bFATAL\b|Traceback|[Pp]ermission denied",
            r"\bret -\d+|\(err=-?\d+\)",
            r"\bInvalid\b|\bincompatible\b|\bnot alive\b|\bis not installed\b|(?i:\btimed? ?out\b)",
            r"not available\. Skipping|\bunable to\b|\b[Cc]annot\b|\bCMake Error\b",
            # make, the C++ runtime and the shell say a step died without a failure word
            r"\*\*\* .*\bError \d+|\bterminate called\b|\bAborted\b|\bcore dumped\b",
            r"\bSegmentation fault\b|\*\*\*Exception|\bundefined reference\b|\bUnknown symbol\b",
            r"^\s*what\(\): ",  # the message of an uncaught C++ exception
            # Rust's panic and its message, the last line of a Python traceback ("ValueError:")
            r"\bpanicked at\b|on an `Err` value\b|^[\w.]*[a-z](?:Error|Exception): ",
            # a sentence that opens with "Error" ("Error encountered while running: aie-opt")
            r"^[^\w\n]{0,4}Error (?!count\b)[a-z]",
            # the kernel: a WARNING, BUG or Oops with its call trace is never healthy
            r"^WARNING: CPU: \d+ PID: |^WARNING: \S+:\d+ at |\bBUG: |\bOops\b|\bCall Trace:",
            r"\bgeneral protection fault\b|\bcut here\b",
            r"\bIO_PAGE_FAULT\b|\bpage fault\b|\bKernel panic\b",
        )
    )
)
# FAILURE_RE's search as a test, each branch tried only on lines that contain its words
looks_failed = alternation(FAILURE_RE).found
# a line that names the NPU stack (driver, firmware, XRT, its tools, FastFlowLM)
NPU_RE = re.compile(
    r"(?i)amdxdna|amdnpu|xdna|\bnpu|xrt|/dev/accel|\bert_|hwctx|\baie2?_|\[error\]|hclock|npuclk"
)
ANNOTATION = "#### ["  # labels added when field logs were collected, not log text
_ERRNO_NAMES = {name for name, _ in NAMES.values()}


@dataclass(frozen=True, slots=True)
class Family:
    id: str
    title: str
    files: tuple[str, ...]  # upstream source files whose messages belong to this family
    npu_only: bool = False  # generic entries read only lines that name the NPU stack


@dataclass(frozen=True, slots=True)
class Entry:
    code: str
    severity: str
    title: str
    signatures: tuple[Signature, ...]
    cause: str
    fix: str
    references: tuple[str, ...]
    family: str = ""
    evidence: tuple[str, ...] = ()  # field case ids (tests/fixtures/field/<id>-*)
    upstream: tuple[str, ...] = ()  # "file:function" of upstream message templates
    generic: bool = False
    errno: tuple[tuple[str, str], ...] = ()  # (ENAME, refined cause)
    after: tuple[str, ...] = ()  # codes whose failure this one follows from (ranked later)
    # reports only that a step it called failed (the driver core's "probe ... failed"): it
    # stands only when nothing else was found, as a caller's catalogue template does
    caller: bool = False
    # a specific entry in general words (a version check's, whatever the program): it stands
    # only where no other specific entry of its family was found, as a generic entry does
    fallback: bool = False


@dataclass(frozen=True, slots=True)
class Diagnosis:
    code: str
    severity: str
    title: str
    cause: str
    fix: str
    references: tuple[str, ...]
    evidence: str  # the line that matched
    family: str = ""
    errno: str = ""  # "ENODEV (19: No such device)" when the line carries one
    source: str = ""  # upstream template of the evidence line, when located
    ioctl: str = ""  # "DRM_IOCTL_AMDXDNA_CREATE_HWCTX (create a hardware context)"
    line: int = 0  # 1-based line of the evidence in the log (0: not from a log line)

    def as_record(self) -> dict[str, object]:
        return {
            "code": self.code,
            "family": self.family,
            "severity": self.severity,
            "title": self.title,
            "cause": self.cause,
            "fix": self.fix,
            "references": list(self.references),
            "evidence": self.evidence,
            "line": self.line,
            "errno": self.errno,
            "ioctl": self.ioctl,
            "source": self.source,
        }


def _families(reader: Reader, top: dict[str, object]) -> tuple[Family, ...]:
    found = []
    for index, item in enumerate(reader.sequence(top, "families", ())):
        path = ("families", index)
        family = reader.mapping(
            item, path, required=("id", "title"), optional=("files", "npu_only")
        )
        if family is None:
            continue
        ident = reader.string(family, "id", path)
        title = reader.string(family, "title", path)
        if ident and title:
            files = reader.strings(family, "files", path)
            npu_only = reader.boolean(family, "npu_only", path, default=False)
            found.append(Family(ident, title, files, npu_only))
    return tuple(found)


def parse_families(text: str, source: str) -> tuple[Family, ...]:
    return parse_base(text, source)[1]


def parse_knowledge(text: str, source: str) -> tuple[Entry, ...]:
    return parse_base(text, source)[0]


def parse_base(
    text: str, source: str, *, check_regexes: bool = True
) -> tuple[tuple[Entry, ...], tuple[Family, ...]]:
    """The entries and the families of one knowledge document, parsed once.

    `check_regexes`: compile every signature now; the shipped base (whose regexes the
    suite compiles) leaves each to its first line with the signature's text."""
    document = parse(text, source)
    reader = Reader(document)
    top = reader.mapping(document.data, (), required=("schema", "entries"), optional=("families",))
    top = top or {}
    families = _families(reader, top)
    family_ids = {f.id for f in families}
    entries = []
    codes: set[str] = set()
    for index, item in enumerate(reader.sequence(top, "entries", ())):
        path = ("entries", index)
        entry = reader.mapping(
            item,
            path,
            required=("code", "severity", "title", "signatures", "cause", "fix"),
            optional=(
                "references",
                "family",
                "evidence",
                "upstream",
                "generic",
                "errno",
                "after",
                "caller",
                "fallback",
            ),
        )
        if entry is None:
            continue
        code = reader.string(entry, "code", path)
        severity = reader.choice(entry, "severity", path, SEVERITIES)
        patterns = []
        for number, signature in enumerate(reader.strings(entry, "signatures", path)):
            try:
                patterns.append(compile_signature(signature, check=check_regexes))
            except re.error as error:
                reader.problem((*path, "signatures", number), f"bad regular expression: {error}")
        if code in codes:
            reader.problem((*path, "code"), f"code '{code}' is used twice")
        family = reader.string(entry, "family", path, default="") or ""
        if family_ids and family not in family_ids:
            reader.problem((*path, "family"), f"unknown family '{family}'")
        refinements = []
        raw = reader.mapping(entry.get("errno", {}), (*path, "errno"), free_keys=True) or {}
        for name in raw:
            if name not in _ERRNO_NAMES:
                reader.problem((*path, "errno", name), f"unknown errno name '{name}'")
            text_value = reader.string(raw, name, (*path, "errno"))
            if text_value:
                refinements.append((name, text_value))
        title = reader.string(entry, "title", path)
        cause = reader.string(entry, "cause", path)
        fix = reader.string(entry, "fix", path)
        if code and severity and title and cause and fix:
            codes.add(code)
            entries.append(
                Entry(
                    code=code,
                    severity=severity,
                    title=title,
                    signatures=tuple(patterns),
                    cause=cause,
                    fix=fix,
                    references=reader.strings(entry, "references", path),
                    family=family,
                    evidence=reader.strings(entry, "evidence", path),
                    upstream=reader.strings(entry, "upstream", path),
                    generic=reader.boolean(entry, "generic", path, default=False),
                    errno=tuple(refinements),
                    after=reader.strings(entry, "after", path),
                    caller=reader.boolean(entry, "caller", path, default=False),
                    fallback=reader.boolean(entry, "fallback", path, default=False),
                )
            )
    for index, found in enumerate(entries):
        for code in set(found.after) - codes - {"*"}:
            reader.problem(("entries", index, "after"), f"unknown code '{code}'")
    if reader.problems:
        raise ConfigError(reader.problems)
    return tuple(entries), families


def _text() -> str:
    return DATA_DIR.joinpath("knowledge.yaml").read_text("utf-8")


@functools.cache
def _load_base() -> tuple[tuple[Entry, ...], tuple[Family, ...]]:
    # one parse for both: doctor's start-up is part of its time on a journal
    return parse_base(_text(), SHIPPED, check_regexes=False)


def load_knowledge() -> tuple[Entry, ...]:
    return _load_base()[0]


def load_families() -> tuple[Family, ...]:
    return _load_base()[1]


def known_codes() -> frozenset[str]:
    """Every code the knowledge base can report (stable: other records refer to them)."""
    return frozenset(entry.code for entry in load_knowledge())


def by_code(code: str, evidence: str = "") -> Diagnosis:
    """The entry for `code`, as a diagnosis with the given evidence."""
    entry = next(e for e in load_knowledge() if e.code == code)
    return make_diagnosis(entry, evidence)


class _Fields(dict[str, str]):
    """Named groups of a signature match; a field the line did not name stays `{name}`."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _fields(entry: Entry, evidence: str) -> _Fields:
    found = _Fields()
    for pattern in entry.signatures:
        match = pattern.search(evidence)
        if match:
            found.update({k: v for k, v in match.groupdict().items() if v})
            break
    if "stdname" in found and "header" not in found:  # `std::out_of_range` -> <stdexcept>
        found["header"] = std_header(found["stdname"]) or "the standard header that declares it"
    if "provider" not in found:
        header, package = found.get("header", ""), found.get("package", "")
        named = provider(header, found.get("symbol", ""), package)
        if named:
            found["provider"] = named
        elif header or package:
            found["provider"] = unknown_provider(header or package)
    return found


def make_diagnosis(
    entry: Entry, evidence: str, source: str = "", line: int = 0, message: str = ""
) -> Diagnosis:
    """`message`: the evidence without its journal prefix, which signatures anchor on."""
    errno = decode(evidence) if evidence else None
    fields = _fields(entry, message or evidence)
    cause = entry.cause.format_map(fields) if "{" in entry.cause else entry.cause
    fix = entry.fix.format_map(fields) if "{" in entry.fix else entry.fix
    refined = dict(entry.errno).get(errno.name) if errno else None
    if refined:
        cause = f"{refined} {cause}"
    answered = fw_answer(evidence) if "opcode" in evidence else None
    if answered is not None:
        cause = f"{answered.describe()} {cause}"
    return Diagnosis(
        code=entry.code,
        severity=entry.severity,
        title=entry.title,
        cause=cause,
        fix=fix,
        references=entry.references,
        evidence=evidence,
        family=entry.family,
        errno=errno.describe() if errno else "",
        source=source,
        ioctl=describe_ioctl(evidence),
        line=line,
    )


def is_failure_line(line: str) -> bool:
    return not line.startswith(ANNOTATION) and looks_failed(line)


def unexplained_failures(text: str, diagnoses: list[Diagnosis]) -> list[str]:
    """Failure-looking lines no diagnosis accounts for (for "unknown", not a guess)."""
    explained = {d.evidence for d in diagnoses}
    codes = {d.code for d in diagnoses if d.severity == "error"}
    lines = []
    for line in text.splitlines():
        if not is_failure_line(line) or line.strip() in explained:
            continue
        lines.append(line.strip())
    # a known error usually drags follow-up lines along (probe failed, ...): those are not
    # a second, unknown failure
    return [] if codes else lines
