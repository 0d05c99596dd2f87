"""compat/evidence.py: the kernel log's amdxdna lines and the installed userspace as evidence."""

from __future__ import annotations

from xdnaforge.compat import evidence
from xdnaforge.compat.facts import HostCompat

INCOMPATIBLE = (
    "amdxdna 0000:c7:00.1: [drm] *ERROR* aie2_check_protocol: Incompatible firmware "
    "protocol major 7 minor 3"
)
SMU = "amdxdna 0000:c6:00.1: [drm] *ERROR* aie2_smu_exec: smu cmd 4 failed, 0xff"
MISSING = (
    "amdxdna 0000:c5:00.1: aie2_init: failed to request_firmware amdnpu/1502_00/npu.sbin, ret -2"
)
INITIALIZED = "[drm] Initialized amdxdna_accel_driver 0.6.0 for 0000:c6:00.1 on minor 0"


def test_each_kind_of_line_is_read() -> None:
    assert evidence.read_log((INCOMPATIBLE,)).incompatible_protocol == "7.3"
    assert evidence.read_log((SMU,)).smu_failed == SMU
    assert evidence.read_log((MISSING,)).missing_file == "amdnpu/1502_00/npu.sbin"
    assert evidence.read_log((INITIALIZED,)).drm_version == "0.6.0"
    assert not evidence.read_log(("amdxdna: something else",)).rejected


def test_a_later_successful_probe_supersedes_an_earlier_failure() -> None:
    # the A/B test of field case 007: SMU failure, firmware swapped, then a clean probe
    log = evidence.read_log((SMU, INITIALIZED))
    assert log.smu_failed is None
    assert not log.rejected
    assert log.drm_version == "0.6.0"


def test_only_amdxdna_lines_of_those_kinds_are_kept() -> None:
    text = "\n".join(["usb 1-1: new device", INCOMPATIBLE, "Incompatible firmware protocol x"])
    assert evidence.relevant_lines(text) == (INCOMPATIBLE,)


def test_an_xrt_without_the_plugin_is_a_broken_userspace() -> None:
    host = HostCompat(userspace={"libxrt2": "2.19.0"}, plugin=False)
    verdict = evidence.judge_userspace(host)
    assert verdict.ok is False
    assert "libxrt2 2.19.0" in verdict.why[0]
    assert "libxrt_driver_xdna.so.2" in verdict.why[0]
    assert evidence.judge_userspace(HostCompat(plugin=True)).ok is True
    assert evidence.judge_userspace(HostCompat(userspace={"libxrt2": "2.25.0"})).ok is None


def test_a_consumer_package_is_not_taken_for_xrt() -> None:
    host = HostCompat(userspace={"fastflowlm": "0.9.50", "libxrt2": "2.19.0"}, plugin=False)
    verdict = evidence.judge_userspace(host)
    assert verdict.packages == {"libxrt2": "2.19.0"}
    assert "fastflowlm" not in verdict.why[0]
