"""The compat resolver on the seed hosts and on every rule the data file holds."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from tests.conftest import REPO
from xdnaforge import yamlfile
from xdnaforge.compat import facts, observe, render, resolver
from xdnaforge.config.project import load_project
from xdnaforge.errors import ConfigError

UPSTREAM = facts.load_upstream()
RECIPES = load_project(REPO, {}).recipes_supported_first()

ZIMA = """\
kernel: "6.18.9"
distro: {id: zimaos, version: "1.7"}
npu: {pci: "1022:17f0", revision: "0x11"}
driver: {source: in-tree, drm_version: "0.1"}
firmware:
  - {path: amdnpu/17f0_11/npu.sbin, target: npu.sbin.%s}
  - {path: amdnpu/17f0_11/npu_7.sbin, target: npu.sbin.1.1.2.65}
  - {path: amdnpu/17f0_11/npu.sbin.1.1.2.65, version: "1.1.2.65"}
  - {path: amdnpu/17f0_11/npu.sbin.1.0.0.166, version: "1.0.0.166"}
"""
UBUNTU = """\
kernel: "7.0.0-27-generic"
distro: {id: ubuntu, version: "26.04"}
npu: {pci: "1022:17f0", revision: "0x10"}
driver: {source: in-tree, drm_version: "0.7.0"}
firmware:
  - {path: amdnpu/17f0_10/npu.sbin.zst, target: npu.sbin.1.0.0.63.zst, version: "1.0.0.63"}
  - {path: amdnpu/17f0_10/npu_7.sbin.zst, target: npu.sbin.1.1.2.64.zst, version: "1.1.2.64"}
