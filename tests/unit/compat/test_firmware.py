"""compat/firmware.py: which driver a host runs (in-tree generation, out-of-tree era, a DKMS
backport) and what observed facts say over the prediction."""

from __future__ import annotations

from xdnaforge import yamlfile
from xdnaforge.compat import facts
from xdnaforge.compat.firmware import find_driver, judge_firmware

UPSTREAM = facts.load_upstream()


def host(text: str) -> facts.HostCompat:
    return facts.parse_facts(yamlfile.parse(text, "facts.yaml"))


HWE = """\
kernel: "6.14.0-37-generic"
distro: {id: ubuntu, version: "24.04"}
npu: {pci: "1022:17f0", revision: "0x10"}
driver: {source: in-tree, drm_version: "0.0.0"}
firmware:
  - {path: amdnpu/17f0_10/npu.sbin.zst, target: npu.sbin.1.0.0.63.zst, version: "1.0.0.63"}
"""


def test_drm_0_0_is_the_6_14_to_6_17_driver_and_judges_firmware() -> None:
    fw = judge_firmware(host(HWE), UPSTREAM)
    assert fw.driver == "in-tree-0.0"
    assert (fw.loads, fw.accepted) == ("amdnpu/17f0_10/npu.sbin.zst", True)


def dkms(version: str, drm: str = "") -> facts.HostCompat:
    extra = f', drm_version: "{drm}"' if drm else ""
    return host(
        'kernel: "6.17.0-8-generic"\nnpu: {pci: "1022:17f0", revision: "0x11"}\n'
        f'driver: {{source: dkms, version: "{version}"{extra}}}\nfirmware:\n'
        '  - {path: amdnpu/17f0_11/npu.dev.sbin, version: "1.1.2.65"}\n'
    )


def test_an_out_of_tree_driver_is_judged_by_what_its_version_requests() -> None:
    for version in ("2.23.0_20260407,0123abcd", "2.23.0", "2.21.75", "2.26.95"):
        fw = judge_firmware(dkms(version), UPSTREAM)
        assert fw.loads == "amdnpu/17f0_11/npu.dev.sbin", version
        assert fw.accepted is True, version  # a combined minimum: 7.2 >= 6.12


def test_a_source_build_where_the_rename_happened_names_the_deciding_fact() -> None:
    # 2.19.0: a build from any 2.19 commit, before or after npu.sbin became npu.dev.sbin
    driver, why = find_driver(dkms("2.19.0"), UPSTREAM)
    assert driver is None
    assert "npu.sbin" in why
    assert "npu.dev.sbin" in why
    assert "modinfo -F firmware amdxdna" in why
    # an exact 2.19.72 is the 1.4 line: before the rename
    old, _ = find_driver(dkms("2.19.72"), UPSTREAM)
    assert old is not None
    assert old["firmware_names"] == ["npu.sbin"]


def test_drm_1_0_is_the_out_of_tree_driver_and_a_kernel_version_a_backport() -> None:
    reported = host(
        'kernel: "6.17.0"\nnpu: {pci: "1022:17f0", revision: "0x11"}\n'
        'driver: {drm_version: "1.0.0"}\n'
    )
    _, why = find_driver(reported, UPSTREAM)
    assert why.startswith("out-of-tree amdxdna")
    backport, how = find_driver(dkms("7.0"), UPSTREAM)
    assert backport is not None
    assert backport["firmware_names"] == ["npu_7.sbin", "npu.sbin"]
    assert "DKMS backport" in how
    # a DKMS build reporting an in-tree DRM version is that generation
    generation, _ = find_driver(dkms("2.21.75", drm="0.8.0"), UPSTREAM)
    assert generation is not None
    assert generation["id"] == "in-tree-0.8"


ZIMA = """\
kernel: "6.18.9"
npu: {pci: "1022:17f0", revision: "0x11"}
driver: {source: in-tree, drm_version: "0.1"}
firmware:
  - {path: amdnpu/17f0_11/npu.sbin, target: npu.sbin.1.1.2.66}
  - {path: amdnpu/17f0_11/npu.sbin.1.1.2.66, version: "1.1.2.66"}
"""


def test_a_protocol_line_in_the_kernel_log_decides_an_unknown_protocol() -> None:
    assert judge_firmware(host(ZIMA), UPSTREAM).accepted is None
    logged = ZIMA + (
        'kernel_log: ["amdxdna 0000:c7:00.1: [drm] *ERROR* aie2_check_protocol: '
        'Incompatible firmware protocol major 7 minor 3"]\n'
    )
    fw = judge_firmware(host(logged), UPSTREAM)
    assert (fw.accepted, fw.protocol) == (False, "7.3")


def test_a_running_firmware_equal_to_the_blob_is_acceptance() -> None:
    fw = judge_firmware(host(ZIMA + 'running_firmware: "1.1.2.66"\n'), UPSTREAM)
    assert fw.accepted is True
    assert "1.1.2.66 is running (observed)" in fw.why[-1]


def test_an_smu_failure_is_the_reason_not_the_protocol() -> None:
    cachy = """\
kernel: "6.19.12-1-cachyos"
npu: {pci: "1022:17f0", revision: "0x10"}
driver: {source: in-tree, drm_version: "0.6.0"}
firmware:
  - {path: amdnpu/17f0_10/npu.sbin.zst, target: npu.sbin.1.1.2.64.zst, version: "1.1.2.64"}
kernel_log:
  - "amdxdna 0000:c6:00.1: [drm] *ERROR* aie2_smu_exec: smu cmd 4 failed, 0xff"
  - "amdxdna 0000:c6:00.1: [drm] *ERROR* aie2_smu_init: Access power failed, ret -22"
"""
    fw = judge_firmware(host(cachy), UPSTREAM)
    assert fw.accepted is False
    assert not any("rejects protocol" in why for why in fw.why)
    assert "SMU power-off check" in fw.why[-1]


def test_an_out_of_tree_npu6_loads_as_npu4_does() -> None:
    # 1.7 on: dev_npu6_info points at npu4's dev_priv (17f0_10, its rules)
    krackan = host(
        'kernel: "6.17.0"\nnpu: {pci: "1022:17f0", revision: "0x20"}\n'
        'driver: {source: dkms, version: "2.23.0"}\nfirmware:\n'
        '  - {path: amdnpu/17f0_10/npu.dev.sbin, version: "1.1.2.64"}\n'
    )
    fw = judge_firmware(krackan, UPSTREAM)
    assert (fw.loads, fw.accepted) == ("amdnpu/17f0_10/npu.dev.sbin", True)
