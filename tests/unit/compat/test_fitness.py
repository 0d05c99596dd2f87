"""compat/fitness.py: a consumer's contract (NPUs, plugin, floors, known failures) and what
its verdict says it checked."""

from __future__ import annotations

import dataclasses

from xdnaforge.compat import facts
from xdnaforge.compat.firmware import judge_firmware
from xdnaforge.compat.fitness import judge_consumers

UPSTREAM = facts.load_upstream()
STRIX = facts.HostCompat(
    kernel="7.0.0-27-generic",
    pci="1022:17f0",
    revision="0x10",
    driver_source="in-tree",
    drm_version="0.7.0",
    running_firmware="1.1.2.64",
    columns=8,
    memlock_bytes=-1,
    plugin=True,
)


def flm(host: facts.HostCompat) -> tuple[bool | None, tuple[str, ...], tuple[str, ...]]:
    finding = judge_consumers(host, judge_firmware(host, UPSTREAM), UPSTREAM)["FastFlowLM"]
    return finding.ok, finding.why, finding.checked


def test_ready_says_what_it_checked() -> None:
    ok, _, checked = flm(STRIX)
    assert ok is True
    assert "NPU generation (XDNA2: 1022:17f0)" in checked
    assert "userspace plugin libxrt_driver_xdna.so.2" in checked
    assert "known failures on this NPU" in checked
    assert "DRM driver version >= 0.6" in checked


def test_an_xdna1_npu_is_no_whatever_the_driver() -> None:
    phoenix = dataclasses.replace(STRIX, pci="1022:1502", revision="0x00")
    ok, why, _ = flm(phoenix)
    assert ok is False
    assert "runs on XDNA2 NPUs (1022:17f0) only; this one is 1022:1502" in why[0]


def test_an_xrt_without_the_plugin_is_no() -> None:
    ok, why, _ = flm(dataclasses.replace(STRIX, plugin=False))
    assert ok is False
    assert any("libxrt_driver_xdna.so.2" in w for w in why)
    # not read: not a failure, and said as not checked
    finding = judge_consumers(
        dataclasses.replace(STRIX, plugin=None),
        judge_firmware(STRIX, UPSTREAM),
        UPSTREAM,
    )["FastFlowLM"]
    assert finding.ok is True
    assert any("libxrt_driver_xdna.so.2" in item for item in finding.unchecked)


def test_krackan_is_held_to_its_known_failure_with_its_source() -> None:
    krackan = dataclasses.replace(STRIX, revision="0x20")
    ok, why, _ = flm(krackan)
    assert ok is None  # which FastFlowLM is installed decides
    assert "CREATE_HWCTX -22" in why[0]
    assert "FastFlowLM issue 655" in why[0]
    assert flm(dataclasses.replace(krackan, userspace={"fastflowlm": "0.9.50"}))[0] is False
    assert flm(dataclasses.replace(krackan, userspace={"fastflowlm": "0.9.44"}))[0] is True
