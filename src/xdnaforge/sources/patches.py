"""Applying a patch series to the worktree: no fuzz, already-present patches skipped,
conflicts named, and a failed run leaves the worktree as it was.

Classification uses git's index, which always holds the pristine pinned commit (we never
stage): a patch that reverse-applies to the index is already upstream; one that
reverse-applies only to the worktree was applied by an earlier run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xdnaforge.config.project import Patch
from xdnaforge.errors import StageFailed
from xdnaforge.process.run import CommandFailed
from xdnaforge.tools.git import git, parse_apply_error

APPLIED = "applied"
APPLIED_EARLIER = "applied earlier"
ALREADY_UPSTREAM = "already upstream"


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    patch: Patch
    status: str


def _applies(directory: Path, patch: Path, log: Path, *options: str) -> tuple[bool, str]:
    result = git(
        ["apply", "--check", *options, str(patch)],
        cwd=directory,
        log_file=log,
        ok_codes=(0, 1, 128),
    )
    return result.returncode == 0, result.stderr


def classify(directory: Path, patch: Path, log: Path) -> str:
    """ALREADY_UPSTREAM, APPLIED_EARLIER, "applies" or "conflict" for one patch; changes nothing."""
    if _applies(directory, patch, log, "--cached", "--reverse")[0]:
        return ALREADY_UPSTREAM
    if _applies(directory, patch, log, "--reverse")[0]:
        return APPLIED_EARLIER
    return "applies" if _applies(directory, patch, log)[0] else "conflict"


def apply_series(patches: tuple[Patch, ...], tree: Path, log: Path) -> list[Outcome]:
    """Apply each patch to `tree/<its Repository>`; undo this run's patches on a conflict."""
    outcomes: list[Outcome] = []
    done: list[tuple[Path, Patch]] = []
    try:
        for patch in patches:
            directory = tree / patch.header.repository
            if not (directory / ".git").exists():
                raise StageFailed(
                    f"{patch.origin}: {patch.file} applies to '{patch.header.repository}', "
                    f"which is not checked out in {tree}",
                    hint="run `doit fetch --target <target>` first",
                )
            if _applies(directory, patch.path, log, "--cached", "--reverse")[0]:
                outcomes.append(Outcome(patch=patch, status=ALREADY_UPSTREAM))
                continue
            if _applies(directory, patch.path, log, "--reverse")[0]:
                outcomes.append(Outcome(patch=patch, status=APPLIED_EARLIER))
                continue
            fits, errors = _applies(directory, patch.path, log)
            if not fits:
                failure = parse_apply_error(errors)
                where = f"{failure.file}" if failure.file else "a file it changes"
                hunk = f", hunk at line {failure.line}" if failure.line else ""
                raise StageFailed(
                    f"{patch.set}/{patch.file} does not apply to {patch.header.repository}: "
                    f"{where}{hunk} ({failure.message})",
                    hint="the worktree is as it was before this run; refresh the patch "
                    "against the pinned commit (no fuzz is allowed)",
                )
            git(["apply", str(patch.path)], cwd=directory, log_file=log)
            done.append((directory, patch))
            outcomes.append(Outcome(patch=patch, status=APPLIED))
    except (StageFailed, CommandFailed):
        for directory, patch in reversed(done):
            git(["apply", "--reverse", str(patch.path)], cwd=directory, log_file=log)
        raise
    return outcomes
