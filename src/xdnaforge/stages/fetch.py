"""The fetch and patch stages: check out the pinned tree, apply the series, write lock.json.

Edge module: resolves and verifies in the caches first (sources/trees.py), touches the worktree
only after that, and writes the lock record atomically at the very end, so a failure
leaves the previous worktree and lock.json as they were.
"""

from __future__ import annotations

from typing import Any

from xdnaforge.config.project import Project
from xdnaforge.errors import StageFailed
from xdnaforge.planning.plan import Plan
from xdnaforge.sources.patches import APPLIED, apply_series
from xdnaforge.sources.trees import (
    Node,
    foreign_changes,
    missing_files,
    replace_tree,
    resolve_tree,
    tracked_changes,
)
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_record
from xdnaforge.tools.git import git


def _reset_hint(workspace: Workspace, paths: list[str]) -> str:
    tree = workspace.source_tree
    commands = "; ".join(f"git -C {tree / p if p != '.' else tree} checkout -- ." for p in paths)
    return f"to discard the changes: {commands} (or delete {tree})"


def _node_record(node: Node) -> dict[str, Any]:
    return {
        "path": node.path,
        "name": node.name,
        "url": node.url,
        "fetched_from": node.fetched_from,
        "pinned": node.pinned,
        "recorded": node.commit,
        "resolved": node.commit,
    }


def _write_lock(workspace: Workspace, body: dict[str, Any]) -> bool:
    """Write lock.json when its content changes; True if it did."""
    path = workspace.record("lock")
    previous = read_record(path)
    if previous is not None:
        comparable = {k: v for k, v in previous.items() if k not in ("schema", "kind", "xdnaforge")}
        if comparable == body:
            return False
    write_record(path, "lock", body)
    return True


def fetch(project: Project, plan: Plan, workspace: Workspace) -> None:
    recipe = plan.recipe
    stage = plan.stage("fetch")
    log = workspace.logs / "fetch.log"
    previous = read_record(workspace.record("lock")) or {}
    nodes = resolve_tree(recipe, project.site, log)
    for node in nodes:
        origin = "" if node.fetched_from == node.url else f" (from {node.fetched_from})"
        print(f"  {node.path}: {node.commit}{origin}")
    tree = workspace.source_tree
    ours: dict[str, str] = previous.get("expected_state", {})
    reused = False
    if tree.exists():
        known = [n for n in nodes if (tree / n.path / ".git").exists()]
        changed = foreign_changes(known, tree, ours, log)
        if changed:
            raise StageFailed(
                f"{tree} has local changes in {', '.join(changed)} that xdnaforge did not "
                "make; refusing to overwrite them",
                hint=_reset_hint(workspace, changed),
            )
        reused = [n.path for n in known] == [n.path for n in nodes] and all(
            git(["rev-parse", "HEAD"], cwd=tree / n.path, log_file=log).stdout.strip() == n.commit
            for n in nodes
        )
    missing: dict[str, list[str]] = previous.get("missing_files", {}) if reused else {}
    if not reused:
        replace_tree(nodes, tree, log)
        ours = {}
        for node in nodes:
            # a partial mirror (large blobs left out) still checks out; say what is absent
            absent = missing_files(tree / node.path, log)
            if absent:
                missing[node.path] = absent
                digest = tracked_changes(tree / node.path, log)
                if digest is not None:
                    ours[node.path] = digest
                print(
                    f"  warning: {node.path}: {len(absent)} file(s) missing from the "
                    f"mirror, e.g. {absent[0]}"
                )
    body: dict[str, Any] = {
        "target": plan.target,
        "recipe": {"name": recipe.name, "origin": recipe.origin, "sha256": recipe.digest},
        "repositories": [_node_record(n) for n in nodes],
        "unused_submodules": [
            {"path": u.path, "reason": u.reason} for u in recipe.pinned.unused_submodules
        ],
        "patches": previous.get("patches", []) if reused else [],
        "missing_files": missing,
        # digests of the tracked changes xdnaforge knows about (files a partial mirror
        # lacks, applied patches): anything else in the worktree is a user's change
        "expected_state": ours,
        "fingerprints": {"fetch": stage.fingerprint},
        "inputs": {"fetch": stage.inputs},
    }
    if reused and "patch" in previous.get("fingerprints", {}):
        body["fingerprints"]["patch"] = previous["fingerprints"]["patch"]
        body["inputs"]["patch"] = previous["inputs"]["patch"]
    _write_lock(workspace, body)
    print(f"  {'verified' if reused else 'checked out'} {len(nodes)} repositories in {tree}")


def patch(project: Project, plan: Plan, workspace: Workspace) -> None:
    del project  # the plan carries the patches; the signature matches the other stages
    stage = plan.stage("patch")
    log = workspace.logs / "patch.log"
    lock = read_record(workspace.record("lock"))
    if lock is None or not workspace.source_tree.exists():
        raise StageFailed(
            f"no checked-out sources for {plan.target}",
            hint=f"run `doit fetch --target {plan.target}` first",
        )
    if lock.get("fingerprints", {}).get("fetch") != plan.stage("fetch").fingerprint:
        raise StageFailed(
            f"the sources in {workspace.source_tree} are not those the recipe pins now",
            hint=f"run `doit fetch --target {plan.target}` first",
        )
    outcomes = apply_series(plan.patches, workspace.source_tree, log)
    for outcome in outcomes:
        print(
            f"  {outcome.patch.set}/{outcome.patch.file} -> "
            f"{outcome.patch.header.repository}: {outcome.status}"
        )
    state = {}
    for repository in [r["path"] for r in lock.get("repositories", [])]:
        digest = tracked_changes(workspace.source_tree / repository, log)
        if digest is not None:
            state[repository] = digest
    body = {k: v for k, v in lock.items() if k not in ("schema", "kind", "xdnaforge")}
    body["patches"] = [
        {
            "set": o.patch.set,
            "file": o.patch.file,
            "sha256": o.patch.sha256,
            "repository": o.patch.header.repository,
            "subject": o.patch.header.subject,
            "upstream_status": o.patch.header.status,
            "upstream_detail": o.patch.header.status_detail,
            "upstream_commit": o.patch.header.upstream_commit,
            "status": APPLIED if o.status != "already upstream" else o.status,
        }
        for o in outcomes
    ]
    body["expected_state"] = state
    body["fingerprints"] = {**lock.get("fingerprints", {}), "patch": stage.fingerprint}
    body["inputs"] = {**lock.get("inputs", {}), "patch": stage.inputs}
    _write_lock(workspace, body)
