"""Integration helpers: run the real `doit` on a project directory, as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.fakes.fixture import FakeTools
from tests.integration.upstream import Upstream, make_upstream, write_recipe
from tests.unit.test_host import make_sysroot

# what the fake dpkg-query reports installed for the synthetic recipe's build dependencies
DEPENDS = {"cmake": "4.2.3-1", "g++": "4:15.2.0-5ubuntu1", "libboost-dev": "1.90.0.1ubuntu3"}


@dataclass(frozen=True)
class Outcome:
    rc: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_doit(
    project: Path, *args: str, env: dict[str, str] | None = None, cwd: Path = REPO
) -> Outcome:
    """`doit -f <repository>/dodo.py <args>` acting on `project` (its recipes etc.), run in
    `cwd` (the repository, as the README says; doit finds our backend from anywhere)."""
    child_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(project / "home"),
        "LC_ALL": "C.UTF-8",
        "XDNAFORGE_PROJECT_DIR": str(project),
        "XDNAFORGE_SYSROOT": str(project / "sysroot"),
        **(env or {}),
    }
    done = subprocess.run(
        [sys.executable, "-m", "doit", "-f", str(REPO / "dodo.py"), *args],
        cwd=cwd,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Outcome(done.returncode, done.stdout, done.stderr)


def tree(root: Path) -> dict[str, int]:
    """Every file under root with its size and mtime, to prove that nothing changed."""
    return {
        str(p.relative_to(root)): p.stat().st_mtime_ns
        for p in sorted(root.rglob("*"))
        if p.is_file() or p.is_dir()
    }


def build(project: Path, fakes: FakeTools, *args: str) -> Outcome:
    """`doit build --target synthetic` (or `doit <args>`) with the fake tools on PATH."""
    env = {**fakes.env, "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS"}
    return run_doit(project, *(args or ("build", "--target", "synthetic")), env=env)


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    """The synthetic upstream: xdna-driver -> xrt -> aiebu, real git, file:// URLs."""
    return make_upstream(tmp_path / "upstream")


@pytest.fixture
def setup(project_dir: Path, upstream: Upstream, fake_tools: FakeTools) -> Path:
    """A project with the `synthetic` recipe, a fake Ubuntu 26.04 host, its deps installed."""
    write_recipe(project_dir, upstream)
    make_sysroot(project_dir / "sysroot")
    fake_tools.installed(DEPENDS)
    (project_dir / "home").mkdir()
    return project_dir


def installed_here(project: Path, target: str) -> None:
    """install.json as `doit install --root <sysroot>` leaves it (no packages listed)."""
    record = project / f"artifacts/{target}/install.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(
        json.dumps(
            {
                "schema": 1,
                "kind": "install",
                "xdnaforge": "0.1.0",
                "target": target,
                "root": str((project / "sysroot").resolve()),
                "state": "installed",
                "installed": [],
            }
        )
    )
