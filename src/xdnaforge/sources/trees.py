"""Pinned source trees: shared object caches, per-target worktrees, recursive submodules.

Two phases, so a failure leaves the previous worktree and lock as they were: first the
whole tree is resolved and verified in the object caches (every commit fetched, every
pin compared with the gitlink that records it); only then is a new worktree built beside
the old one and swapped in.
"""

from __future__ import annotations

import hashlib
import shutil
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.config.recipe import Recipe
from xdnaforge.config.site import Site
from xdnaforge.errors import StageFailed
from xdnaforge.process.run import CommandFailed
from xdnaforge.state.lockfile import held
from xdnaforge.state.storage import swap_in
from xdnaforge.tools.git import (
    FETCH_TIMEOUT,
    cache_name,
    git,
    is_local,
    parse_gitlinks,
    parse_gitmodules,
    resolve_url,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """One repository of the resolved tree."""

    path: str  # "." for the top, else relative to the top ("xrt", "xrt/src/.../aiebu")
    name: str  # the submodule name in its parent's .gitmodules (the source name for the top)
    url: str  # upstream URL
    fetched_from: str  # the mirror used, or the upstream URL
    commit: str  # what is checked out: the recipe pin for the top, the gitlink below
    pinned: str | None  # the recipe's pin for this path, if it pins one
    cache: Path
    parent: str | None  # path of the repository whose .gitmodules names this one

    @property
    def relative_path(self) -> str:
        """The path inside its parent repository."""
        if self.parent in (None, "."):
            return self.path
        return self.path[len(f"{self.parent}/") :]


def join(parent: str, child: str) -> str:
    return child if parent == "." else f"{parent}/{child}"


def _label(node_path: str, url: str) -> str:
    return f"{node_path} ({url})" if node_path != "." else url


def source_for(site: Site, url: str) -> str:
    """Where a repository is fetched from: its mirror, or the upstream URL itself."""
    return site.mirror_for(url) or url


def fetch_refs(cache: Path, source: str, namespace: str, log: Path) -> None:
    """Every branch and tag of `source` into `cache` under `namespace` (pruned, no tags of
    its own): the one fetch both the pinned tree and `doit track` make."""
    git(
        [
            "--git-dir",
            str(cache),
            "fetch",
            "--quiet",
            "--no-tags",
            "--prune",
            source,
            f"+refs/heads/*:{namespace}/heads/*",
            f"+refs/tags/*:{namespace}/tags/*",
        ],
        cwd=cache,
        log_file=log,
        timeout=FETCH_TIMEOUT,
    )


def _has_commit(cache: Path, commit: str) -> bool:
    # `cat-file -t` exits 128 for an object the cache does not hold
    result = git(
        ["--git-dir", str(cache), "cat-file", "-t", commit],
        cwd=cache,
        log_file=None,
        ok_codes=(0, 128),
    )
    return result.returncode == 0 and result.stdout.strip() == "commit"


def _newest(cache: Path, namespace: str, log: Path) -> str:
    result = git(
        [
            "--git-dir",
            str(cache),
            "for-each-ref",
            "--sort=-committerdate",
            "--count=1",
            "--format=%(objectname) %(committerdate:short) %(refname)",
            namespace,
        ],
        cwd=cache,
        log_file=log,
    )
    line = result.stdout.strip()
    if not line:
        return "it has no branches or tags at all"
    sha, date, ref = line.split(" ", 2)
    ref = ref.removeprefix(namespace).lstrip("/")
    return f"its newest commit is {sha} ({date}, {ref})"


def ensure_commit(node: Node, site: Site, log: Path) -> None:
    """Make `node.commit` present in its object cache, fetching from mirror or upstream."""
    cache = node.cache
    with held(cache.with_suffix(".lock"), f"object cache {cache}"):
        if not (cache / "objects").is_dir():
            cache.mkdir(parents=True, exist_ok=True)
            git(["init", "--bare", "--quiet", str(cache)], cwd=cache, log_file=log)
        if _has_commit(cache, node.commit):
            return
        source = node.fetched_from
        label = _label(node.path, node.url)
        where = f"mirror {source}" if source != node.url else source
        if site.offline and not is_local(source):
            raise StageFailed(
                f"{label}: commit {node.commit} is not in the object cache and offline mode "
                f"forbids fetching it from {source}",
                hint=f"add a local mirror for {node.url} under 'mirrors:' in {site.origin}, "
                "or set 'offline: false'",
            )
        if "://" not in source and is_local(source):
            # a plain path lends its objects; a URL (file://, https://, ssh://) is fetched
            _borrow(cache, node, source, site, log)
            return
        namespace = f"refs/xdnaforge/sources/{cache_name(source)}"
        try:
            # all branches and tags: a mirror's upload-pack refuses unadvertised commits
            fetch_refs(cache, source, namespace, log)
        except CommandFailed as error:
            offline_hint = " or set 'offline: true' with local mirrors" if not site.offline else ""
            raise StageFailed(
                f"{label}: cannot fetch from {source}\n{error.output.strip()}",
                hint=f"check the network or the mirror in {site.origin}{offline_hint}",
            ) from None
        if not _has_commit(cache, node.commit):
            # hosts such as GitHub serve any reachable commit by id, even off every branch
            git(
                ["--git-dir", str(cache), "fetch", "--quiet", "--no-tags", source, node.commit],
                cwd=cache,
                log_file=log,
                timeout=FETCH_TIMEOUT,
                ok_codes=(0, 1, 128),
            )
        if not _has_commit(cache, node.commit):
            raise StageFailed(
                f"{label}: commit {node.commit} is not in {where}; "
                f"{_newest(cache, namespace, log)}",
                hint="update the mirror (git fetch in it) or check the pin in the recipe",
            )
        # a ref per pin keeps the commit through any gc of the shared cache
        git(
            [
                "--git-dir",
                str(cache),
                "update-ref",
                f"refs/xdnaforge/pins/{node.commit}",
                node.commit,
            ],
            cwd=cache,
            log_file=log,
        )


def _objects_of(mirror: Path) -> Path | None:
    for candidate in (mirror / "objects", mirror / ".git" / "objects"):
        if candidate.is_dir():
            return candidate.resolve()
    return None


def _borrow(cache: Path, node: Node, source: str, site: Site, log: Path) -> None:
    """A local mirror lends its objects to the cache (git alternates): nothing is copied.

    Unlike a fetch, this also works with a mirror that lacks some large blobs (a partial
    copy): the commits and trees are there, and the checkout reports the missing files.
    """
    label = _label(node.path, node.url)
    mirror = Path(source.removeprefix("file://")).expanduser()
    objects = _objects_of(mirror)
    if objects is None:
        raise StageFailed(
            f"{label}: the mirror {mirror} is not a git repository",
            hint=f"fix the mirror for {node.url} in {site.origin}",
        )
    alternates = cache / "objects" / "info" / "alternates"
    known = alternates.read_text().split() if alternates.exists() else []
    if str(objects) not in known:
        alternates.parent.mkdir(parents=True, exist_ok=True)
        alternates.write_text("".join(f"{line}\n" for line in [*known, str(objects)]))
    if not _has_commit(cache, node.commit):
        newest = _newest(mirror if (mirror / "objects").is_dir() else mirror / ".git", "refs", log)
        raise StageFailed(
            f"{label}: commit {node.commit} is not in mirror {mirror}; {newest}",
            hint="update the mirror (git fetch in it) or check the pin in the recipe",
        )
    git(
        ["--git-dir", str(cache), "update-ref", f"refs/xdnaforge/pins/{node.commit}", node.commit],
        cwd=cache,
        log_file=log,
    )


def blob_at(cache: Path, commit: str, path: str) -> str | None:
    """The file at `path` in `commit` (held by the cache), or None where the tree has none."""
    result = git(
        ["--git-dir", str(cache), "cat-file", "blob", f"{commit}:{path}"],
        cwd=cache,
        log_file=None,
        ok_codes=(0, 128),
    )
    return result.stdout if result.returncode == 0 else None


def resolve_tree(recipe: Recipe, site: Site, log: Path) -> list[Node]:
    """Every repository of the pinned tree, verified in the caches; nothing is checked out."""
    source = recipe.pinned
    pins = {s.path: s.commit for s in source.submodules}
    unused = {u.path for u in source.unused_submodules}
    top = Node(
        path=".",
        name=source.name,
        url=source.url,
        fetched_from=source_for(site, source.url),
        commit=source.commit,
        pinned=source.commit,
        cache=site.cache_dir / cache_name(source.url),
        parent=None,
    )
    ensure_commit(top, site, log)
    nodes: list[Node] = []
    unavailable: list[StageFailed] = []
    seen: set[str] = set()
    queue = deque([top])
    while queue:
        node = queue.popleft()
        nodes.append(node)
        entries = parse_gitmodules(blob_at(node.cache, node.commit, ".gitmodules") or "")
        if not entries:
            continue
        listing = git(
            [
                "--git-dir",
                str(node.cache),
                "ls-tree",
                node.commit,
                "--",
                *[e.path for e in entries],
            ],
            cwd=node.cache,
            log_file=log,
        )
        links = parse_gitlinks(listing.stdout)
        for entry in entries:
            path = join(node.path, entry.path)
            seen.add(path)
            link = links.get(entry.path)
            if path in unused or link is None:
                continue
            pin = pins.get(path)
            if pin is not None and pin != link:
                raise StageFailed(
                    f"submodule {path}: the recipe pins {pin}, but {node.name} at "
                    f"{node.commit} records {link}",
                    hint=f"pin {link} in {recipe.origin.rsplit(':', 1)[0]} if the new commit "
                    "is intended, or pin the parent commit that records yours",
                )
            url = resolve_url(entry.url, node.url)
            child = Node(
                path=path,
                name=entry.name,
                url=url,
                fetched_from=source_for(site, url),
                commit=link,
                pinned=pin,
                cache=site.cache_dir / cache_name(url),
                parent=node.path,
            )
            try:
                ensure_commit(child, site, log)
            except StageFailed as error:
                # keep going: a user fixing mirrors wants every missing commit in one run
                unavailable.append(error)
                continue
            queue.append(child)
    if unavailable:
        hints = sorted({e.hint for e in unavailable if e.hint})
        raise StageFailed("\n".join(e.message for e in unavailable), hint="; ".join(hints))
    missing = sorted((set(pins) | unused) - seen)
    if missing:
        raise StageFailed(
            f"the recipe names submodule(s) {', '.join(missing)}, which the pinned tree does "
            "not have",
            hint=f"fix source.submodules / unused_submodules in {recipe.origin.rsplit(':', 1)[0]}",
        )
    return sorted(nodes, key=lambda n: (n.path != ".", n.path))


def _head(directory: Path, log: Path) -> str:
    return git(["rev-parse", "HEAD"], cwd=directory, log_file=log).stdout.strip()


def tracked_changes(directory: Path, log: Path) -> str | None:
    """A digest of the repository's changes to tracked files, None when it has none.

    Built from the changed paths and the content now on disk, not from `git diff`, which
    cannot run when a partial mirror lacks the old blob. Untracked files do not count:
    builds write their trees inside the sources.
    """
    listing = git(
        ["diff", "--name-status", "--no-renames", "--ignore-submodules=all", "-z", "HEAD"],
        cwd=directory,
        log_file=log,
    ).stdout
    fields = [f for f in listing.split("\0") if f]
    if not fields:
        return None
    digest = hashlib.sha256()
    for status, path in sorted(zip(fields[0::2], fields[1::2], strict=True), key=lambda p: p[1]):
        file = directory / path
        content = hashlib.sha256(file.read_bytes()).hexdigest() if file.is_file() else "-"
        digest.update(f"{status}\t{path}\t{content}\n".encode())
    return digest.hexdigest()


def _check_out(cache: Path, commit: str, destination: Path, log: Path) -> None:
    # --shared borrows the cache's objects instead of copying them; a plain checkout (unlike
    # `git submodule update`) tolerates a blob missing from a partial mirror: the file is
    # reported and left out, and the lock record lists it
    git(
        ["clone", "--quiet", "--shared", "--no-checkout", str(cache), str(destination)],
        cwd=destination.parent,
        log_file=log,
        timeout=FETCH_TIMEOUT,
    )
    git(["checkout", "--quiet", "--detach", commit], cwd=destination, log_file=log)
    if _head(destination, log) != commit:
        raise StageFailed(f"{destination}: checkout did not reach {commit}")


def materialize(nodes: list[Node], destination: Path, log: Path) -> None:
    """Build a fresh worktree with every node at its commit (parents before children)."""
    _check_out(nodes[0].cache, nodes[0].commit, destination, log)
    for node in nodes[1:]:
        assert node.parent is not None
        parent = destination / node.parent
        target = destination / node.path
        if target.exists():
            target.rmdir()  # the empty directory git leaves for an uninitialised submodule
        target.parent.mkdir(parents=True, exist_ok=True)
        _check_out(node.cache, node.commit, target, log)
        # register it as the submodule it is, with its git directory where git keeps it
        git(["submodule", "init", "--quiet", "--", node.relative_path], cwd=parent, log_file=log)
        git(["config", f"submodule.{node.name}.url", str(node.cache)], cwd=parent, log_file=log)
        git(
            ["submodule", "absorbgitdirs", "--", node.relative_path],
            cwd=parent,
            log_file=log,
        )


def missing_files(directory: Path, log: Path) -> list[str]:
    """Tracked files the checkout could not write (blobs a partial mirror lacks)."""
    status = git(
        ["diff", "--name-only", "--diff-filter=D", "--ignore-submodules=all", "HEAD"],
        cwd=directory,
        log_file=log,
    )
    return status.stdout.split()


def foreign_changes(nodes: list[Node], tree: Path, ours: dict[str, str], log: Path) -> list[str]:
    """Repositories whose tracked changes are not exactly the patches xdnaforge applied."""
    changed = []
    for node in nodes:
        directory = tree / node.path
        if not (directory / ".git").exists():
            continue
        digest = tracked_changes(directory, log)
        if digest is not None and ours.get(node.path) != digest:
            changed.append(node.path)
    return changed


def replace_tree(nodes: list[Node], tree: Path, log: Path) -> None:
    """Build the new worktree beside the old one, then swap; a failure keeps the old one."""
    staging = tree.with_name(tree.name + ".new")
    if staging.exists():
        shutil.rmtree(staging)  # left by a killed run; never the live tree
    staging.parent.mkdir(parents=True, exist_ok=True)
    materialize(nodes, staging, log)
    swap_in(staging, tree)
