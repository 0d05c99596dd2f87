"""Payloads the old rules did not look for, in packages built with dpkg-deb --build: the
real dpkg installs the module, runs the module tool or creates the device, and the audit
blocks each one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.debs import (
    TAR_END,
    Spec,
    build_deb,
    control_tar,
    hand_deb,
    module_bytes,
    tar_entry,
    tar_header,
)
from tests.integration.test_audit_parity import (
    CONTROL,
    dpkg_install,
    dpkg_root,
    module_tools_run,
    needs_root,
    write,
)
from xdnaforge.debs.debfile import read_deb
from xdnaforge.debs.rules import Verdict, audit, symlinks, wants_text

pytestmark = pytest.mark.tools("dpkg", "dpkg-deb")


def judged(deb: Path) -> Verdict:
    return audit(read_deb(deb, wants_text))


def blocks(deb: Path) -> set[str]:
    return {f.rule for f in judged(deb).findings if f.severity == "block"}


@needs_root
def test_a_module_under_another_name_is_installed_by_dpkg_and_blocked(tmp_path: Path) -> None:
    name = "opt/xilinx/xrt/share/amdxdna/bins/amdxdna.bin"
    deb = build_deb(tmp_path, Spec(package="renamed", files={name: module_bytes()}), "zstd")
    root = dpkg_root(tmp_path)
    assert dpkg_install(root, deb).returncode == 0
    assert (root / name).read_bytes() == module_bytes()
    assert blocks(deb) == {"KMOD-005"}


@needs_root
@pytest.mark.parametrize(
    "line",
    [
        "m=modprobe; $m amdxdna",
        "load() { modprobe amdxdna; }; load",
        "( modprobe amdxdna )",
        'case "$1" in configure) modprobe amdxdna ;; esac',
        "mod\\\nprobe amdxdna",
        "eval 'modprobe amdxdna'",
    ],
)
def test_scripts_that_passed_the_pattern_match_run_modprobe_and_are_blocked(
    tmp_path: Path, line: str
) -> None:
    script = f"#!/bin/sh\nset -e\n{line}\nexit 0\n"
    deb = build_deb(tmp_path, Spec(package="sly", scripts={"postinst": script}), "xz")
    root = dpkg_root(tmp_path)
    outcome = dpkg_install(root, deb)
    assert outcome.returncode == 0, outcome.stderr
    assert module_tools_run(root) == ["modprobe amdxdna"]
    assert "SCRIPT-004" in blocks(deb) or "SCRIPT-001" in blocks(deb)


@needs_root
def test_a_world_writable_device_node_is_created_by_dpkg_and_blocked(tmp_path: Path) -> None:
    data = (
        tar_entry("./", b"5")
        + tar_entry("./dev/", b"5")
        + tar_header("./dev/npu-mem", b"3", 0, mode=0o666)  # major 0, minor 0 as written
        + TAR_END
    )
    deb = write(tmp_path, "device.deb", hand_deb(control_tar(CONTROL), data))
    root = dpkg_root(tmp_path)
    assert dpkg_install(root, deb).returncode == 0
    node = root / "dev/npu-mem"
    assert node.is_char_device()
    assert node.stat().st_mode & 0o777 == 0o666
    assert blocks(deb) == {"DEV-001", "PATH-001"}  # dev/ is no place of the stack's either


@needs_root
def test_a_directory_symlink_in_one_package_puts_another_packages_file_in_lib_firmware(
    tmp_path: Path,
) -> None:
    links = Spec(package="npu-links", files={})
    tree = tmp_path / "links-tree"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN/control").write_text(links.control())
    (tree / "opt/xilinx/xrt").mkdir(parents=True)
    (tree / "opt/xilinx/xrt/npu").symlink_to("../../../lib/firmware")
    first = tmp_path / "links.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(tree), str(first)], check=True)
    second = build_deb(
        tmp_path,
        Spec(package="npu-data", files={"opt/xilinx/xrt/npu/amdnpu/npu.sbin": b"\0fw"}),
    )
    root = dpkg_root(tmp_path)
    (root / "lib/firmware").mkdir(parents=True)
    assert dpkg_install(root, first).returncode == 0
    assert dpkg_install(root, second).returncode == 0
    assert (root / "lib/firmware/amdnpu/npu.sbin").read_bytes() == b"\0fw"
    debs = [read_deb(first, wants_text), read_deb(second, wants_text)]
    together = audit(debs[1], links=symlinks(debs))
    # where it lands is a kernel tree, and outside the layout
    assert {f.rule for f in together.findings} == {"KMOD-006", "PATH-002"}
    assert audit(debs[1]).verdict == "pass"  # alone it is harmless: why --target judges all


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("usr/local/lib/modprobe.d/npu.conf", "install amdgpu /bin/sh -c 'modprobe amdxdna'\n"),
        ("usr/lib/systemd/system/npu.service", "[Service]\nExecStart=/sbin/modprobe amdxdna\n"),
        ("usr/lib/udev/rules.d/60-npu.rules", 'KERNEL=="accel*", MODE="0606"\n'),
        ("etc/apt/apt.conf.d/99npu", 'DPkg::Post-Invoke { "modprobe amdxdna"; };\n'),
        ("etc/kernel/postinst.d/npu", "#!/bin/sh\nmodprobe amdxdna\n"),
    ],
)
def test_loaders_shipped_as_data_are_blocked(tmp_path: Path, path: str, content: str) -> None:
    deb = build_deb(tmp_path, Spec(package="loader", files={path: content}), "gzip")
    assert judged(deb).verdict == "block"


def test_a_folded_recommends_on_dkms_blocks(tmp_path: Path) -> None:
    spec = Spec(package="recommends", depends="libc6")
    deb = build_deb(tmp_path, spec, "xz")
    tree = tmp_path / "tree"
    subprocess.run(["dpkg-deb", "-R", str(deb), str(tree)], check=True)
    control = tree / "DEBIAN/control"
    control.write_text(control.read_text() + "recommends: amdxdna-dkms\n")
    rebuilt = tmp_path / "rebuilt.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(tree), str(rebuilt)], check=True)
    fields = subprocess.run(
        ["dpkg-deb", "-f", str(rebuilt), "Recommends"], capture_output=True, text=True, check=True
    )
    assert fields.stdout.strip() == "amdxdna-dkms"
    assert blocks(rebuilt) == {"DEP-002"}