"""


def judge(text: str) -> resolver.Verdict:
    host = facts.parse_facts(yamlfile.parse(text, "facts.yaml"))
    return resolver.resolve(host, UPSTREAM, RECIPES)


def test_zimaos_6_18_with_1_1_2_65_is_rejected_and_the_link_is_the_fix() -> None:
    verdict = judge(ZIMA % "1.1.2.65")
    fw = verdict.firmware
    # 6.18 requests npu.sbin only: npu_7.sbin is there but never asked for
    assert fw.loads == "amdnpu/17f0_11/npu.sbin"
    assert (fw.version, fw.protocol, fw.accepted) == ("1.1.2.65", "7.2", False)
    assert "amdnpu/17f0_11/npu_7.sbin" not in fw.tried
    assert verdict.consumers["FastFlowLM"].ok is False
    assert any("DRM driver version 0.1 < 0.6" in w for w in verdict.consumers["FastFlowLM"].why)
    assert verdict.fix is not None
    assert verdict.fix.startswith("restore the link the driver loads: ln -sf npu.sbin.1.0.0.166")
    assert verdict.recipes["xdna-2.21.75"].ok is False
    assert not verdict.ok


def test_zimaos_6_18_with_1_0_0_166_is_accepted_but_fastflowlm_is_not_ready() -> None:
    verdict = judge(ZIMA % "1.0.0.166")
    assert (verdict.firmware.version, verdict.firmware.accepted) == ("1.0.0.166", True)
    flm = verdict.consumers["FastFlowLM"]
    assert flm.ok is False
    assert any("firmware 1.0.0.166 < 1.1.0.0" in w for w in flm.why)
    assert any("DRM driver version 0.1 < 0.6" in w for w in flm.why)
    assert verdict.recipes["xdna-2.21.75"].ok is True


def test_ubuntu_26_04_7_0_loads_npu_7_and_only_ubuntu26_compat_fits() -> None:
    verdict = judge(UBUNTU)
    fw = verdict.firmware
    assert fw.loads == "amdnpu/17f0_10/npu_7.sbin.zst"
    assert (fw.version, fw.accepted) == ("1.1.2.64", True)
    assert verdict.recipes["ubuntu26-compat"].ok is True
    main = verdict.recipes["upstream-main"]
    assert main.ok is False
    assert any("rejects those over 32768" in w for w in main.why)
    assert verdict.ok
    # the proven source build first; the archive's stack (an unverified cell) fits too
    assert verdict.fix == (
        "build the userspace that fits: doit build --target ubuntu26-compat "
        "(also fits: ubuntu26-archive)"
    )


def test_updates_directory_and_plain_names_come_before_compressed_ones() -> None:
    order = resolver.search_order(["npu_7.sbin", "npu.sbin"], "17f0_10", UPSTREAM)
    assert order[:3] == [
        "updates/amdnpu/17f0_10/npu_7.sbin",
        "amdnpu/17f0_10/npu_7.sbin",
        "updates/amdnpu/17f0_10/npu_7.sbin.zst",
    ]
    assert order.index("amdnpu/17f0_10/npu_7.sbin.xz") < order.index("amdnpu/17f0_10/npu.sbin")


def test_an_updates_copy_wins_over_the_distribution_blob() -> None:
    text = UBUNTU + '  - {path: updates/amdnpu/17f0_10/npu_7.sbin, version: "1.0.0.63"}\n'
    assert judge(text).firmware.loads == "updates/amdnpu/17f0_10/npu_7.sbin"


def test_missing_firmware_is_a_rejection_with_what_was_tried() -> None:
    text = UBUNTU.split("firmware:")[0] + "firmware:\n  - {path: amdnpu/1502_00/npu.sbin}\n"
    fw = judge(text).firmware
    assert fw.loads is None
    assert fw.accepted is False
    assert "request_firmware -2" in fw.why[-1]


def test_unknown_facts_stay_unknown() -> None:
    verdict = judge('npu: {pci: "1022:17f0", revision: "0x11"}\n')
    assert verdict.firmware.accepted is None
    assert verdict.consumers["FastFlowLM"].ok is None
    unknown_drm = ZIMA.replace('drm_version: "0.1"', 'drm_version: "0.9"') % "1.1.2.65"
    assert judge(unknown_drm).firmware.accepted is None


def test_a_kernel_release_alone_is_named_but_not_judged() -> None:
    text = (ZIMA % "1.1.2.65").replace(', drm_version: "0.1"', "")
    verdict = judge(text)
    assert verdict.firmware.driver is None
    assert verdict.firmware.accepted is None
    assert "would carry in-tree-0.1, but vendor kernels backport" in verdict.firmware.why[0]
    assert "fix: none known" in render.format_verdict(verdict)


def test_without_an_npu_no_recipe_is_judged() -> None:
    verdict = judge('kernel: "6.18.9"\ndriver: {drm_version: "0.1"}\n')
    assert {f.ok for f in verdict.recipes.values()} == {None}


def test_dkms_driver_uses_the_out_of_tree_rule_and_file_name() -> None:
    text = (
        'kernel: "6.18.9"\nnpu: {pci: "1022:17f0", revision: "0x11"}\n'
        'driver: {source: dkms, version: "2.21.75"}\nfirmware:\n'
        '  - {path: amdnpu/17f0_11/npu.dev.sbin, version: "1.1.2.65"}\n'
    )
    fw = judge(text).firmware
    assert fw.loads == "amdnpu/17f0_11/npu.dev.sbin"
    assert fw.accepted is True  # out-of-tree: combined version >= 6.12


def test_a_device_the_driver_does_not_bind_is_not_accepted() -> None:
    text = (ZIMA % "1.1.2.65").replace(
        '"1022:17f0", revision: "0x11"', '"1022:17f2", revision: "0x10"'
    )
    assert judge(text).firmware.accepted is False


def test_a_facts_file_with_wrong_types_names_file_line_and_column() -> None:
    with pytest.raises(ConfigError) as raised:
        judge('kernel: 6.18\nnpu: {pci: "1022:17f0", revision: "0x11"}\ndriver: {source: vendor}\n')
    text = str(raised.value)
    assert "facts.yaml:1:1: kernel: expected a string, got float 6.18" in text
    assert "facts.yaml:3:10: driver.source: 'vendor' is not one of in-tree, dkms" in text


def test_a_record_feeds_back_as_facts() -> None:
    verdict = judge(ZIMA % "1.1.2.65")
    record = json.dumps(verdict.as_record())
    again = facts.parse_facts(yamlfile.parse(record, "compat.json"))
    assert again.as_record() == verdict.facts.as_record()
    assert "accepted: NO" in render.format_verdict(verdict)


def _blob(path: Path, version: str, *, xz: bool = False) -> None:
    payload = b"\x00" * 64 + f"Release {version}\x00".encode() + b"\xff" * 64
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(lzma.compress(payload) if xz else payload)


def test_a_fake_sysroot_is_read_with_links_updates_compressed_blobs_and_dkms(
    tmp_path: Path,
) -> None:
    root = tmp_path
    (root / "etc").mkdir()
    (root / "etc/os-release").write_text("ID=zimaos\nVERSION_ID=1.7\n")
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "proc/sys/kernel/osrelease").write_text("6.18.9\n")
    (root / "proc/cmdline").write_text("quiet amd_iommu=off\n")
    device = root / "sys/bus/pci/devices/0000:c7:00.1"
    device.mkdir(parents=True)
    for name, value in (
        ("vendor", "0x1022"),
        ("device", "0x17f0"),
        ("revision", "0x11"),
        ("class", "0x118000"),
    ):
        (device / name).write_text(value + "\n")
    (root / "sys/bus/pci/drivers/amdxdna").mkdir(parents=True)
    (device / "driver").symlink_to("../../../bus/pci/drivers/amdxdna")
    fw = root / "lib/firmware/amdnpu/17f0_11"
    _blob(fw / "npu.sbin.1.1.2.65", "1.1.2.65")
    _blob(fw / "npu.sbin.1.0.0.166.xz", "1.0.0.166", xz=True)
    (fw / "npu.sbin").symlink_to("npu.sbin.1.1.2.65")
    _blob(root / "lib/firmware/updates/amdnpu/17f0_11/npu.dev.sbin", "1.1.2.65")
    module = root / "lib/modules/6.18.9/updates/dkms/amdxdna.ko.zst"
    module.parent.mkdir(parents=True)
    module.write_bytes(b"")
    (root / "sys/module/amdxdna").mkdir(parents=True)
    (root / "sys/module/amdxdna/version").write_text("2.21.75\n")
    host = observe.observe(root, kernel_log="[drm] Initialized amdxdna_accel_driver 1.0.0 for x")
    assert (host.pci, host.revision, host.kernel) == ("1022:17f0", "0x11", "6.18.9")
    assert (host.driver_source, host.driver_version, host.drm_version) == (
        "dkms",
        "2.21.75",
        "1.0.0",
    )
    by_path = {f.path: f for f in host.firmware}
    assert by_path["amdnpu/17f0_11/npu.sbin"].target == "npu.sbin.1.1.2.65"
    assert by_path["amdnpu/17f0_11/npu.sbin"].version == "1.1.2.65"
    assert by_path["amdnpu/17f0_11/npu.sbin.1.0.0.166.xz"].version == "1.0.0.166"
    verdict = resolver.resolve(host, UPSTREAM, RECIPES)
    assert verdict.firmware.loads == "updates/amdnpu/17f0_11/npu.dev.sbin"
    assert verdict.firmware.accepted is True
    assert any("IOMMU off" in note for note in verdict.notes)


def test_a_blob_without_a_release_string_is_named_by_its_file(tmp_path: Path) -> None:
    (tmp_path / "npu.sbin.1.0.0.63.zst").write_bytes(b"(zstd)")
    assert observe.blob_version(tmp_path / "npu.sbin.1.0.0.63.zst") == ("1.0.0.63", "file name")
    (tmp_path / "npu.sbin").write_bytes(b"no version here")
    assert observe.blob_version(tmp_path / "npu.sbin") == (None, "unknown")


def test_what_if_the_zimaos_machine_ran_7_0_it_would_load_npu_7_and_be_ready() -> None:
    text = (ZIMA % "1.0.0.166").replace('"6.18.9"', '"7.0.0"').replace('"0.1"', '"0.7.0"')
    verdict = judge(text)
    assert verdict.firmware.loads == "amdnpu/17f0_11/npu_7.sbin"
    assert (verdict.firmware.version, verdict.firmware.accepted) == ("1.1.2.65", True)
    assert verdict.consumers["FastFlowLM"].ok is True


def test_without_an_accepted_blob_on_disk_the_fix_is_the_version_to_install() -> None:
    text = "\n".join(line for line in (ZIMA % "1.1.2.65").splitlines() if "1.0.0.166" not in line)
    fix = judge(text + "\n").fix
    assert fix is not None
    assert fix.startswith("install firmware 1.0.0.166 for 17f0_11")


def test_npu4_on_6_18_looks_in_its_own_directory() -> None:
    text = (ZIMA % "1.1.2.65").replace('revision: "0x11"', 'revision: "0x10"')
    fw = judge(text).firmware
    assert fw.tried[0] == "updates/amdnpu/17f0_10/npu.sbin"
    assert fw.loads is None
    assert fw.accepted is False


FIXTURES = REPO / "tests/fixtures/compat"


def field(case: str) -> resolver.Verdict:
    path = next(FIXTURES.glob(f"{case}-*.yaml"))
    return resolver.resolve(facts.load_facts(path), UPSTREAM, RECIPES)


def test_field_006_protocol_7_3_on_6_19_is_rejected_with_a_firmware_fix() -> None:
    verdict = field("006")
    assert verdict.firmware.accepted is False
    assert verdict.firmware.protocol == "7.3"
    assert verdict.fix is not None
    assert verdict.fix.startswith("install firmware 1.0.0.166 for 17f0_11")


def test_field_016_healthy_flm_validate_is_ready() -> None:
    verdict = field("016")
    assert verdict.consumers["FastFlowLM"].ok is True
    # no firmware files were shown, but 1.1.2.64 runs: that is the acceptance, observed
    assert verdict.firmware.accepted is True
    assert any("1.1.2.64 is running (observed)" in why for why in verdict.firmware.why)


def test_field_039_6_19_loads_npu_sbin_and_fastflowlm_wants_1_1() -> None:
    verdict = field("039")
    fw = verdict.firmware
    # 6.19 asks for npu.sbin only: the protocol-7 npu_7.sbin beside it is never loaded
    assert (fw.loads, fw.version, fw.accepted) == ("amdnpu/17f0_10/npu.sbin.zst", "1.0.0.63", True)
    flm = verdict.consumers["FastFlowLM"]
    assert flm.ok is False
    assert flm.why == ("firmware 1.0.0.63 < 1.1.0.0",)


def test_a_6_19_to_7_0_upgrade_switches_to_npu_7() -> None:
    host = facts.load_facts(next(FIXTURES.glob("039-*.yaml")))
    line = resolver.after_kernel(host, "7.0.0-27-generic", UPSTREAM)
    assert line == (
        "compat: kernel 7.0.0-27-generic (in-tree-0.6-7.0, by release) would load "
        "amdnpu/17f0_10/npu_7.sbin.zst (1.1.2.64, protocol 7.2) "
        "(today: amdnpu/17f0_10/npu.sbin.zst): accepted"
    )


def test_an_empty_firmware_list_is_absence_a_missing_one_is_unknown() -> None:
    base = 'kernel: "6.18.9"\nnpu: {pci: "1022:17f0", revision: "0x11"}\n'
    base += 'driver: {source: in-tree, drm_version: "0.1"}\n'
    assert judge(base).firmware.accepted is None
    assert judge(base + "firmware: []\n").firmware.accepted is False
    # and the record keeps the difference when fed back
    unknown = judge(base)
    assert "firmware" not in unknown.facts.as_record()


def test_drm_0_6_is_6_19_or_mainline_7_0_and_the_release_decides() -> None:
    on_619 = field("039")
    assert on_619.firmware.driver == "in-tree-0.6"
    text = UBUNTU.replace('"0.7.0"', '"0.6.0"').replace("7.0.0-27-generic", "7.0.9-200.fc44")
    assert judge(text).firmware.driver == "in-tree-0.6-7.0"
    assert judge(text).firmware.loads == "amdnpu/17f0_10/npu_7.sbin.zst"
    # a vendor 6.17 kernel with backports reporting 0.6: neither, so not judged
    oem = judge(text.replace("7.0.9-200.fc44", "6.17.0-1025-oem"))
    assert oem.firmware.driver is None
    assert "does not say which" in oem.firmware.why[0]


def test_a_contract_that_states_nothing_says_why_each_field_is_unknown() -> None:
    verdict = judge(UBUNTU)
    finding = verdict.recipes["xdna-1.8"]
    assert finding.ok is None
    assert finding.why[0].startswith("drm_version not known: carried from upstream-main")
    assert len(finding.why) == 4


NPU3 = """\
kernel: "7.1.3"
distro: {id: debian, version: "14"}
npu: {pci: "1022:17f2", revision: "0x10"}
driver: {source: in-tree, drm_version: "0.8.0"}
running_firmware: "2.14.0.114"
"""


def test_a_working_host_no_recipe_lists_is_ok_with_a_note() -> None:
    verdict = judge(NPU3)
    assert verdict.firmware.accepted is True  # observed: it runs
    assert not any(f.ok for f in verdict.recipes.values())
    assert verdict.unlisted
    assert verdict.ok
    assert "no recipe lists NPU 1022:17f2 rev 0x10" in verdict.notes[-1]
    text = render.format_verdict(verdict)
    assert "the facts said as unknown above decide it" not in text
    assert "fix: nothing to change (the host works as it is" in text


def test_a_missing_firmware_file_gets_the_package_that_provides_it() -> None:
    text = (
        'kernel: "6.18.9"\ndistro: {id: debian, version: "14"}\n'
        'npu: {pci: "1022:17f0", revision: "0x11"}\n'
        'driver: {source: in-tree, drm_version: "0.1"}\nfirmware: []\n'
    )
    verdict = judge(text)
    assert verdict.firmware.accepted is False
    assert verdict.fix is not None
    assert verdict.fix.startswith(
        "install the firmware package that provides /lib/firmware/amdnpu/17f0_11/"
    )
    assert "firmware-amd-graphics on debian" in verdict.fix


UBUNTU_2510 = """\
kernel: "6.17.0-5-generic"
distro: {id: ubuntu, version: "25.10"}
npu: {pci: "1022:17f0", revision: "0x10"}
driver: {source: in-tree, drm_version: "0.0.0"}
firmware:
  - {path: amdnpu/17f0_10/npu.sbin.zst, target: npu.sbin.1.0.0.63.zst, version: "1.0.0.63"}
