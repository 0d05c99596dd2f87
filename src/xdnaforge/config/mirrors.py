"""Where an upstream repository is fetched from, by rule: the site's exact `mirrors:` entries,
directories of mirrors laid out as `owner+name` (the shape `git clone --mirror` trees are
kept in), the site's URL prefix rewrites, and the user's git `url.<base>.insteadOf` rules
(xdnaforge runs git with the user's configuration ignored, so it applies them itself).

The model and the lookup are pure; `scan_directory` and `read_git_rules` are the two readers
the site loader (config/site.py) calls.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.tools.git import normalize_url


@dataclass(frozen=True, slots=True, kw_only=True)
class Found:
    """A mirror for a URL, and the rule that chose it (said by `doit plan`)."""

    source: str
    rule: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MirrorRules:
    exact: tuple[tuple[str, str], ...] = ()  # upstream URL -> path or URL (`mirrors:`)
    named: tuple[tuple[str, str], ...] = ()  # "owner+name" -> path (from `mirror_dirs:`)
    rewrites: tuple[tuple[str, str], ...] = ()  # URL prefix -> replacement (`mirror_rewrites:`)
    insteadof: tuple[tuple[str, str], ...] = ()  # URL prefix -> base (git's insteadOf)

    def find(self, url: str) -> Found | None:
        """The first rule that gives `url` a mirror: exact, owner+name, rewrite, insteadOf."""
        wanted = normalize_url(url)
        for upstream, mirror in self.exact:
            if normalize_url(upstream) == wanted:
                return Found(source=mirror, rule="mirrors")
        key = owner_name(url)
        for name, path in self.named:
            if key is not None and name.lower() == key.lower():
                return Found(source=path, rule=f"mirror_dirs ({name})")
        rewritten = _rewrite(url, self.rewrites)
        if rewritten is not None:
            return Found(source=rewritten, rule="mirror_rewrites")
        rewritten = _rewrite(url, self.insteadof)
        if rewritten is not None:
            return Found(source=rewritten, rule="git insteadOf")
        return None

    def local_roots(self) -> tuple[str, ...]:
        """Every local directory a rule can point into (build sandboxes bind them read-only)."""
        roots = [m for _, m in self.exact if "://" not in m]
        roots += [path for _, path in self.named]
        roots += [to for _, to in (*self.rewrites, *self.insteadof) if "://" not in to]
        return tuple(dict.fromkeys(roots))


def _rewrite(url: str, rules: tuple[tuple[str, str], ...]) -> str | None:
    """git's rule: the longest matching prefix is replaced; None when none matches."""
    matching = [(prefix, to) for prefix, to in rules if url.startswith(prefix)]
    if not matching:
        return None
    prefix, to = max(matching, key=lambda rule: len(rule[0]))
    return to + url[len(prefix) :]


def owner_name(url: str) -> str | None:
    """`owner+name` of a URL's last two path parts (`https://github.com/amd/xdna-driver.git`
    -> `amd+xdna-driver`), as mirrors are laid out; None for a URL with fewer parts."""
    text = re.sub(r"^[a-z+]+://[^/]+/", "", normalize_url(url))
    text = re.sub(r"^[^/:]+@[^:]+:", "", text)  # scp-like git@host:owner/name
    parts = [p for p in text.split("/") if p]
    if len(parts) < 2:
        return None
    return f"{parts[-2]}+{parts[-1]}"


def scan_directory(directory: Path) -> list[tuple[str, str]]:
    """The `owner+name[.git]` git directories in a mirror directory, as (owner+name, path)."""
    found: list[tuple[str, str]] = []
    if not directory.is_dir():
        return found
    for entry in sorted(directory.iterdir()):
        name = entry.name.removesuffix(".git")
        if "+" not in name or not entry.is_dir():
            continue
        repo = _repository_in(entry)
        if repo is not None:
            found.append((name, str(repo)))
    return found


def _repository_in(entry: Path) -> Path | None:
    """The git repository an `owner+name` entry is: itself (bare, `git clone --mirror`), a
    clone with `.git`, or the one git directory inside it (`owner+name/repo`)."""
    if (entry / "objects").is_dir() or (entry / ".git").exists():
        return entry
    inside = [child for child in entry.iterdir() if (child / "objects").is_dir()]
    return inside[0] if len(inside) == 1 else None


def parse_insteadof(text: str) -> list[tuple[str, str]]:
    """(prefix, base) for each `[url "base"] insteadOf = prefix` of a git config file's text
    (keys are case-insensitive in git; a key may repeat; `;` and `#` start comments)."""
    rules = []
    base = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            match = re.match(r'^\[\s*url\s+"((?:[^"\\]|\\.)*)"\s*\]', line, re.IGNORECASE)
            base = match.group(1) if match else None
            continue
        key, _, value = line.partition("=")
        value = value.strip().strip('"')
        if base is not None and key.strip().lower() == "insteadof" and value:
            rules.append((value, base))
    return rules


def git_config_files(environ: Mapping[str, str]) -> list[Path]:
    """The user's global git configuration, where git itself would read it."""
    if environ.get("GIT_CONFIG_GLOBAL"):
        return [Path(environ["GIT_CONFIG_GLOBAL"])]
    if not environ.get("HOME"):
        return []  # no user: no user configuration (what was passed is all there is)
    home = Path(environ["HOME"])
    xdg = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    return [xdg / "git/config", home / ".gitconfig"]


def read_git_rules(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    rules: list[tuple[str, str]] = []
    for path in git_config_files(environ):
        try:
            rules += parse_insteadof(path.read_text(errors="replace"))
        except OSError:
            continue  # absent or unreadable: git would ignore it too
    return rules
