"""The audit's verdicts as a record (audit.json, `--json`) and as the text a user reads.

Every block is shown with the file or script line, the rule and what a packager does about
it (the rule's fix); text from a package is made safe to print first (`shown`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

from xdnaforge.debs.rules import BLOCK, RULES, Finding, Verdict


def finding_record(finding: Finding) -> dict[str, str | None]:
    return {
        "rule": finding.rule,
        "severity": finding.severity,
        "path": finding.path,
        "evidence": finding.evidence,
        "waiver": finding.waiver,
    }


def audit_body(verdicts: Sequence[Verdict], errors: Sequence[tuple[str, str]]) -> dict[str, object]:
    """The audit record's content (audit.json, or --json for any files)."""
    blocked = [v for v in verdicts if v.verdict == BLOCK]
    overall = "error" if errors else ("block" if blocked else "pass")
    return {
        "verdict": overall,
        "packages": [
            {
                "file": v.file,
                "package": v.package,
                "version": v.version,
                "architecture": v.architecture,
                "size": v.size,
                "sha256": v.sha256,
                "verdict": v.verdict,
                "observation": v.observation,
                "findings": [finding_record(f) for f in v.findings],
            }
            for v in verdicts
        ],
        "errors": [{"file": file, "reason": reason} for file, reason in errors],
        "rules": {
            r.id: {"severity": r.severity, "title": r.title, "fix": r.fix} for r in RULES.values()
        },
    }


def shown(text: str) -> str:
    """Text from a package, safe to print: a character that is not printable (an escape
    sequence, a carriage return, a bidi override) is written as its Python escape, so a
    file name cannot redraw the terminal into a fake PASS."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def format_verdicts(
    verdicts: Sequence[Verdict], errors: Sequence[tuple[str, str]], shown_per_rule: int = 3
) -> str:
    lines = []
    for verdict in verdicts:
        name = shown(PurePosixPath(verdict.file).name)
        package, version = shown(verdict.package), shown(verdict.version)
        lines.append(f"{verdict.verdict.upper():5} {package} {version} ({name})")
        per_rule: dict[str, int] = {}
        for finding in verdict.findings:
            per_rule[finding.rule] = per_rule.get(finding.rule, 0) + 1
            count = per_rule[finding.rule]
            if count <= shown_per_rule:
                waived = f" (waived: {finding.waiver})" if finding.waiver else ""
                lines.append(
                    f"      {finding.rule} {finding.severity}: {shown(finding.path)}: "
                    f"{shown(finding.evidence)}{waived}"
                )
        for rule, count in sorted(per_rule.items()):
            if count > shown_per_rule:
                lines.append(f"      {rule}: {count - shown_per_rule} more like these")
        blocking = sorted({f.rule for f in verdict.findings if f.severity == BLOCK})
        for rule in blocking:
            if RULES[rule].fix:
                lines.append(f"      fix {rule}: {RULES[rule].fix}")
        if verdict.observation != "not needed":
            lines.append(
                f"      scripts installed in a throw-away root: {shown(verdict.observation)}"
            )
    for file, reason in errors:
        lines.append(f"ERROR {shown(file)}: {shown(reason)}")
    blocked = sum(1 for v in verdicts if v.verdict == BLOCK)
    total = len(verdicts) + len(errors)
    if errors:
        lines.append(f"audit failed: {len(errors)} of {total} file(s) could not be read")
    elif blocked:
        lines.append(f"audit: {blocked} of {total} package(s) carry a kernel payload: BLOCKED")
    else:
        lines.append(f"audit: {total} package(s), no kernel payload: PASS")
    return "\n".join(lines)
