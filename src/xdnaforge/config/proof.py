"""Proofs of compatibility changes: the model and its parsing from a patch header or a recipe.

A proof is a small command (configure one directory, `-fsyntax-only` of one translation unit, a
link test, a Python import) that must fail without the change, with an error that matches
`Proof-Error`, and pass with it. `Proof: none (<reason>)` says why there is none.

Pure: parses text and YAML data into frozen dataclasses; running proofs is
environments/proof_run.py.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from xdnaforge.schema import Reader
from xdnaforge.yamlfile import KeyPath

KINDS = ("dependency", "flag")
# placeholders a proof command may use; filled from the environment the proof runs in
PLACEHOLDERS = ("cc", "cxx", "python", "scratch", "flag")  # scratch: an empty directory
_NONE_RE = re.compile(r"^none\s*\((.+)\)\s*$")
_PLACEHOLDER_RE = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Proof:
    argv: tuple[str, ...]  # empty when there is no proof
    error: str | None  # the regex the failure without the change must show
    none_reason: str | None  # `Proof: none (<reason>)`

    @property
    def text(self) -> str:
        return f"none ({self.none_reason})" if self.none_reason else shlex.join(self.argv)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompatChange:
    """A build flag or dependency a recipe adds for compatibility, with its proof."""

    change: str  # what it is, for people
    kind: str  # dependency | flag
    package: str | None  # the dependency added (kind dependency)
    flag: str | None  # the flag added (kind flag); `{flag}` in the proof stands for it
    cwd: str  # where the proof runs, relative to the top of the tree
    proof: Proof
    origin: str  # recipe file:line


def parse_proof(
    proof: str | None,
    error: str | None,
    *,
    flag_allowed: bool = False,
    keys: tuple[str, str] = ("Proof", "Proof-Error"),
) -> tuple[Proof | None, list[str]]:
    """A Proof from the `Proof`/`Proof-Error` texts (None when neither is given); problems.

    `keys` names the two fields in messages (a recipe spells them proof/proof_error)."""
    name, error_name = keys
    if proof is None:
        return None, ([f"'{error_name}' needs a '{name}' command"] if error is not None else [])
    problems: list[str] = []
    none = _NONE_RE.match(proof.strip())
    if proof.strip().startswith("none"):
        if none is None:
            return None, [f"write '{name}: none (<reason>)' with the reason in parentheses"]
        if error is not None:
            problems.append(f"'{name}: none' has no failure to match; drop '{error_name}'")
        return Proof(argv=(), error=None, none_reason=none.group(1).strip()), problems
    try:
        argv = tuple(shlex.split(proof))
    except ValueError as caught:
        return None, [f"cannot split the proof command: {caught}"]
    if not argv:
        return None, [f"'{name}' is empty; give a command or 'none (<reason>)'"]
    known = PLACEHOLDERS if flag_allowed else tuple(p for p in PLACEHOLDERS if p != "flag")
    for placeholder in {p for arg in argv for p in _PLACEHOLDER_RE.findall(arg)}:
        if placeholder not in known:
            problems.append(
                "an unknown placeholder in the proof "
                f"(known: {', '.join('{' + p + '}' for p in known)})"
            )
    if error is None or not error.strip():
        problems.append(f"a proof command needs '{error_name}: <regex the failure must show>'")
    else:
        try:
            re.compile(error)
        except re.error as caught:
            where = f" (at character {caught.pos + 1})" if caught.pos is not None else ""
            problems.append(f"'{error_name}' is not a valid regular expression{where}")
    return Proof(argv=argv, error=error, none_reason=None), problems


def parse_compat(
    reader: Reader, build: dict[str, Any], path: KeyPath, listed: set[str]
) -> tuple[CompatChange, ...]:
    """`build.compat`: a list of {change, kind, package|flag, proof, proof_error, cwd}."""
    changes = []
    for index, item in enumerate(reader.sequence(build, "compat", path)):
        here = (*path, "compat", index)
        entry = reader.mapping(
            item,
            here,
            required=("change", "kind", "proof"),
            optional=("package", "flag", "proof_error", "cwd"),
        )
        if entry is None:
            continue
        kind = reader.choice(entry, "kind", here, KINDS)
        wanted = {"dependency": "package", "flag": "flag"}.get(kind or "")
        for key in ("package", "flag"):
            if key in entry and key != wanted and kind is not None:
                reader.problem((*here, key), f"'{key}' does not belong to a {kind} change")
        if wanted is not None and wanted not in entry:
            reader.problem(here, f"a {kind} change names its {wanted}: '{wanted}: ...'")
        package = reader.string(entry, "package", here)
        if kind == "dependency" and package is not None and package not in listed:
            reader.problem(
                (*here, "package"),
                "is not in any build.depends list",
                hint="a dependency added for compatibility must be listed where it is needed",
            )
        proof, problems = parse_proof(
            reader.string(entry, "proof", here),
            reader.string(entry, "proof_error", here) if "proof_error" in entry else None,
            flag_allowed=kind == "flag",
            keys=("proof", "proof_error"),
        )
        for message in problems:
            reader.problem((*here, "proof"), message)
        if (
            proof is not None
            and kind == "flag"
            and proof.argv
            and not any("{flag}" in arg for arg in proof.argv)
        ):
            reader.problem(
                (*here, "proof"),
                "a flag's proof must use '{flag}' where the flag goes "
                "(it is left out for the run without the change)",
            )
        change = reader.string(entry, "change", here)
        if change is None or kind is None or proof is None or problems:
            continue
        changes.append(
            CompatChange(
                change=change,
                kind=kind,
                package=package,
                flag=reader.string(entry, "flag", here) if "flag" in entry else None,
                cwd=reader.string(entry, "cwd", here, default=".") or ".",
                proof=proof,
                origin=f"{reader.source}:{reader.document.where(here)[0]}",
            )
        )
    return tuple(changes)


# Outcomes of `doit prove`. Only the last three fail the run; "not provable here" and "no
# proof" are shown and never counted as passed.
PROVEN = "proven"
NOT_NEEDED = "not needed"
NOT_PROVABLE = "not provable here"
NO_PROOF = "no proof"
BROKEN = "broken"
WRONG_ERROR = "wrong error"
TIMEOUT = "timeout"
FAILING = (BROKEN, WRONG_ERROR, TIMEOUT)
_ERROR_LINE_RE = re.compile(r"\b(error|Error|ERROR|fatal|cannot find|undefined reference)\b")


@dataclass(frozen=True, slots=True, kw_only=True)
class Attempt:
    """One run of a proof command: its status (None when it timed out) and output."""

    returncode: int | None
    output: str

    @property
    def passed(self) -> bool:
        return self.returncode == 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    outcome: str
    detail: str  # the sentence shown after the outcome
    first_error: str | None


def first_error(output: str) -> str | None:
    """The first line that looks like an error (compilers, CMake, the linker, Python)."""
    for line in output.splitlines():
        if _ERROR_LINE_RE.search(line):
            return line.strip()
    return None


def judge(proof: Proof, environment: str, without: Attempt, with_: Attempt) -> Verdict:
    """The outcome of a proof from its runs without and with the change."""
    for attempt, state in ((without, "without"), (with_, "with")):
        if attempt.returncode is None:
            return Verdict(
                outcome=TIMEOUT,
                detail=f"the proof did not finish {state} the change",
                first_error=first_error(attempt.output),
            )
    if without.passed:
        if not with_.passed:
            return Verdict(
                outcome=BROKEN,
                detail=f"passes without the change, fails with it on {environment}",
                first_error=first_error(with_.output),
            )
        return Verdict(
            outcome=NOT_NEEDED,
            detail=f"not needed on {environment} (the proof passes without it)",
            first_error=None,
        )
    error = first_error(without.output)
    if proof.error is not None and not re.search(proof.error, without.output, re.MULTILINE):
        return Verdict(
            outcome=WRONG_ERROR,
            detail=f"fails without the change, but not with /{proof.error}/ "
            f"(exit status {without.returncode})",
            first_error=error,
        )
    if not with_.passed:
        return Verdict(
            outcome=BROKEN,
            detail=f"still fails with the change (exit status {with_.returncode})",
            first_error=first_error(with_.output) or error,
        )
    return Verdict(
        outcome=PROVEN,
        detail=f"proven on {environment}: fails without the change, passes with it",
        first_error=error,
    )
