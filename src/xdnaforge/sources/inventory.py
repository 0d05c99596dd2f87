"""Every repository a recipe's pinned tree needs, nested submodules included, read from the
local mirrors' and caches' gitlinks without fetching or writing anything (for `doit plan`),
with where each would come from (the mirror rule that chose it) and whether it is available.

Reads git objects through tools/git.py only; nothing is fetched, no cache is created.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.config.recipe import Recipe
from xdnaforge.config.site import Site
from xdnaforge.tools.git import (
    cache_name,
    git,
    is_local,
    parse_gitlinks,
    parse_gitmodules,
    resolve_url,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Repository:
    path: str  # in the tree: "." for xdna-driver itself
    url: str
    commit: str | None  # None: the parent's gitlink could not be read
    source: str  # the mirror a rule chose, or the URL itself
    rule: str  # "mirrors", "mirror_dirs (owner+name)", "mirror_rewrites", "git insteadOf", ""
    state: str  # "available", "missing", "unused", "not checked"
    detail: str  # why, in a few words


def _git_dir(path: Path) -> Path | None:
    for candidate in (path / ".git", path):
        if (candidate / "objects").is_dir():
            return candidate
    return None


def _reader(site: Site, url: str, source: str) -> Path | None:
    """The local git directory to read `url`'s objects from: its local mirror, else the
    object cache a fetch made (a URL mirror is not read: that would need the network)."""
    if is_local(source):
        found = _git_dir(Path(source.removeprefix("file://")).expanduser())
        if found is not None:
            return found
    return _git_dir(site.cache_dir / cache_name(url))


def _has(repo: Path, commit: str) -> bool:
    result = git(
        [
            "-c",
            f"safe.directory={repo}",
            "--git-dir",
            str(repo),
            "cat-file",
            "-e",
            f"{commit}^{{commit}}",
        ],
        cwd=repo,
        log_file=None,
        ok_codes=(0, 1, 128),
    )
    return result.returncode == 0


def _children(repo: Path, commit: str) -> list[tuple[str, str, str | None]]:
    """(path, url, gitlink commit) of each submodule `commit` records."""
    on = ["-c", f"safe.directory={repo}", "--git-dir", str(repo)]
    blob = git(
        [*on, "cat-file", "blob", f"{commit}:.gitmodules"],
        cwd=repo,
        log_file=None,
        ok_codes=(0, 128),
    )
    if blob.returncode != 0:
        return []
    entries = parse_gitmodules(blob.stdout)
    if not entries:
        return []
    listing = git(
        [*on, "ls-tree", commit, "--", *[e.path for e in entries]], cwd=repo, log_file=None
    )
    links = parse_gitlinks(listing.stdout)
    return [(e.path, e.url, links.get(e.path)) for e in entries]


def inventory(recipe: Recipe, site: Site) -> list[Repository]:
    """The pinned tree's repositories, breadth first, top first."""
    pinned = recipe.pinned
    unused = {u.path for u in pinned.unused_submodules}
    found: list[Repository] = []
    queue: deque[tuple[str, str, str | None]] = deque([(".", pinned.url, pinned.commit)])
    while queue:
        path, url, commit = queue.popleft()
        match = site.mirror_found(url)
        source, rule = (match.source, match.rule) if match else (url, "")
        if path in unused:
            found.append(_entry(path, url, commit, source, rule, "unused", "listed as unused"))
            continue
        repo = _reader(site, url, source)
        if commit is None:
            state, detail = "missing", "its parent's gitlink could not be read"
        elif repo is None:
            state = "not checked" if not is_local(source) else "missing"
            detail = (
                "a remote; fetched when the tree is"
                if not is_local(source)
                else f"no git repository at {source}"
            )
        elif _has(repo, commit):
            state, detail = "available", f"in {repo}"
            parent = url
            queue.extend(
                (f"{path}/{child}" if path != "." else child, resolve_url(child_url, parent), link)
                for child, child_url, link in _children(repo, commit)
            )
        else:
            state, detail = "missing", f"commit {commit[:12]} is not in {repo}"
        found.append(_entry(path, url, commit, source, rule, state, detail))
    return found


def _entry(
    path: str, url: str, commit: str | None, source: str, rule: str, state: str, detail: str
) -> Repository:
    return Repository(
        path=path, url=url, commit=commit, source=source, rule=rule, state=state, detail=detail
    )


def format_inventory(repositories: list[Repository]) -> str:
    """`doit plan`'s list: one line a repository, with where it comes from and its state."""
    missing = [r for r in repositories if r.state == "missing"]
    head = f"repositories: {len(repositories)} (nested included)"
    if missing:
        head += f", {len(missing)} missing"
    lines = [head]
    for repo in repositories:
        commit = repo.commit[:12] if repo.commit else "?" * 12
        via = f" <- {repo.source} ({repo.rule})" if repo.rule else ""
        lines.append(f"  {repo.path} {commit} {repo.url}{via}: {repo.state}, {repo.detail}")
    return "\n".join(lines)
