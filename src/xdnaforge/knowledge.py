"""Known failures of the NPU stack: signatures -> code, severity, cause, fix, references.

Pure: the base is a YAML file shipped in the package (data/knowledge.yaml); `diagnose`
takes text (a kernel log, xrt-smi output, a build log) and returns what it recognises.
What it does not recognise is said to be unknown, never guessed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources

from .errors import ConfigError
from .schema import Reader
from .yamlfile import parse

SEVERITIES = ("error", "warning", "info")
# lines that look like a failure: used to tell "healthy" from "an unknown failure"
_FAILURE_RE = re.compile(
    r"(\bERROR\b|\*ERROR\*|\berror:|\bfailed\b|\bFAILED\b|Error\(s\)|\bfatal\b|Traceback)"
)
_ANNOTATION = "#### ["  # labels added when field logs were collected, not log text


@dataclass(frozen=True, slots=True)
class Entry:
    code: str
    severity: str
    title: str
    signatures: tuple[re.Pattern[str], ...]
    cause: str
    fix: str
    references: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Diagnosis:
    code: str
    severity: str
    title: str
    cause: str
    fix: str
    references: tuple[str, ...]
    evidence: str  # the line that matched

    def as_record(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity,
            "title": self.title,
            "cause": self.cause,
            "fix": self.fix,
            "references": list(self.references),
            "evidence": self.evidence,
        }


def parse_knowledge(text: str, source: str) -> tuple[Entry, ...]:
    document = parse(text, source)
    reader = Reader(document)
    top = reader.mapping(document.data, (), required=("schema", "entries")) or {}
    entries = []
    codes: set[str] = set()
    for index, item in enumerate(reader.sequence(top, "entries", ())):
        path = ("entries", index)
        entry = reader.mapping(
            item,
            path,
            required=("code", "severity", "title", "signatures", "cause", "fix"),
            optional=("references",),
        )
        if entry is None:
            continue
        code = reader.string(entry, "code", path)
        severity = reader.choice(entry, "severity", path, SEVERITIES)
        patterns = []
        for number, signature in enumerate(reader.strings(entry, "signatures", path)):
            try:
                patterns.append(re.compile(signature))
            except re.error as error:
                reader.problem((*path, "signatures", number), f"bad regular expression: {error}")
        if code in codes:
            reader.problem((*path, "code"), f"code '{code}' is used twice")
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
                )
            )
    if reader.problems:
        raise ConfigError(reader.problems)
    return tuple(entries)


@functools.cache
def load_knowledge() -> tuple[Entry, ...]:
    text = resources.files("xdnaforge").joinpath("data/knowledge.yaml").read_text("utf-8")
    return parse_knowledge(text, "xdnaforge/data/knowledge.yaml")


def by_code(code: str, evidence: str = "") -> Diagnosis:
    """The entry for `code`, as a diagnosis with the given evidence."""
    entry = next(e for e in load_knowledge() if e.code == code)
    return _diagnosis(entry, evidence)


def _diagnosis(entry: Entry, evidence: str) -> Diagnosis:
    return Diagnosis(
        code=entry.code,
        severity=entry.severity,
        title=entry.title,
        cause=entry.cause,
        fix=entry.fix,
        references=entry.references,
        evidence=evidence,
    )


def diagnose(text: str, entries: tuple[Entry, ...] | None = None) -> list[Diagnosis]:
    """Every known signature in `text`, once per code, in the order they first appear."""
    found: dict[str, tuple[int, Diagnosis]] = {}
    for number, line in enumerate(text.splitlines()):
        if line.startswith(_ANNOTATION):
            continue
        for entry in entries or load_knowledge():
            if entry.code in found:
                continue
            if any(pattern.search(line) for pattern in entry.signatures):
                found[entry.code] = (number, _diagnosis(entry, line.strip()))
    return [diagnosis for _, diagnosis in sorted(found.values(), key=lambda item: item[0])]


def unexplained_failures(text: str, diagnoses: list[Diagnosis]) -> list[str]:
    """Failure-looking lines no diagnosis accounts for (for "unknown", not a guess)."""
    explained = {d.evidence for d in diagnoses}
    codes = {d.code for d in diagnoses if d.severity != "info"}
    lines = []
    for line in text.splitlines():
        if line.startswith(_ANNOTATION) or not _FAILURE_RE.search(line):
            continue
        if line.strip() in explained:
            continue
        lines.append(line.strip())
    # a known error usually drags follow-up lines along (probe failed, ...): those are not
    # a second, unknown failure
    return [] if codes else lines
