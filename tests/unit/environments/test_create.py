"""Making a build environment: debootstrap's script and faults, Release facts, a twin's identity."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from tests.conftest import DATA
from xdnaforge.config.envspec import EnvironmentSpec
from xdnaforge.environments.create import _expired, os_release, release_facts
from xdnaforge.environments.root_tools import (
    debootstrap_fault,
    debootstrap_script,
    root_argv,
    sources_list,
)

RECORDED = DATA / "recordings/debootstrap/1.0.128"


def spec(**changes: object) -> EnvironmentSpec:
    values: dict[str, object] = {
        "distro": "ubuntu",
        "release": "26.04",
        "kind": "rootfs",
        "origin": "site.yaml:3",
        "reason": "test",
        "suite": "forky",
        "mirror": "http://deb.debian.org/debian",
        "twin": True,
    }
    values.update(changes)
    return EnvironmentSpec(**values)  # type: ignore[arg-type]


def test_debootstrap_without_a_script_for_the_suite_uses_sid(tmp_path: Path) -> None:
    (tmp_path / "sid").write_text("")
    (tmp_path / "bookworm").write_text("")
    script, note = debootstrap_script(spec(), tmp_path)
    assert script == str(tmp_path / "sid")
    assert note == "the installed debootstrap has no script for forky; using its sid script"
    assert debootstrap_script(spec(suite="bookworm"), tmp_path) == (
        str(tmp_path / "bookworm"),
        None,
    )


@pytest.mark.parametrize(
    ("recording", "cause"),
    [
        ("unknown-suite.txt", "the archive http://deb.debian.org/debian has no suite 'forky'"),
        ("unreachable.txt", "the archive http://deb.debian.org/debian cannot be reached"),
    ],
)
def test_debootstrap_faults_are_one_line(recording: str, cause: str) -> None:
    error = debootstrap_fault(spec(), (RECORDED / recording).read_text())
    assert error.message == f"environment ubuntu-26.04: {cause}"
    assert error.hint


def test_release_facts_and_expiry(tmp_path: Path) -> None:
    lists = tmp_path / "var/lib/apt/lists"
    lists.mkdir(parents=True)
    (lists / "deb.debian.org_debian_dists_forky_InRelease").write_text(
        "Origin: Debian\nSuite: testing\nCodename: forky\n"
        "Date: Fri, 30 Oct 2026 08:08:01 UTC\nValid-Until: Fri, 06 Nov 2026 08:08:01 UTC\n"
    )
    facts = release_facts(tmp_path)
    entry = facts["deb.debian.org_debian_dists_forky_InRelease"]
    assert entry["Date"] == "Fri, 30 Oct 2026 08:08:01 UTC"
    assert len(entry["sha256"]) == 64
    before = datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)
    after = datetime.datetime(2026, 11, 30, tzinfo=datetime.UTC)
    assert _expired(facts, before) == []
    assert _expired(facts, after) == [
        "deb.debian.org_debian_dists_forky_InRelease (valid until Fri, 06 Nov 2026 08:08:01 UTC)"
    ]


def test_twin_presents_the_target_identity() -> None:
    text = os_release(spec(), "Debian GNU/Linux forky/sid")
    assert "\nID=ubuntu\n" in text
    assert '\nVERSION_ID="26.04"\n' in text
    assert "twin on Debian GNU/Linux forky/sid" in text


KEYRING = Path("/b/envs/ubuntu-26.04.keyring.gpg")


def test_mmdebstrap_gets_only_the_named_keys_and_the_dependencies_in_one_call() -> None:
    ubuntu = spec(
        suite="resolute",
        mirror="http://archive.ubuntu.com/ubuntu",
        twin=False,
        components=("main", "universe"),
    )
    argv, note = root_argv(ubuntu, "/usr/bin/mmdebstrap", KEYRING, Path("/r"), ["cmake", "gcc"])
    assert note is None
    assert f"--keyring={KEYRING}" in argv
    assert "--include=apt,cmake,gcc" in argv  # Ubuntu's minbase has no apt
    assert "--mode=root" in argv
    assert "--components=main,universe" in argv
    assert argv[-3:] == ["resolute", "/r", "http://archive.ubuntu.com/ubuntu"]


def test_debootstrap_gets_only_the_named_keys(tmp_path: Path) -> None:
    (tmp_path / "forky").write_text("")
    argv, _ = root_argv(spec(), "/usr/sbin/debootstrap", KEYRING, Path("/r"), ["cmake"], tmp_path)
    assert f"--keyring={KEYRING}" in argv
    assert "cmake" not in " ".join(argv)  # installed inside afterwards
    assert argv[-4:] == ["forky", "/r", "http://deb.debian.org/debian", str(tmp_path / "forky")]


def test_the_roots_apt_trusts_the_named_keys_for_its_one_source() -> None:
    assert sources_list(spec(components=("main",))) == (
        "deb [signed-by=/etc/apt/keyrings/xdnaforge-archive.gpg] http://deb.debian.org/debian "
        "forky main\n"
    )
