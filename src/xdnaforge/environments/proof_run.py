"""`doit prove`: each compatibility change's proof, run without and with the change.

On a scratch copy of the target's fetched tree (build/<target>/prove/tree), brought back to
the pinned commits: patches in series order, each proof run before the patch is applied and
after; then the recipe's build.compat changes on the fully patched tree (a dependency is
taken away by hiding its package's files in the environment; a flag by leaving `{flag}` out).

Edge: copies, git, and the proof commands through process/run.py; the verdicts are proof.judge's.
Must not touch the target's own tree or any record but prove.json.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdnaforge.config.project import Patch
from xdnaforge.config.proof import (
    FAILING,
    NO_PROOF,
    NOT_NEEDED,
    NOT_PROVABLE,
    Attempt,
    CompatChange,
    Proof,
    Verdict,
    judge,
)
from xdnaforge.config.recipe import Recipe
from xdnaforge.environments.proof_sandbox import Sandbox
from xdnaforge.environments.snapshot_tree import Missing, blocking
from xdnaforge.errors import StageFailed, ToolNotFound
from xdnaforge.process.run import CommandFailed, run
from xdnaforge.sources.patches import ALREADY_UPSTREAM, APPLIED_EARLIER, classify
from xdnaforge.tools.git import git

ANY_STATUS = range(-64, 256)
_PLACEHOLDER_RE = re.compile(r"\{(cc|cxx|python|scratch|flag)\}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One change to prove: a patch of the series or a recipe compat entry."""

    id: str  # "ubuntu26/0001-....patch", "compat[0] libcrypt-dev"
    kind: str  # patch | dependency | flag
    description: str
    where: str  # repository (patch) or cwd (compat), relative to the top of the tree
    proof: Proof | None
    patch: Patch | None
    compat: CompatChange | None


def changes_of(recipe: Recipe, patches: tuple[Patch, ...]) -> list[Change]:
    """The changes in the order they are proven: the series, then build.compat."""
    changes = [
        Change(
            id=f"{p.set}/{p.file}",
            kind="patch",
            description=p.header.subject,
            where=p.header.repository,
            proof=p.header.proof,
            patch=p,
            compat=None,
        )
        for p in patches
    ]
    for index, c in enumerate(recipe.compat):
        changes.append(
            Change(
                id=f"compat[{index}] {c.package or c.flag}",
                kind=c.kind,
                description=c.change,
                where=c.cwd,
                proof=c.proof,
                patch=None,
                compat=c,
            )
        )
    return changes


