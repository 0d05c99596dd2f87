"""Where XRT's pyxrt source (src/python/pybind11/src/pyxrt.cpp and its pyxrt.pyi stub) comes
from for `doit pyxrt`: a tree the user names, the recipe's fetched tree (xdna-driver with its
xrt submodule), or the installed version's tag in XRT's object cache or local mirror.

Reads trees and git objects; never fetches (a missing tag is a message saying how to get it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.process.run import CommandFailed
from xdnaforge.tools.git import git

PYXRT_DIR = "src/python/pybind11"
PYXRT_CPP = f"{PYXRT_DIR}/src/pyxrt.cpp"
PYXRT_STUB = f"{PYXRT_DIR}/pyxrt.pyi"
XRT_URL = "https://github.com/Xilinx/XRT.git"


@dataclass(frozen=True, slots=True, kw_only=True)
class PyxrtSource:
    cpp: Path
    stub: Path | None  # pyxrt.pyi (XRT 2.20+ installs it beside the binding)
    described: str  # "the recipe's fetched tree build/T/src/xrt", "XRT 2.25.0 (tag ...)"
    commit: str | None  # the XRT commit, when read from git


def in_tree(tree: Path) -> Path | None:
    """The XRT tree inside `tree`: the tree itself, or an xdna-driver checkout's xrt/."""
    for base in (tree, tree / "xrt"):
        if (base / PYXRT_CPP).is_file():
            return base
    return None


def from_tree(tree: Path, described: str) -> PyxrtSource | None:
    base = in_tree(tree)
    if base is None:
        return None
    stub = base / PYXRT_STUB
    return PyxrtSource(
        cpp=base / PYXRT_CPP,
        stub=stub if stub.is_file() else None,
        described=f"{described} {base}",
        commit=None,
    )


def _tag_commit(git_dir: Path, tags: Sequence[str], log: Path) -> tuple[str, str] | None:
    """(tag, commit) of the first of `tags` in `git_dir`: its own tags, or those a fetch put
    under refs/xdnaforge/sources/<source>/tags/ (sources/trees.fetch_refs)."""
    for tag in tags:
        for ref in (f"refs/tags/{tag}", f"refs/xdnaforge/sources/*/tags/{tag}"):
            found = git(
                [
                    "--git-dir",
                    str(git_dir),
                    "for-each-ref",
                    "--count=1",
                    "--format=%(objectname) %(*objectname)",
                    ref,
                ],
                cwd=git_dir,
                log_file=log,
            ).stdout.split()
            if found:
                return tag, found[-1]  # the peeled commit of an annotated tag comes last
    return None


def from_git(
    git_dirs: Sequence[Path], version: str, tags: Sequence[str], work: Path, log: Path
) -> PyxrtSource | None:
    """pyxrt.cpp (and the stub) of XRT `version` from the first repository holding one of
    `tags`, written under `work`."""
    for git_dir in git_dirs:
        if not (git_dir / "objects").is_dir():
            continue
        tagged = _tag_commit(git_dir, tags, log)
        if tagged is None:
            continue
        tag, commit = tagged
        target = work / "xrt"
        files: dict[str, Path | None] = {}
        for name in (PYXRT_CPP, PYXRT_STUB):
            try:
                text = git(
                    ["--git-dir", str(git_dir), "show", f"{commit}:{name}"],
                    cwd=git_dir,
                    log_file=log,
                ).stdout
            except CommandFailed:
                files[name] = None  # XRT before 2.20 has no stub; no .cpp: not this tree
                continue
            path = target / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            files[name] = path
        cpp = files.get(PYXRT_CPP)
        if cpp is None:
            continue
        return PyxrtSource(
            cpp=cpp,
            stub=files.get(PYXRT_STUB),
            described=f"XRT {version} (tag {tag}, commit {commit[:12]}) from {git_dir}",
            commit=commit,
        )
    return None