userspace: {libxrt2: "2.19.0", plugin: false}
"""


def test_plugin_less_userspace_is_the_problem_and_its_replacement_the_fix() -> None:
    verdict = judge(UBUNTU_2510)
    assert verdict.firmware.driver == "in-tree-0.0"
    assert verdict.firmware.accepted is True
    assert verdict.userspace.ok is False
    assert not verdict.ok
    assert verdict.fix is not None
    assert verdict.fix.startswith("replace the installed userspace (libxrt2 2.19.0 has no")
    # 25.10's archive has no plugin package (26.04's libxrt-npu2 is the first): a recipe
    # for Ubuntu is the replacement
    assert "libxrt-npu2" not in verdict.fix
    assert verdict.fix.endswith("doit build --target ryzen-ai-ubuntu24")
    on_2604 = judge(UBUNTU_2510.replace('version: "25.10"', 'version: "26.04"'))
    assert on_2604.fix is not None
    assert "the distribution's libxrt-npu2 from ubuntu 26.04 on" in on_2604.fix
    assert "userspace: NO" in render.format_verdict(verdict)
    record = verdict.as_record()
    assert record["userspace"]["plugin"] is False
    # the record is a facts file again
    again = facts.parse_facts(yamlfile.parse(json.dumps(record), "compat.json"))
    assert again.plugin is False
    assert again.userspace == {"libxrt2": "2.19.0"}


def test_a_facts_file_plugin_must_be_a_boolean() -> None:
    with pytest.raises(ConfigError, match=r"userspace\.plugin: expected true or false"):
        judge(UBUNTU_2510.replace("plugin: false", 'plugin: "no"'))


def test_compat_json_has_the_documented_shape_and_version() -> None:
    record = judge(UBUNTU_2510).as_record()
    assert record["schema"] == resolver.RECORD_SCHEMA == 1
    documented = (REPO / "docs/compat.md").read_text()
    assert f"compat.json schema {resolver.RECORD_SCHEMA}" in documented
    # every top-level key, every firmware, consumer and userspace key is in the contract
    keys = (
        set(record)
        | set(record["firmware"])
        | set(record["consumers"]["FastFlowLM"])
        | set(record["userspace"])
        | {k for r in record["recipes"].values() for k in r}
    )
    missing = sorted(k for k in keys if f"`{k}`" not in documented)
    assert missing == []


def test_field_007_the_smu_power_off_check_is_the_reason_and_the_link_the_fix() -> None:
    verdict = field("007")
    fw = verdict.firmware
    assert fw.accepted is False
    assert "SMU power-off check" in fw.why[-1]
    assert not any(" rejects protocol " in why for why in fw.why)
    assert verdict.fix is not None
    assert verdict.fix.startswith("restore the link the driver loads: ln -sf npu.sbin.1.0.0.63")


def test_field_010_flm_on_krackan_is_no_by_its_known_failure() -> None:
    verdict = field("010")
    assert verdict.firmware.accepted is True
    flm = verdict.consumers["FastFlowLM"]
    assert flm.ok is False
    assert any("ROCm/FastFlowLM issue 655" in why for why in flm.why)
    assert "known failures on this NPU" in flm.checked
