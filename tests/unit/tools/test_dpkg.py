"""dpkg's status file parser."""

from __future__ import annotations

from xdnaforge.tools.dpkg import parse_status


def test_parse_status_keeps_installed_packages_only() -> None:
    text = (
        "Package: cmake\nStatus: install ok installed\nVersion: 4.3.4-1\n"
        "Description: x\n multi-line: continued\n\n"
        "Package: old\nStatus: deinstall ok config-files\nVersion: 1\n\n"
        "Package: gcc-15\nStatus: install ok installed\nVersion: 15.3.0-4\n"
    )
    assert parse_status(text) == {"cmake": "4.3.4-1", "gcc-15": "15.3.0-4"}
