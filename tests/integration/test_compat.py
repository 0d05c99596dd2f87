"""doit compat: a facts file or a fake sysroot in, the verdict and its exit code out; doit check
holds the recipes' driver contracts against the resolver."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.conftest import run_doit

ZIMA = """\
kernel: "6.18.9"
npu: {pci: "1022:17f0", revision: "0x11"}
driver: {source: in-tree, drm_version: "0.1"}
firmware:
  - {path: amdnpu/17f0_11/npu.sbin, target: npu.sbin.1.1.2.65}
  - {path: amdnpu/17f0_11/npu.sbin.1.1.2.65, version: "1.1.2.65"}
  - {path: amdnpu/17f0_11/npu.sbin.1.0.0.166, version: "1.0.0.166"}
"""


def test_compat_on_a_facts_file_exits_1_with_the_fix_and_records_the_facts(
    project_dir: Path, tmp_path: Path
) -> None:
    facts = tmp_path / "zima.yaml"
    facts.write_text(ZIMA)
    out = tmp_path / "out.json"
    outcome = run_doit(project_dir, "compat", f"--facts={facts}", f"--json={out}")
    assert outcome.rc == 1, outcome.output
    assert "firmware: loads amdnpu/17f0_11/npu.sbin (1.1.2.65, protocol 7.2); accepted: NO" in (
        outcome.stdout
    )
    assert "fix: restore the link the driver loads: ln -sf npu.sbin.1.0.0.166" in outcome.stdout
    record = json.loads(out.read_text())
    assert record["firmware"]["accepted"] is False
    assert record["recipes"]["xdna-2.21.75"]["fits"] is False
    # the record is a facts file: fed back it gives the same verdict
    again = run_doit(project_dir, "compat", f"--facts={out}")
    assert again.rc == 1
    assert "accepted: NO" in again.stdout
    assert "Traceback" not in outcome.output + again.output


def test_compat_rejects_a_wrong_facts_file_with_exit_3(project_dir: Path, tmp_path: Path) -> None:
    facts = tmp_path / "bad.yaml"
    facts.write_text('kernel: "7.0"\nnpu: {pci: "1022:17f0", revision: 0x10}\n')
    outcome = run_doit(project_dir, "compat", f"--facts={facts}")
    assert outcome.rc == 3
    assert f"{facts}:2:25: npu.revision: expected a string, got int 16" in outcome.stderr


def test_compat_reads_a_fake_sysroot(project_dir: Path) -> None:
    root = project_dir / "sysroot"
    (root / "etc").mkdir(parents=True)
    (root / "etc/os-release").write_text("ID=ubuntu\nVERSION_ID=26.04\n")
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "proc/sys/kernel/osrelease").write_text("7.0.0-27-generic\n")
    device = root / "sys/bus/pci/devices/0000:c5:00.1"
    device.mkdir(parents=True)
    for name, value in (("vendor", "0x1022"), ("device", "0x17f0"), ("revision", "0x10")):
        (device / name).write_text(value + "\n")
    firmware = root / "lib/firmware/amdnpu/17f0_10"
    firmware.mkdir(parents=True)
    (firmware / "npu.sbin.1.1.2.64").write_bytes(b"\0" * 32 + b"Release 1.1.2.64\0")
    (firmware / "npu_7.sbin").symlink_to("npu.sbin.1.1.2.64")
    outcome = run_doit(project_dir, "compat", "--target=ubuntu26-compat")
    # no accel node to ask, no kernel log: the DRM version is unknown, so nothing is judged
    assert outcome.rc == 1, outcome.output
    assert "firmware: loads nothing; accepted: unknown" in outcome.stdout
    assert "needs DRM driver >= 0.7.0; the host's is unknown" in outcome.stdout
    # the kernel log a syslog daemon kept says which driver it is
    (root / "var/log").mkdir(parents=True)
    (root / "var/log/kern.log").write_text(
        "Dec  1 08:00:01 host kernel: [drm] Initialized amdxdna_accel_driver 0.7.0 for "
        "0000:c5:00.1 on minor 0\n"
    )
    outcome = run_doit(project_dir, "compat", "--target=ubuntu26-compat")
    assert outcome.rc == 0, outcome.output
    assert "firmware: loads amdnpu/17f0_10/npu_7.sbin (1.1.2.64, protocol 7.2); accepted: yes" in (
        outcome.stdout
    )
    assert "ubuntu26-compat: fits yes" in outcome.stdout


def test_check_rejects_a_contract_field_the_resolver_cannot_read(project_dir: Path) -> None:
    recipe = project_dir / "recipes/ubuntu26-compat.yaml"
    recipe.write_text(recipe.read_text().replace('drm_version: "0.7.0"', 'drm_version: "0.7-x"'))
    outcome = run_doit(project_dir, "check")
    assert outcome.rc == 3, outcome.output
    assert (
        "recipes/ubuntu26-compat.yaml:21:3: driver.drm_version: '0.7-x' is not a DRM driver "
        "version like 0.7.0"
    ) in outcome.stderr


def plugin_less_sysroot(project_dir: Path) -> Path:
    """Ubuntu 25.10 on a 6.17 kernel (DRM 0.0), npu4 with protocol-6 firmware, and the
    distribution's libxrt2 2.19 without the amdxdna plugin."""
    root = project_dir / "sysroot"
    (root / "etc").mkdir(parents=True)
    (root / "etc/os-release").write_text("ID=ubuntu\nVERSION_ID=25.10\n")
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "proc/sys/kernel/osrelease").write_text("6.17.0-5-generic\n")
    device = root / "sys/bus/pci/devices/0000:c5:00.1"
    device.mkdir(parents=True)
    for name, value in (("vendor", "0x1022"), ("device", "0x17f0"), ("revision", "0x10")):
        (device / name).write_text(value + "\n")
    firmware = root / "lib/firmware/amdnpu/17f0_10"
    firmware.mkdir(parents=True)
    (firmware / "npu.sbin.1.0.0.63").write_bytes(b"\0" * 32 + b"Release 1.0.0.63\0")
    (firmware / "npu.sbin").symlink_to("npu.sbin.1.0.0.63")
    (root / "var/log").mkdir(parents=True)
    (root / "var/log/kern.log").write_text(
        "kernel: [drm] Initialized amdxdna_accel_driver 0.0.0 for 0000:c5:00.1 on minor 0\n"
    )
    lib = root / "usr/lib/x86_64-linux-gnu"
    lib.mkdir(parents=True)
    (lib / "libxrt_coreutil.so.2").write_bytes(b"")
    (root / "var/lib/dpkg").mkdir(parents=True)
    (root / "var/lib/dpkg/status").write_text(
        "Package: libxrt2\nStatus: install ok installed\nVersion: 2.19.0-1\n\n"
    )
    return root


