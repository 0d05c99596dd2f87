"""Preparing a second target from the shared object cache vs a fresh recursive clone.

Builds a synthetic upstream of realistic shape (xdna-driver -> xrt -> aiebu, many files and
commits) in a temporary directory, then measures:
  1. `doit fetch` of a first target (cold cache: everything comes over file://),
  2. `doit fetch` of a second target pinned to the same tree (warm, shared cache),
  3. `git clone --recursive` of the same tree, as a user preparing a second copy by hand.
Prints wall time and the bytes each one added to the disk (objects fetched or copied).

    python bench/bench_fetch.py [--files 3000] [--commits 60]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.integration.upstream import make_upstream, write_recipe  # noqa: E402


def disk_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def git_bytes(path: Path) -> int:
    """Bytes in git directories (objects, refs) as opposed to checked-out files."""
    return sum(
        p.stat().st_size
        for p in path.rglob("*")
        if p.is_file()
        and not p.is_symlink()
        and (".git" in p.parts or p.suffix == ".git" or any(q.endswith(".git") for q in p.parts))
    )


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.monotonic()
    subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
    return time.monotonic() - started


def grow(upstream_root: Path, files: int, commits: int) -> None:
    """Add bulk to xrt: `files` source files changed over `commits` commits."""
    xrt = upstream_root / "xrt"
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@x",
        "GIT_CONFIG_GLOBAL": "/dev/null",
    }
    per_commit = max(1, files // commits)
    for commit in range(commits):
        for index in range(per_commit):
            path = xrt / f"src/module{index % 50}/file{commit}_{index}.cpp"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"// {commit} {index}\n" + os.urandom(2048).hex() + "\n")
        subprocess.run(["git", "add", "-A"], cwd=xrt, env=env, check=True)
        subprocess.run(["git", "commit", "-qm", f"bulk {commit}"], cwd=xrt, env=env, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--commits", type=int, default=60)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        upstream = make_upstream(root / "upstream")
        grow(upstream.root, options.files, options.commits)
        upstream.heads["xrt"] = upstream.repo("xrt").head.commit.hexsha
        upstream.link("xdna-driver", "xrt", "xrt")
        project = root / "project"
        for name in ("recipes", "matrices", "patches"):
            (project / name).mkdir(parents=True)
        for target in ("first", "second"):
            write_recipe(project, upstream, name=target, patches={})
        env = {"PATH": os.environ["PATH"], "HOME": str(root), "XDNAFORGE_PROJECT_DIR": str(project)}
        doit = [sys.executable, "-m", "doit", "-f", str(REPO / "dodo.py"), "fetch", "--target"]
        build = project / "build"

        cold = timed([*doit, "first"], env, REPO)
        after_first = disk_bytes(build)
        git_first = git_bytes(build)
        warm = timed([*doit, "second"], env, REPO)
        second_bytes = disk_bytes(build) - after_first
        second_git = git_bytes(build) - git_first

        clone_dir = root / "clone"
        clone_env = {**env, "GIT_CONFIG_GLOBAL": "/dev/null"}
        by_hand = timed(
            [
                "git",
                "-c",
                "protocol.file.allow=always",
                "clone",
                "-q",
                "--recursive",
                upstream.urls["xdna-driver"],
                str(clone_dir),
            ],
            clone_env,
            root,
        )
        clone_bytes = disk_bytes(clone_dir)
        clone_git = git_bytes(clone_dir)

        print(f"upstream: xrt with {options.files} files over {options.commits} commits")
        print("                               time     on disk   of which git objects/metadata")
        print(
            f"first target, cold cache:     {cold:6.2f} s  {after_first / 1e6:6.1f} MB"
            f"  {git_first / 1e6:6.1f} MB"
        )
        print(
            f"second target, shared cache:  {warm:6.2f} s  {second_bytes / 1e6:6.1f} MB"
            f"  {second_git / 1e6:6.1f} MB"
        )
        print(
            f"fresh git clone --recursive:  {by_hand:6.2f} s  {clone_bytes / 1e6:6.1f} MB"
            f"  {clone_git / 1e6:6.1f} MB"
        )
        if second_git:
            print(
                f"git data fetched for the second target: {clone_git / second_git:.0f}x less "
                "than a fresh clone"
            )
        shutil.rmtree(clone_dir)


if __name__ == "__main__":
    main()
