"""dpkg and apt-get: the status file parser, and apt-get install's plan read from what a real
apt-get printed."""

from __future__ import annotations

from tests.conftest import REPO
from xdnaforge.tools.dpkg import parse_apt_install, parse_status

RECORDING = REPO / "tests/data/recordings/apt-get/install-bookworm.txt"


def test_new_upgraded_and_removed_packages_are_read() -> None:
    outcome = parse_apt_install(RECORDING.read_text())
    assert outcome.summary == "32 upgraded, 67 newly installed, 0 to remove and 100 not upgraded."
    assert len(outcome.installed) == 67
    assert len(outcome.upgraded) == 32
    assert {"systemd", "libudev1", "curl"} <= set(outcome.upgraded)
    assert "ocl-icd-dev" in outcome.installed
    assert outcome.removed == ()


def test_removals_are_read_and_no_summary_is_none() -> None:
    text = "The following packages will be REMOVED:\n  libfoo1* bar\nNothing else.\n"
    outcome = parse_apt_install(text)
    assert outcome.removed == ("libfoo1", "bar")
    assert outcome.summary is None


def test_parse_status_keeps_installed_packages_only() -> None:
    text = (
        "Package: cmake\nStatus: install ok installed\nVersion: 4.3.4-1\n"
        "Description: x\n multi-line: continued\n\n"
        "Package: old\nStatus: deinstall ok config-files\nVersion: 1\n\n"
        "Package: gcc-15\nStatus: install ok installed\nVersion: 15.3.0-4\n"
    )
    assert parse_status(text) == {"cmake": "4.3.4-1", "gcc-15": "15.3.0-4"}
