"""The fresh sets' blind figures, recomputed: each set judged by the doctor of the commit it
was measured with once, before anybody read it (tests/fixtures/fresh/blind.txt), beside the
code of today on the same logs.

The README of the fresh sets states each blind measure in prose; this makes the claim
checkable by anyone with the repository's history: for each recorded commit a detached
worktree is made in a temporary directory, that commit's own `evaluate.judge_case` judges
its sets' logs (the logs and labels of today), and the worktrees are removed afterwards.
Nothing outside the temporary directory is written (git's worktree list is pruned again).

Printed per set and in total: right, how many logs doctor answered (healthy or a family,
not unknown) and how many of its answers were right, wrong families, healthy logs called
failing, failing logs called healthy, and the blind confusion table (per expected family: right,
and what the misses were called); then what today's code makes of the same logs, which
is no longer blind (each set was read after its measure).

    python bench/bench_blind.py [--sets 75-80]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from xdnaforge.diagnosis.evaluate import (
    ABSTAINED,
    HEALTHY,
    Case,
    Outcome,
    blind_commits,
    carries,
    ceiling,
    confusion_table,
    fresh_set,
    judge_case,
    load_corpus,
    score,
    text_readings,
)
from xdnaforge.diagnosis.knowledge import load_knowledge
from xdnaforge.diagnosis.log_verdict import UNKNOWN

REPO = Path(__file__).resolve().parent.parent
FRESH = REPO / "tests/fixtures/fresh"
# run inside a worktree of an old commit, with that commit's package first on the path:
# the interface every commit since set 1 has (evaluate.parse_case, judge_case)
JUDGE = (
    "import json, sys; from pathlib import Path; "
    "from xdnaforge.diagnosis import evaluate, knowledge; "
    "entries = knowledge.load_knowledge(); out = {}\n"
    "for name in sys.argv[1:]:\n"
    "    path = Path(name); ident = path.name.split('-', 1)[0]\n"
    "    case = evaluate.parse_case(path.read_text(encoding='utf-8'), ident)\n"
    "    out[ident] = evaluate.judge_case(case, entries).found\n"
    "print(json.dumps(out))"
)


class Unmeasurable(Exception):
    """A recorded commit cannot judge its sets here (said with what to do)."""


def judged_at(commit: str, files: list[Path], work: Path) -> dict[str, str]:
    """What the doctor of `commit` found in each file (by id)."""
    known = subprocess.run(
        ["git", "-C", str(REPO), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True
    )
    if known.returncode != 0:
        raise Unmeasurable(
            f"commit {commit} (blind.txt) is not in this clone's history; a shallow clone "
            "has none: run `git fetch --unshallow` and again"
        )
    tree = work / commit
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--quiet", "--detach", str(tree), commit],
        check=True,
    )
    try:
        env = dict(os.environ, PYTHONPATH=str(tree / "src"))
        done = subprocess.run(
            [sys.executable, "-c", JUDGE, *map(str, files)],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise Unmeasurable(
                f"the doctor of {commit} could not judge its sets: {last} (its own "
                "dependencies may differ from this environment's)"
            )
        found: dict[str, str] = json.loads(done.stdout)
        return found
    finally:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False
        )


def describe(outcomes: Iterable[Outcome]) -> str:
    outcomes = list(outcomes)
    wrong = sum(
        1
        for o in outcomes
        if not o.right and o.found not in ABSTAINED and HEALTHY not in (o.found, o.case.expect)
    )
    false_failure = sum(
        1 for o in outcomes if o.case.expect == HEALTHY and o.found not in (HEALTHY, UNKNOWN)
    )
    return (
        f"{score(outcomes).describe()}; wrong family {wrong}, healthy logs called failing "
        f"{false_failure}"
    )


def selected(text: str) -> set[int] | None:
    if not text:
        return None
    first, _, last = text.partition("-")
    return set(range(int(first), int(last or first) + 1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="", help="a set or a range (75-80); all by default")
    options = parser.parse_args()
    wanted = selected(options.sets)
    try:  # the records, read before any worktree is made: a bad line says where, no traceback
        commits = blind_commits((FRESH / "blind.txt").read_text(encoding="utf-8"), "blind.txt")
        readings = text_readings((FRESH / "text_carries.tsv").read_text(encoding="utf-8"))
    except ValueError as problem:
        print(f"bench_blind: {problem}", file=sys.stderr)
        return 1
    cases: dict[str, Case] = {}
    files: dict[str, list[Path]] = {}
    for path in sorted(FRESH.glob("f*.txt")):
        ident = path.name.split("-", 1)[0]
        number = fresh_set(ident)
        if wanted is not None and number not in wanted:
            continue
        if number not in commits:
            print(f"set {number} has no blind commit in blind.txt", file=sys.stderr)
            return 1
        files.setdefault(commits[number], []).append(path)
    for case in load_corpus(FRESH, "f*.txt"):
        if wanted is None or fresh_set(case.ident) in wanted:
            cases[case.ident] = case
    blind: dict[str, Outcome] = {}
    with tempfile.TemporaryDirectory(prefix="xdnaforge-blind-") as work:
        try:
            for commit, paths in files.items():
                found = judged_at(commit, paths, Path(work))
                blind.update({i: Outcome(cases[i], f) for i, f in found.items()})
        except Unmeasurable as problem:
            print(f"bench_blind: {problem}", file=sys.stderr)
            return 1
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "prune"], check=False)
    entries = load_knowledge()
    today = {i: judge_case(c, entries) for i, c in cases.items()}
    by_set: dict[int, list[str]] = {}
    for ident in cases:
        by_set.setdefault(fresh_set(ident), []).append(ident)
    for number, idents in sorted(by_set.items()):
        print(f"set {number} ({len(idents)} logs, at {commits[number]}): ", end="")
        print(describe(blind[i] for i in idents))
    print(f"blind, all {len(blind)} logs: {describe(blind.values())}")
    print(confusion_table(blind.values()))
    print(f"today's code on the same logs (read since): {describe(today.values())}")
    most, total = ceiling(today.values(), readings)
    if not most:
        return 0
    right = sum(1 for i, o in today.items() if o.right and carries(readings, i))
    print(
        f"what the text can show (text_carries.tsv): {total - most} of the {total} logs carry no "
        f"evidence of their label or have a doubtful one, so at most {most}/{total} "
        f"({most / total:.0%}) can be right from the text alone; today's code is right on "
        f"{right} of those {most} ({right / most:.0%})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
