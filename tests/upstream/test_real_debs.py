"""Real-world packages nobody here built are judged right.

Set XDNAFORGE_REAL_DEBS to a directory holding Debian packages: Debian forky's XRT 2.25
(libxrt2, libxrt-npu2, libxrt-utils, libxrt-utils-npu, python3-xrt, libxrt-alveo2,
libxrt-dev, xrt-xocl-dkms from the archive's pool/main/x/xrt/), a real XRT build's
packages, and others (`apt-get download acpi-call-dkms firmware-ath9k-htc
linux-image-6.1.0-57-amd64 libudev1 python3-yaml`); skipped otherwise, since tests use no
network. They are judged together, as a set, with no recipe. The expected verdict comes
from the package name: the stack's own (libxrt*, python3-xrt, xrt-*) pass with no waiver;
*-dkms, firmware-*, linux-image-* block with their content rules; anything else blocks,
since it ships outside the stack's layout.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from xdnaforge.debs import judge
from xdnaforge.debs.rules import Verdict

FOLDER = os.environ.get("XDNAFORGE_REAL_DEBS")
DEBS = sorted(Path(FOLDER).glob("*.deb")) if FOLDER else []
EXPECTED_RULES = {
    r"-dkms$": {"DKMS-001", "DKMS-003", "DEP-001"},
    r"^firmware-": {"FW-001"},
    r"^linux-image-": {"KMOD-001", "KMOD-002", "KMOD-003"},
}
STACK = re.compile(r"^(libxrt.*|python3-xrt|xrt[-_].*)$")


@pytest.fixture(scope="module")
def verdicts() -> dict[str, Verdict]:
    judged, errors = judge.audit_files(DEBS)
    assert errors == []
    return {Path(v.file).name: v for v in judged}


@pytest.mark.skipif(not DEBS, reason="XDNAFORGE_REAL_DEBS is not set or holds no .deb")
@pytest.mark.parametrize("deb", DEBS, ids=[d.name for d in DEBS])
def test_real_package_verdict(deb: Path, verdicts: dict[str, Verdict]) -> None:
    verdict = verdicts[deb.name]
    found = {f.rule for f in verdict.findings}
    for pattern, rules in EXPECTED_RULES.items():
        if re.search(pattern, verdict.package):
            assert verdict.verdict == "block"
            assert rules <= found
            return
    if STACK.match(verdict.package):
        assert verdict.verdict == "pass", verdict.findings
    else:
        assert verdict.verdict == "block"
        assert "PATH-001" in found