class _Prover:
    def __init__(
        self, sandbox: Sandbox, work: Path, readonly: list[Path], timeout: float, log: Path
    ) -> None:
        self.sandbox = sandbox
        self.work = work
        self.readonly = readonly
        self.timeout = timeout
        self.log = log
        self.runs = 0

    def command(self, argv: list[str], cwd: Path, replace: list[tuple[Path, Path]]) -> list[str]:
        # object caches read-only: upstream configure scripts run git for version hashes
        binds = [self.work]
        wrapper = self.sandbox.wrapper(cwd=cwd, binds=binds, replace=replace)
        if wrapper and self.readonly:
            extra = [a for path in self.readonly for a in ("--ro-bind", str(path), str(path))]
            wrapper = [*wrapper[:1], *extra, *wrapper[1:]]
        return [*wrapper, *argv]

    def attempt(self, argv: list[str], cwd: Path, replace: list[tuple[Path, Path]]) -> Attempt:
        self.runs += 1
        try:
            result = run(
                self.command(argv, cwd, replace),
                cwd=cwd,
                timeout=self.timeout,
                log_file=self.log,
                ok_codes=ANY_STATUS,
            )
        except CommandFailed as failed:
            if failed.returncode is None:  # timed out: the group was stopped
                return Attempt(returncode=None, output=failed.output)
            raise
        return Attempt(returncode=result.returncode, output=result.stdout + result.stderr)

    def missing(self, program: str, cwd: Path) -> str | None:
        """Why `program` cannot run in the environment, or None."""
        if "/" in program:
            return None  # a path in the tree (./configure): its failure is the proof's
        try:
            found = run(
                self.command(["/bin/sh", "-c", 'command -v "$1"', "sh", program], cwd, []),
                cwd=cwd,
                timeout=60,
                log_file=self.log,
                ok_codes=ANY_STATUS,
            )
        except ToolNotFound as error:
            return error.message
        entered = [line for line in found.stdout.splitlines() if line.startswith("bwrap:")]
        entered += [line for line in found.stderr.splitlines() if line.startswith("bwrap:")]
        if entered:
            raise StageFailed(
                f"cannot enter {self.sandbox.name}: {entered[0]}",
                hint="check the root file system and that user namespaces are allowed",
            )
        if found.returncode != 0:
            return f"{program} is not installed in {self.sandbox.name}"
        return None

    def fill(self, proof: Proof, flag: str | None, scratch: Path) -> list[str]:
        values = {
            "cc": self.sandbox.tool("cc"),
            "cxx": self.sandbox.tool("cxx"),
            "python": self.sandbox.tool("python"),
            "scratch": str(scratch),
        }
        argv = []
        for arg in proof.argv:
            if arg == "{flag}":
                if flag:
                    argv.append(flag)
                continue
            # only our placeholders: a shell snippet's own braces stay as written
            argv.append(
                _PLACEHOLDER_RE.sub(
                    lambda m: {**values, "flag": flag or ""}.get(m.group(1), m.group(0)), arg
                )
            )
        return argv

    def scratch(self, name: str) -> Path:
        path = self.work / "scratch" / name
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        return path

    def hide(self, package: str, index: int) -> list[tuple[Path, Path]] | str:
        """Bind mounts that hide `package`'s files, or why they cannot be made."""
        listing = run(
            self.command(["dpkg-query", "-L", package], Path("/"), []),
            cwd=Path("/"),
            timeout=60,
            log_file=self.log,
            ok_codes=(0, 1),
        )
        if listing.returncode != 0:
            return (
                f"{package} is not installed in {self.sandbox.name}, "
                "so the run with it cannot be made"
            )
        hidden: dict[str, set[str]] = {}
        for line in listing.stdout.splitlines():
            inside = line.strip()
            host = self.sandbox.host_path(inside)
            if inside.startswith("/") and (host.is_symlink() or host.is_file()):
                directory, _, name = inside.rpartition("/")
                hidden.setdefault(directory or "/", set()).add(name)
        replace: list[tuple[Path, Path]] = []
        for number, (folder, names) in enumerate(sorted(hidden.items())):
            copy = self.work / "hide" / f"{index}-{number}"
            shutil.rmtree(copy, ignore_errors=True)
            copy.mkdir(parents=True)
            later: list[tuple[Path, Path]] = []
            for entry in os.scandir(self.sandbox.host_path(folder)):
                if entry.name in names:
                    continue
                target = copy / entry.name
                mounted = Path(folder) / entry.name
                if entry.is_symlink():
                    target.symlink_to(Path(entry.path).readlink())
                elif entry.is_dir():
                    target.mkdir()
                    later.append((Path(entry.path), mounted))
                else:
                    try:
                        os.link(entry.path, target)  # a hard link: nothing is copied
                    except OSError:
                        target.touch()
                        later.append((Path(entry.path), mounted))
            replace += [(copy, Path(folder)), *later]
        return replace


