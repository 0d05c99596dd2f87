"""Upstream lines in the object caches and mirrors: a branch, tag or commit resolved to a
commit, every gitlink below it (recorded even when no mirror holds it), files at a commit.

I/O through GitPython and tools/git.py, as sources/trees.py; offline works from local mirrors and
what the caches already hold. Nothing here raises for a nested commit that cannot be had:
it is recorded as unavailable, for the caller to name. (Flat only because sources/trees.py still
is: it belongs to sources/ as sources/lines.py once sources/trees.py is sources/trees.py.)
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.config.site import Site
from xdnaforge.errors import StageFailed
from xdnaforge.process.run import CommandFailed
from xdnaforge.sources.trees import Node, blob_at, ensure_commit, fetch_refs, join, source_for
from xdnaforge.tools.git import (
    Gitlink,
    cache_name,
    git,
    is_local,
    parse_gitlinks,
    parse_gitmodules,
    resolve_url,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolved:
    commit: str
    how: str  # "branch 1.9", "tag 2.25.0", "commit c4052fc3..."
    fetched_from: str
    cache: Path


def _mirror_dir(source: str) -> Path | None:
    """A local mirror given as a plain path (borrowed, never fetched), else None."""
    if "://" in source or not is_local(source):
        return None
    path = Path(source).expanduser()
    return path if path.exists() else None


def _on(repo_dir: Path) -> list[str]:
    """git options to read another user's repository (a shared mirror): `safe.directory`
    for that one path, given on the command line, never written to any configuration."""
    return ["-c", f"safe.directory={repo_dir}", "--git-dir", str(repo_dir)]


def _peel(repo_dir: Path, ref: str, log: Path) -> str | None:
    if not repo_dir.is_dir():
        return None
    result = git(
        [*_on(repo_dir), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
        cwd=repo_dir,
        log_file=log,
        ok_codes=(0, 1, 128),
    )
    text = result.stdout.strip()
    return text if result.returncode == 0 and len(text) == 40 else None


def _namespace(source: str) -> str:
    return f"refs/xdnaforge/sources/{cache_name(source)}"


def _refresh(cache: Path, source: str, site: Site, log: Path) -> None:
    """Fetch every branch and tag of a URL source into the cache's namespace for it."""
    if site.offline and not is_local(source):
        return  # offline: what the cache already holds is all there is
    if not (cache / "objects").is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        git(["init", "--bare", "--quiet", str(cache)], cwd=cache, log_file=log)
    namespace = _namespace(source)
    try:
        fetch_refs(cache, source, namespace, log)
    except CommandFailed as error:
        raise StageFailed(
            f"cannot read the branches and tags of {source}\n{error.output.strip()}",
            hint=f"check the mirror in {site.origin}, or set 'offline: true' with local mirrors",
        ) from None


def resolve(
    site: Site, url: str, *, branch: str = "", tag: str = "", commit: str = "", log: Path
) -> Resolved:
    """The commit a branch, tag or commit id names, present in the object cache afterwards."""
    source = source_for(site, url)
    cache = site.cache_dir / cache_name(url)
    mirror = _mirror_dir(source)
    if mirror is None:
        _refresh(cache, source, site, log)
        where, prefix = cache, f"{_namespace(source)}/"
    else:
        where, prefix = mirror, "refs/"
    if branch:
        how, found = f"branch {branch}", _peel(where, f"{prefix}heads/{branch}", log)
    elif tag:
        how, found = f"tag {tag}", _peel(where, f"{prefix}tags/{tag}", log)
    else:
        how, found = f"commit {commit}", commit
    if found is None:
        if site.offline and mirror is None:
            held = _has_refs(where, prefix, log)
            raise StageFailed(
                f"{how} of {url}: not known here, offline with no local mirror of it "
                + (
                    "(the object cache holds some of its branches and tags, not this one; "
                    "it may exist upstream)"
                    if held
                    else "(the object cache holds none of its branches or tags): whether it "
                    "exists upstream cannot be told"
                ),
                hint=f"add a local mirror of {url} under `mirrors:` in {site.origin}, or run "
                "once with `offline: false` to fill the object cache",
            )
        raise StageFailed(
            f"{how} is not in {source}",
            hint=f"list them: git --git-dir {where} for-each-ref {prefix}heads {prefix}tags",
        )
    node = Node(
        path=".",
        name=url,
        url=url,
        fetched_from=source,
        commit=found,
        pinned=found,
        cache=cache,
        parent=None,
    )
    ensure_commit(node, site, log)
    return Resolved(commit=found, how=how, fetched_from=source, cache=cache)


def _has_refs(where: Path, prefix: str, log: Path) -> bool:
    """Whether the object cache holds any branch or tag of the source (its namespace)."""
    if not (where / "objects").is_dir():
        return False
    result = git(
        ["--git-dir", str(where), "for-each-ref", "--count=1", "--format=%(refname)", prefix],
        cwd=where,
        log_file=log,
        ok_codes=(0, 128),
    )
    return bool(result.stdout.strip())


