"""Auditing a set of .deb files that are installed together: read each, judge each.

The packages are judged together: a directory symlink in one and a file under it in another
land the file where the symlink points, and the set's names are the stack's own for the
relation rules. Reading is I/O (debfile); the judgement is pure (rules). What installing
the set does is observed one layer up (install/observe.py), where processes may start;
`observed` adds what it saw to the verdicts (OBSERVE-*).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from xdnaforge.debs import admit
from xdnaforge.debs.debfile import DebContents, DebError, read_deb
from xdnaforge.debs.host_rules import HostPaths
from xdnaforge.debs.observed import Observation, outside
from xdnaforge.debs.policy import Policy
from xdnaforge.debs.rules import RULES, Finding, Verdict, audit, symlinks, wants_text, with_findings


def read_all(files: Sequence[Path]) -> tuple[list[DebContents], list[tuple[str, str]]]:
    """The readable packages, and (file, reason) for the others."""
    debs = []
    errors = []
    for file in files:
        try:
            debs.append(read_deb(file, wants_text))
        except DebError as error:
            errors.append((str(file), error.message.removeprefix(f"{file}: ")))
    return debs, errors


def judge_all(
    debs: Sequence[DebContents], policy: Policy | None = None, host: HostPaths | None = None
) -> list[Verdict]:
    """Each package's verdict, judged with the others of the set."""
    links = symlinks(debs)
    names = [deb.package for deb in debs]
    return [audit(deb, policy, host, links, names) for deb in debs]


def audit_files(
    files: Sequence[Path], policy: Policy | None = None, host: HostPaths | None = None
) -> tuple[list[Verdict], list[tuple[str, str]]]:
    """Verdicts for the readable files; (file, reason) for the others."""
    debs, errors = read_all(files)
    return judge_all(debs, policy, host), errors


SHOWN_CHANGES = 5  # changes named in one finding; the count says how many more


def observed(
    verdicts: Sequence[Verdict],
    debs: Sequence[DebContents],
    observation: Observation,
    policy: Policy | None = None,
) -> list[Verdict]:
    """The verdicts with what installing the set in a throw-away root showed. Its findings
    go to the packages that have maintainer scripts (what dpkg alone does is unpacking the
    admitted files); every package records how it was observed."""
    policy = policy or Policy()
    layouts = [
        admit.layout(d.package, d.control.get("Architecture", ""), policy.admitted) for d in debs
    ]
    left = outside(observation, lambda path: any(layout.admits(path) for layout in layouts))
    extra: list[tuple[str, str, str]] = []
    if observation.status == "observed":
        if observation.tool_calls:
            calls = "; ".join(observation.tool_calls[:SHOWN_CHANGES])
            extra.append(("OBSERVE-001", "DEBIAN/postinst", f"ran: {calls}"))
        if left:
            named = ", ".join(f"{c.path} ({c.kind})" for c in left[:SHOWN_CHANGES])
            more = f" and {len(left) - SHOWN_CHANGES} more" if len(left) > SHOWN_CHANGES else ""
            extra.append(("OBSERVE-002", left[0].path, f"left {named}{more}"))
        if observation.dpkg_status != 0:
            tail = observation.dpkg_tail.strip().splitlines()[-1:] or ["no output"]
            status = (
                "stopped at its time limit"
                if observation.dpkg_status is None
                else (f"exit status {observation.dpkg_status}")
            )
            extra.append(("OBSERVE-003", "DEBIAN/postinst", f"dpkg: {status}: {tail[0]}"))
        summary = "observed: " + (
            "no module tool ran, nothing left outside the layout"
            if not extra
            else f"{len(extra)} finding(s)"
        )
    else:
        summary = f"not run: {observation.reason}"
    scripted = {d.package for d in debs if d.scripts}
    result = []
    for verdict in verdicts:
        if verdict.package not in scripted:
            result.append(verdict)
            continue
        findings = [
            Finding(rule, RULES[rule].severity, verdict.package, path, evidence)
            for rule, path, evidence in extra
        ]
        result.append(with_findings(verdict, findings, summary))
    return result
