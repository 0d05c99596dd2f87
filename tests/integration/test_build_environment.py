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
    if shutil.which("debootstrap", path=fake_tools.env["PATH"]) is None:
        # without debootstrap that is what to install first (.ci/run installs it)
        assert "apt-get install debootstrap" in outcome.output
    else:
        assert ("needs root" in outcome.output) or ("--yes" in outcome.output)
    assert not (setup / "build/envs/testdistro-1.new").exists()


def test_a_twin_is_called_a_twin_and_its_packages_are_not_installed(
    setup: Path, fake_tools: FakeTools, tmp_path: Path
) -> None:
    in_environment(setup)
    (setup / "site.yaml").write_text(SITE + "    twin: true\n")
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    record = json.loads((setup / "artifacts/synthetic/build.json").read_text())
    assert record["environment"]["twin"] is True
    assert record["environment"]["description"].startswith("testdistro-1 (twin: rootfs")
    report = (setup / "artifacts/synthetic/BUILD_REPORT.md").read_text()
    assert "Built in a twin" in report
    refused = run_doit(
        setup, "install", "--target", "synthetic", "--root", str(tmp_path / "image"), "--yes"
    )
    assert refused.rc == 1
    assert "refusing to install synthetic: its packages were built in a twin" in refused.output
    assert not (tmp_path / "image").exists()


def test_a_container_engine_that_cannot_start_is_one_line(
    setup: Path, fake_tools: FakeTools, tmp_path: Path
) -> None:
    in_environment(setup)
    (setup / "site.yaml").write_text(
        "environments:\n  testdistro-1:\n    kind: podman\n    image: localhost/testdistro:1\n"
    )
    engine = tmp_path / "engine/podman"
    engine.parent.mkdir()
    # what podman prints in a nested sandbox that refuses setrlimit
    engine.write_text(
        "#!/bin/sh\necho 'Error: crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted: "
        "OCI permission denied' >&2\nexit 126\n"
    )
    engine.chmod(0o755)
    path = f"{engine.parent}:{fake_tools.env['PATH']}"
    outcome = run_doit(setup, "env", "--target", "synthetic", "--yes", env={"PATH": path})
    assert outcome.rc == 1, outcome.output
    assert (
        "environment testdistro-1: podman is installed but cannot start containers here "
        "(setrlimit refused" in outcome.output
    )
    assert "Traceback" not in outcome.output