def test_plugin_less_userspace_is_said_by_compat_and_by_live_doctor(project_dir: Path) -> None:
    plugin_less_sysroot(project_dir)
    outcome = run_doit(project_dir, "compat")
    assert outcome.rc == 1, outcome.output
    assert "driver: in-tree-0.0" in outcome.stdout
    assert "accepted: yes" in outcome.stdout
    assert "userspace: NO (the installed XRT (libxrt2 2.19.0-1) has no amdxdna plugin" in (
        outcome.stdout
    )
    assert "fix: replace the installed userspace (libxrt2 2.19.0-1 has no" in outcome.stdout
    doctor = run_doit(project_dir, "doctor")
    assert "userspace: NO (the installed XRT (libxrt2 2.19.0-1) has no amdxdna plugin" in (
        doctor.stdout
    ), doctor.output
    assert "Traceback" not in outcome.output + doctor.output


def test_a_working_host_no_recipe_lists_exits_0_with_a_note(
    project_dir: Path, tmp_path: Path
) -> None:
    facts = tmp_path / "npu3.yaml"
    facts.write_text(
        'kernel: "7.1.3"\nnpu: {pci: "1022:17f2", revision: "0x10"}\n'
        'driver: {source: in-tree, drm_version: "0.8.0"}\nrunning_firmware: "2.14.0.114"\n'
    )
    outcome = run_doit(project_dir, "compat", f"--facts={facts}")
    assert outcome.rc == 0, outcome.output
    assert "note: no recipe lists NPU 1022:17f2 rev 0x10" in outcome.stdout
