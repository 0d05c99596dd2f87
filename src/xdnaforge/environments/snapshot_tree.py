"""A tree to prove and survey on, assembled from the local snapshots alone when no fetch could
make one: the pinned top, and every nested repository whose pinned commit a mirror holds; the
ones no mirror holds are listed (path, commit, URL) instead of failing the whole tree.

Edge module: git runs through tools/git.py (`clone --shared --no-checkout`, then a detached
checkout of the pin). The recipe's unused submodules are left out, as fetch leaves them out.
`blocking` is the pure decision of which change the missing repositories make unprovable.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.config.recipe import Recipe
from xdnaforge.config.site import Site
from xdnaforge.process.run import CommandFailed
from xdnaforge.tools.git import git, normalize_url, parse_gitlinks, parse_gitmodules, resolve_url


@dataclass(frozen=True, slots=True)
class Missing:
    """A nested repository whose pinned commit no local snapshot holds."""

    path: str
    commit: str
    url: str

    def describe(self) -> str:
        return f"{self.path} at {self.commit} ({self.url}) is not in the local snapshots"


def _mirror(site: Site, url: str) -> Path | None:
    wanted = normalize_url(url)
    for upstream, mirror in site.mirrors:
        if normalize_url(upstream) == wanted and "://" not in mirror and Path(mirror).is_dir():
            return Path(mirror)
    return None


def _has(mirror: Path, commit: str, log: Path) -> bool:
    done = git(
        ["cat-file", "-e", f"{commit}^{{commit}}"], cwd=mirror, log_file=log, ok_codes=(0, 1, 128)
    )
    return done.returncode == 0


def _check_out(mirror: Path, commit: str, destination: Path, log: Path) -> None:
    if destination.exists():
        shutil.rmtree(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    git(
        ["clone", "--quiet", "--shared", "--no-checkout", str(mirror), str(destination)],
        cwd=destination.parent,
        log_file=log,
        timeout=600,
    )
    git(["checkout", "--quiet", "--detach", commit], cwd=destination, log_file=log, timeout=600)


def assemble(recipe: Recipe, site: Site, destination: Path, log: Path) -> list[Missing]:
    """Check out the pinned tree under `destination` from the site's mirrors; what no
    mirror holds is returned (an empty directory stays where it belongs)."""
    pinned = recipe.pinned
    unused = {u.path for u in pinned.unused_submodules}
    top = _mirror(site, pinned.url)
    if top is None or not _has(top, pinned.commit, log):
        return [Missing(".", pinned.commit, pinned.url)]
    _check_out(top, pinned.commit, destination, log)
    missing: list[Missing] = []
    queue = [("", pinned.url, destination)]
    while queue:
        prefix, parent_url, directory = queue.pop(0)
        links = parse_gitlinks(git(["ls-tree", "-r", "HEAD"], cwd=directory, log_file=log).stdout)
        modules = directory / ".gitmodules"
        entries = parse_gitmodules(modules.read_text(errors="replace")) if modules.is_file() else []
        urls = {e.path: resolve_url(e.url, parent_url) for e in entries}
        for path, commit in sorted(links.items()):
            full = f"{prefix}{path}"
            if full in unused:
                continue
            url = urls.get(path, "")
            mirror = _mirror(site, url) if url else None
            if mirror is None or not _has(mirror, commit, log):
                missing.append(Missing(full, commit, url or "(no .gitmodules entry)"))
                continue
            try:
                _check_out(mirror, commit, directory / path, log)
            except CommandFailed:
                missing.append(Missing(full, commit, url))
                continue
            queue.append((f"{full}/", url, directory / path))
    return missing


def blocking(where: str, argv: list[str], missing: list[Missing]) -> Missing | None:
    """The missing repository a change's proof needs (pure): one that holds the change's
    repository, or, for a proof that configures a whole tree (cmake), one inside it."""
    here = where.strip("/") or "."
    for item in missing:
        if item.path == "." or here == item.path or here.startswith(item.path + "/"):
            return item
    if argv and Path(argv[0]).name == "cmake":
        for item in missing:
            if here == "." or item.path.startswith(here + "/"):
                return item
    return None
