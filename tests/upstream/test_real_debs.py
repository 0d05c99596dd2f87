"""Real-world packages nobody here built are judged right.

Set XDNAFORGE_REAL_DEBS to a directory holding Debian packages (for example from
`apt-get download acpi-call-dkms firmware-ath9k-htc linux-image-6.1.0-57-amd64 libudev1
python3-yaml ocl-icd-libopencl1`); skipped otherwise, since tests use no network. The
expected verdict comes from the package name: *-dkms, firmware-*, linux-image-* block.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from xdnaforge.debs.debfile import read_deb
from xdnaforge.debs.rules import audit, wants_text

FOLDER = os.environ.get("XDNAFORGE_REAL_DEBS")
DEBS = sorted(Path(FOLDER).glob("*.deb")) if FOLDER else []
EXPECTED_RULES = {
    r"-dkms$": {"DKMS-001", "DKMS-003", "DEP-001"},
    r"^firmware-": {"FW-001"},
    r"^linux-image-": {"KMOD-001", "KMOD-002", "KMOD-003"},
}


@pytest.mark.skipif(not DEBS, reason="XDNAFORGE_REAL_DEBS is not set or holds no .deb")
@pytest.mark.parametrize("deb", DEBS, ids=[d.name for d in DEBS])
def test_real_package_verdict(deb: Path) -> None:
    verdict = audit(read_deb(deb, wants_text))
    found = {f.rule for f in verdict.findings}
    for pattern, rules in EXPECTED_RULES.items():
        if re.search(pattern, verdict.package):
            assert verdict.verdict == "block"
            assert rules <= found
            return
    assert verdict.verdict == "pass", verdict.findings
