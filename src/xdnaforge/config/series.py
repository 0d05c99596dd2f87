"""Patch series: the `series` file and each patch's header; pure parsing.

A patch header is the text before the first diff. It must say `Upstream-Status:` (Backport
with the upstream commit, Submitted/Pending with a reference or note, Inappropriate with a
reason), a `Subject:` or `Description:`, and `Repository:` (the path in the source tree the
patch applies to, `.` for the top repository). It may carry a proof (config/proof.py):
`Proof:` a small command and `Proof-Error:` the regex its failure without the patch shows,
or `Proof: none (<reason>)`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from xdnaforge.config.proof import Proof, parse_proof

STATUSES = ("Backport", "Submitted", "Pending", "Inappropriate")
_STATUS_RE = re.compile(r"^(\w+)\s*(?:\[(.*)\])?\s*$")
_ENTRY_RE = re.compile(r"^(\S+)(?:\s+sha256=(\S+))?\s*$")
_HEADER_KEY_RE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*):\s?(.*)$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_COMMIT_RE = re.compile(r"\b[0-9a-f]{40}\b")


@dataclass(frozen=True, slots=True, kw_only=True)
class SeriesEntry:
    file: str
    sha256: str | None  # expected digest when the series pins one
    line: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PatchHeader:
    subject: str
    status: str
    status_detail: str
    repository: str
    upstream_commit: str | None
    proof: Proof | None = None


def parse_series(text: str) -> tuple[list[SeriesEntry], list[tuple[int, str]]]:
    """Entries and (line, message) problems; `#` starts a comment."""
    entries = []
    problems = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = _ENTRY_RE.match(line)
        if not match:
            problems.append(
                (number, "cannot read this line; expected '<file>.patch [sha256=<hex>]'")
            )
            continue
        name, digest = match.groups()
        if "/" in name or name.startswith("."):
            problems.append((number, "must name a file in this directory (no '/', no leading '.')"))
            continue
        if digest is not None and not _SHA256_RE.match(digest):
            problems.append((number, "sha256= is not a sha256 (64 lowercase hex characters)"))
            continue
        if name in seen:
            problems.append((number, f"this patch is listed twice (first on line {seen[name]})"))
            continue
        seen[name] = number
        entries.append(SeriesEntry(file=name, sha256=digest, line=number))
    return entries, problems


def parse_header(text: str) -> tuple[PatchHeader | None, list[tuple[int, str]]]:
    """Read the header fields before the first diff; (line, message) problems."""
    fields: dict[str, tuple[int, str]] = {}
    description_lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if raw.startswith(("diff --git ", "--- ", "Index: ")):
            break
        match = _HEADER_KEY_RE.match(raw)
        if match and match.group(1) in (
            "Subject",
            "Description",
            "Upstream-Status",
            "Repository",
            "Origin",
            "Author",
            "From",
            "Date",
            "Forwarded",
            "Bug",
            "Last-Update",
            "Evidence",
            "Proof",
            "Proof-Error",
        ):
            fields.setdefault(match.group(1), (number, match.group(2).strip()))
        elif raw.strip():
            description_lines.append(raw.strip())
    problems: list[tuple[int, str]] = []
    subject = fields.get("Subject") or fields.get("Description")
    if subject is None or not subject[1]:
        problems.append((1, "the header needs a 'Subject:' or 'Description:' line"))
    repository = fields.get("Repository")
    if repository is None or not repository[1]:
        problems.append(
            (1, "the header needs 'Repository: <path in the source tree>' ('.' for the top)")
        )
    status_field = fields.get("Upstream-Status")
    status = detail = ""
    upstream_commit = None
    if status_field is None:
        problems.append((1, f"the header needs 'Upstream-Status:' ({', '.join(STATUSES)})"))
    else:
        number, value = status_field
        match = _STATUS_RE.match(value)
        status = match.group(1) if match else value
        detail = (match.group(2) or "").strip() if match else ""
        if status not in STATUSES:
            close = difflib.get_close_matches(status, STATUSES, n=1)
            suggestion = f" (did you mean '{close[0]}'?)" if close else ""
            problems.append(
                (number, f"Upstream-Status is not one of {', '.join(STATUSES)}{suggestion}")
            )
        elif status == "Backport":
            found = _COMMIT_RE.search(detail) or _COMMIT_RE.search(fields.get("Origin", (0, ""))[1])
            if found is None:
                problems.append(
                    (
                        number,
                        "a Backport must name the full upstream commit, "
                        "e.g. 'Upstream-Status: Backport [<40-hex commit>]'",
                    )
                )
            else:
                upstream_commit = found.group(0)
        elif status == "Inappropriate" and not detail:
            problems.append(
                (number, "Inappropriate needs a reason: 'Upstream-Status: Inappropriate [why]'")
            )
    proof_field = fields.get("Proof")
    error_field = fields.get("Proof-Error")
    proof, proof_problems = parse_proof(
        proof_field[1] if proof_field else None, error_field[1] if error_field else None
    )
    where = (proof_field or error_field or (1, ""))[0]
    problems.extend((where, message) for message in proof_problems)
    if problems or subject is None or repository is None:
        return None, problems
    return (
        PatchHeader(
            subject=subject[1],
            status=status,
            status_detail=detail,
            repository=repository[1].rstrip("/") or ".",
            upstream_commit=upstream_commit,
            proof=proof,
        ),
        problems,
    )
