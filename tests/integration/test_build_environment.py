"""`doit build` of a target whose recipe names a distro other than the host's: every step runs
inside a root made for it (real bubblewrap), the build record proves it, a rerun compiles
nothing and an upgrade inside the environment rebuilds. The root is the test's own (the host's
/usr read-only, its own /etc and a real dpkg status database): no debootstrap, no network."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import require_tool
from tests.fakes.fixture import FakeTools
from tests.integration.apt import export_keyring, make_key, stop_agent
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


@pytest.fixture
def key(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A signing key of the test's own: its fingerprint and its exported keyring."""
    require_tool("gpg")
    home = tmp_path / "gnupg"
    fingerprint = make_key(home)
    yield fingerprint, export_keyring(home, tmp_path / "keyring.gpg")
    stop_agent(home)


def keyring_entry(fingerprint: str, file: Path) -> str:
    return (
        f"    keyring:\n      file: {file}\n      fingerprints: [{fingerprint}]\n"
        "      from: the testdistro-keyring package\n"
    )


def test_env_without_root_says_what_to_run(
    setup: Path, fake_tools: FakeTools, key: tuple[str, Path]
) -> None:
    shutil.rmtree(in_environment(setup))
    (setup / "site.yaml").write_text(SITE + keyring_entry(*key))
    outcome = run_doit(setup, "env", "--target", "synthetic", "--yes", env=fake_tools.env)
    path = fake_tools.env["PATH"]
    tool = shutil.which("mmdebstrap", path=path) or shutil.which("debootstrap", path=path)
    assert outcome.rc == 1, outcome.output
    if tool is None:
        # without either, that is what to install first (.ci/run installs both)
        assert "apt-get install mmdebstrap" in outcome.output
    else:
        assert f"the archive must be signed by: {key[0]} (xdnaforge test" in outcome.output
        assert Path(tool).name in outcome.output
        assert f"--keyring={setup / 'build/envs/testdistro-1.keyring.gpg'}" in outcome.output
        if os.geteuid() != 0:
            assert "needs root" in outcome.output
    assert not (setup / "build/envs/testdistro-1.new").exists()


def test_env_without_a_named_key_creates_nothing(setup: Path, fake_tools: FakeTools) -> None:
    shutil.rmtree(in_environment(setup))
    outcome = run_doit(setup, "env", "--target", "synthetic", "--yes", env=fake_tools.env)
    assert outcome.rc == 1, outcome.output
    if shutil.which("mmdebstrap", path=fake_tools.env["PATH"]) or shutil.which(
        "debootstrap", path=fake_tools.env["PATH"]
    ):
        assert (
            "environment testdistro-1: no archive key is named, so its Release file cannot be "
            "verified; nothing was created" in outcome.output
        )
        assert "site.yaml environments.<distro>-<release>" in outcome.output
    assert not (setup / "build/envs/testdistro-1.new").exists()
    assert not (setup / "build/envs/testdistro-1").exists()
    assert "Traceback" not in outcome.output


def test_env_whose_keyring_lacks_the_named_key_says_which_and_where_from(
    setup: Path, fake_tools: FakeTools, key: tuple[str, Path]
) -> None:
    shutil.rmtree(in_environment(setup))
    other = "0123456789ABCDEF0123456789ABCDEF01234567"
    (setup / "site.yaml").write_text(SITE + keyring_entry(other, key[1]))
    outcome = run_doit(setup, "env", "--target", "synthetic", "--yes", env=fake_tools.env)
    assert outcome.rc == 1, outcome.output
    if shutil.which("mmdebstrap", path=fake_tools.env["PATH"]) or shutil.which(
        "debootstrap", path=fake_tools.env["PATH"]
    ):
        assert (
            f"environment testdistro-1: the keyring {key[1]} holds none of the keys named for "
            f"the archive ({other}); nothing was created" in outcome.output
        )
        assert "the key comes from the testdistro-keyring package" in outcome.output
        assert "site.yaml:" in outcome.output  # where the key is named
    assert not (setup / "build/envs/testdistro-1.new").exists()
    # a keyring file that is not there at all
    (setup / "site.yaml").write_text(SITE + keyring_entry(other, setup / "absent.gpg"))
    gone = run_doit(setup, "env", "--target", "synthetic", "--yes", env=fake_tools.env)
    assert gone.rc == 1
    if "holds none" in outcome.output:
        assert f"the keyring {setup / 'absent.gpg'} is not there, so the archive's key {other}" in (
            gone.output
        )


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