def branch_tip(site: Site, url: str, branch: str, log: Path) -> Resolved:
    """The branch's newest commit in the mirror or cache (for `--check`)."""
    return resolve(site, url, branch=branch, log=log)


def read_file(cache: Path, commit: str, path: str) -> str | None:
    """A file's text at a commit (None when the tree has no such file)."""
    return blob_at(cache, commit, path)


def walk(site: Site, url: str, commit: str, cache: Path, log: Path) -> list[Gitlink]:
    """Every gitlink below `commit`, breadth first; one no mirror holds is recorded as
    unavailable and not descended into."""
    links: list[Gitlink] = []
    queue: deque[tuple[str, str, str, Path]] = deque([(".", url, commit, cache)])
    while queue:
        path, node_url, node_commit, node_cache = queue.popleft()
        entries = parse_gitmodules(read_file(node_cache, node_commit, ".gitmodules") or "")
        if not entries:
            continue
        listing = git(
            ["--git-dir", str(node_cache), "ls-tree", node_commit, "--"]
            + [e.path for e in entries],
            cwd=node_cache,
            log_file=log,
        )
        recorded = parse_gitlinks(listing.stdout)
        for entry in entries:
            link = recorded.get(entry.path)
            if link is None:
                continue  # .gitmodules names it, the tree has no gitlink: not a submodule
            child_url = resolve_url(entry.url, node_url)
            child = Node(
                path=join(path, entry.path),
                name=entry.name,
                url=child_url,
                fetched_from=source_for(site, child_url),
                commit=link,
                pinned=None,
                cache=site.cache_dir / cache_name(child_url),
                parent=path,
            )
            try:
                ensure_commit(child, site, log)
                available = True
            except StageFailed:
                available = False
            links.append(
                Gitlink(
                    path=child.path,
                    url=child_url,
                    commit=link,
                    available=available,
                    fetched_from=child.fetched_from,
                )
            )
            if available:
                queue.append((child.path, child_url, link, child.cache))
    return sorted(links, key=lambda g: g.path)


def describe(site: Site, url: str, cache: Path, commit: str, log: Path) -> str | None:
    """The tag a commit is, or `<tag>-<n>-g<sha>` from the newest tag before it."""
    source = source_for(site, url)
    mirror = _mirror_dir(source)
    if mirror is not None:
        result = git(
            # release tags are 2.x.y; 202610.2.23.0_Canonical and the like are packagers'
            [*_on(mirror), "describe", "--tags", "--match", "[0-9].[0-9]*", commit],
            cwd=mirror,
            log_file=log,
            ok_codes=(0, 128),
        )
        return result.stdout.strip() or None
    namespace = f"{_namespace(source)}/tags"
    result = git(
        [
            "--git-dir",
            str(cache),
            "for-each-ref",
            "--points-at",
            commit,
            "--format=%(refname)",
            namespace,
        ],
        cwd=cache,
        log_file=log,
    )
    names = [line.removeprefix(f"{namespace}/") for line in result.stdout.split()]
    return names[0] if names else None


def _ancestor(cache: Path, old: str, new: str, log: Path) -> bool:
    result = git(
        ["--git-dir", str(cache), "merge-base", "--is-ancestor", old, new],
        cwd=cache,
        log_file=log,
        ok_codes=(0, 1, 128),
    )
    return result.returncode == 0


def _count(cache: Path, spec: str, log: Path) -> int:
    result = git(
        ["--git-dir", str(cache), "rev-list", "--count", spec],
        cwd=cache,
        log_file=log,
        ok_codes=(0, 128),
    )
    text = result.stdout.strip()
    return int(text) if text.isdigit() else 1 << 30


def relation(cache: Path, old: str, new: str, log: Path) -> str:
    """How `new` relates to `old`, in words: ahead by N, behind, or diverged."""
    if old == new:
        return "the same commit"
    if _ancestor(cache, old, new, log):
        return f"{_count(cache, f'{old}..{new}', log)} commits ahead"
    if _ancestor(cache, new, old, log):
        return f"{_count(cache, f'{new}..{old}', log)} commits behind"
    return (
        f"diverged: {_count(cache, f'{old}..{new}', log)} commits not in the old pin, "
        f"{_count(cache, f'{new}..{old}', log)} of the old pin not in the new one"
    )


def distance(cache: Path, old: str, new: str, log: Path) -> tuple[int, int]:
    """A sort key for "nearest": (0 if old is an ancestor of new else 1, commits between)."""
    if _ancestor(cache, old, new, log):
        return (0, _count(cache, f"{old}..{new}", log))
    return (1, _count(cache, f"{old}...{new}", log))