def _verdict(
    prover: _Prover, change: Change, tree: Path, index: int, missing: list[Missing]
) -> Verdict:
    """Run the proof without and with the change (applying a patch between the two)."""
    cwd = tree / change.where
    proof = change.proof
    needed = blocking(change.where, list(proof.argv) if proof else [], missing)
    if needed is not None:
        if change.patch is not None and (cwd / ".git").exists():
            # later patches of the series are proven on top of this one, as built
            git(["apply", str(change.patch.path)], cwd=cwd, log_file=prover.log, ok_codes=(0, 1))
        return Verdict(
            outcome=NOT_PROVABLE, detail=f"not provable here: {needed.describe()}", first_error=None
        )
    if change.patch is not None:
        state = classify(cwd, change.patch.path, prover.log)
        if state == ALREADY_UPSTREAM:
            return Verdict(
                outcome=NOT_NEEDED,
                detail="already upstream at the pinned commit (the patch reverse-applies)",
                first_error=None,
            )
        if state == "conflict":
            return Verdict(
                outcome="broken",
                detail=f"does not apply to {change.where}; later patches are proven without it",
                first_error=None,
            )
    if proof is None or not proof.argv:
        if change.patch is not None:
            git(["apply", str(change.patch.path)], cwd=cwd, log_file=prover.log)
        reason = proof.none_reason if proof is not None else "the change carries no Proof"
        return Verdict(outcome=NO_PROOF, detail=f"no proof: {reason}", first_error=None)
    flag = change.compat.flag if change.compat is not None else None
    why = prover.missing(prover.fill(proof, flag, tree)[0], cwd)
    if why is not None:
        if change.patch is not None:
            git(["apply", str(change.patch.path)], cwd=cwd, log_file=prover.log)
        return Verdict(outcome=NOT_PROVABLE, detail=f"not provable here: {why}", first_error=None)
    replace: list[tuple[Path, Path]] = []
    if change.compat is not None and change.compat.package is not None:
        hidden = prover.hide(change.compat.package, index)
        if isinstance(hidden, str):
            return Verdict(
                outcome=NOT_PROVABLE, detail=f"not provable here: {hidden}", first_error=None
            )
        replace = hidden
    without = prover.attempt(
        prover.fill(proof, None, prover.scratch(f"{index}-without")), cwd, replace
    )
    if change.patch is not None:
        git(["apply", str(change.patch.path)], cwd=cwd, log_file=prover.log)
    with_ = prover.attempt(prover.fill(proof, flag, prover.scratch(f"{index}-with")), cwd, [])
    return judge(proof, prover.sandbox.name, without, with_)


def pristine_copy(tree: Path, patches: tuple[Patch, ...], destination: Path, log: Path) -> None:
    """Copy the fetched tree and take out the patches an earlier `doit patch` applied."""
    if not (tree / ".git").exists():
        raise StageFailed(
            f"{tree} has no checked-out tree to prove on",
            hint="run `doit fetch --target <target>` first",
        )
    shutil.rmtree(destination, ignore_errors=True)
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(tree, destination, symlinks=True)
    for patch in reversed(patches):
        directory = destination / patch.header.repository
        if (directory / ".git").exists() and classify(
            directory, patch.path, log
        ) == APPLIED_EARLIER:
            git(["apply", "--reverse", str(patch.path)], cwd=directory, log_file=log)


def prove_changes(
    changes: list[Change],
    sandbox: Sandbox,
    *,
    tree: Path,
    work: Path,
    readonly: list[Path],
    timeout: float,
    log: Path,
    missing: list[Missing] | None = None,
) -> list[dict[str, Any]]:
    """Each change's verdict as a prove.json entry, in order; `tree` is the pristine copy
    (`missing`: the nested repositories it lacks, environments/snapshot_tree.py)."""
    prover = _Prover(sandbox, work, readonly, timeout, log)
    entries = []
    for index, change in enumerate(changes):
        verdict = _verdict(prover, change, tree, index, missing or [])
        entries.append(
            {
                "id": change.id,
                "kind": change.kind,
                "change": change.description,
                "where": change.where,
                "proof": change.proof.text if change.proof is not None else None,
                "proof_error": change.proof.error if change.proof is not None else None,
                "outcome": verdict.outcome,
                "detail": verdict.detail,
                "first_error": verdict.first_error,
                "failed": verdict.outcome in FAILING,
            }
        )
    return entries


def toolchain_facts(sandbox: Sandbox, work: Path, log: Path) -> dict[str, str]:
    """The first `--version` line of each tool a proof may use, inside the environment."""
    prover = _Prover(sandbox, work, [], 60, log)
    facts = {}
    for key in ("cc", "cxx", "python", "cmake"):
        program = sandbox.tool(key) if key != "cmake" else "cmake"
        if prover.missing(program, work) is not None:
            facts[key] = f"{program}: missing"
            continue
        attempt = prover.attempt([program, "--version"], work, [])
        lines = attempt.output.strip().splitlines()
        facts[key] = lines[0] if lines else f"{program}: no version"
    return facts
