"""`doit build` of a target whose recipe names a distro other than the host's: every step runs
inside a root made for it (real bubblewrap), the build record proves it, a rerun compiles
nothing and an upgrade inside the environment rebuilds. The root is the test's own (the host's
/usr read-only, its own /etc and a real dpkg status database): no debootstrap, no network."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from tests.fakes.fixture import FakeTools
from tests.integration.conftest import DEPENDS, build, run_doit
from tests.integration.envroot import make_environment, needs_bwrap, set_packages

pytestmark = needs_bwrap

ENV = "testdistro-1"
SITE = """environments:
  testdistro-1:
    kind: rootfs
    suite: testing
    mirror: http://archive.invalid/testdistro
"""


def in_environment(project: Path) -> Path:
    """The synthetic recipe, built in testdistro 1 (the fake host runs Ubuntu 26.04)."""
    recipe = project / "recipes/synthetic.yaml"
    text = recipe.read_text()
    text = text.replace(
        "build:\n  steps:", 'build:\n  environment: {distro: testdistro, release: "1"}\n  steps:'
    )
    text = text.replace("    ubuntu-26.04: [cmake", f"    {ENV}: [cmake")
    recipe.write_text(text)
    (project / "site.yaml").write_text(SITE)
    return make_environment(project / "build", ENV, DEPENDS)


def compiles(project: Path) -> int:
    counter = project / "build/synthetic/src/xrt/build/Release/compile-count"
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def test_build_runs_every_step_in_the_environment(setup: Path, fake_tools: FakeTools) -> None:
    base = in_environment(setup)
    plan = run_doit(setup, "plan", "--target", "synthetic")
    assert plan.rc == 0, plan.output
    assert "builds in: testdistro-1 (rootfs of testing" in plan.stdout
    assert "this host runs ubuntu 26.04" not in plan.stdout  # the site entry chose it

    first = build(setup, fake_tools)
    assert first.rc == 0, first.output
    assert "build dependencies installed in testdistro-1" in first.output
    record = json.loads((setup / "artifacts/synthetic/build.json").read_text())
    env = record["environment"]
    assert env["name"] == ENV
    assert env["network"] == "none"
    assert env["twin"] is False
    assert env["env_json_sha256"] == hashlib.sha256((base / "env.json").read_bytes()).hexdigest()
    assert record["toolchain"]["deb:cmake"] == DEPENDS["cmake"]
    for step in ("xrt", "shim"):
        log = (setup / f"build/synthetic/logs/build-{step}.log").read_text()
        first_line = log.splitlines()[0]
        assert "bwrap" in first_line, first_line
        assert "--unshare-net" in first_line
        assert f"--ro-bind {base / 'root' / 'etc'} /etc" in first_line
    # the host's dpkg-query (the fake) was never asked: the environment's database was
    assert fake_tools.calls("dpkg-query") == []
    assert compiles(setup) == 1

    second = build(setup, fake_tools)
    assert second.rc == 0, second.output
    assert "nothing was compiled" in second.output
    assert compiles(setup) == 1

    # a host upgrade does not rebuild: the host's packages are not an input any more
    fake_tools.installed({**DEPENDS, "cmake": "9.9.9-1"})
    assert "nothing was compiled" in build(setup, fake_tools).output

    set_packages(base / "root", {**DEPENDS, "cmake": "4.3.1-1"})  # an upgrade inside
    third = build(setup, fake_tools)
    assert third.rc == 0, third.output
    assert "toolchain.deb:cmake" in third.output
    assert compiles(setup) == 2


def test_missing_environment_says_what_to_run(setup: Path, fake_tools: FakeTools) -> None:
    base = in_environment(setup)
    (base / "env.json").unlink()
    outcome = build(setup, fake_tools)
    assert outcome.rc == 1
    assert "environment testdistro-1: not created yet" in outcome.output
    assert "doit env --target synthetic --yes" in outcome.output
    assert "Traceback" not in outcome.output


def test_missing_dependency_inside_points_at_doit_env(setup: Path, fake_tools: FakeTools) -> None:
    base = in_environment(setup)
    set_packages(base / "root", {k: v for k, v in DEPENDS.items() if k != "cmake"})
    outcome = build(setup, fake_tools)
    assert outcome.rc == 1
    assert "missing build dependencies in environment testdistro-1: cmake" in outcome.output
    assert "Traceback" not in outcome.output


def test_env_without_root_says_what_to_run(setup: Path, fake_tools: FakeTools) -> None:
    shutil.rmtree(in_environment(setup))
    outcome = run_doit(setup, "env", "--target", "synthetic", env=fake_tools.env)
    # as root the command would need --yes; as a user, root: either way nothing is made
    assert outcome.rc == 1, outcome.output
    assert "debootstrap" in outcome.output
    assert ("needs root" in outcome.output) or ("--yes" in outcome.output)
    assert not (setup / "build/envs/testdistro-1.new").exists()
