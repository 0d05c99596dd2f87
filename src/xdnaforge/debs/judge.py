"""Auditing a set of .deb files that are installed together: read each, judge each.

The packages are judged together: a directory symlink in one and a file under it in another
land the file where the symlink points, and the set's names are the stack's own for the
relation rules. Reading is I/O (debfile); the judgement is pure (rules). What installing
the set does is observed one layer up (install/observe.py), where processes may start.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from xdnaforge.debs.debfile import DebContents, DebError, read_deb
from xdnaforge.debs.host_rules import HostPaths
from xdnaforge.debs.policy import Policy
from xdnaforge.debs.rules import Verdict, audit, symlinks, wants_text


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
