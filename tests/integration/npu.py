"""Fake NPU hosts: a sysroot per scenario (os-release, kernel, PCI function and driver,
/dev/accel node, identity, memlock limit, installed XRT files) and the recordings the fake
tools replay (tests/fixtures/recordings/<scenario>/)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import REPO
from tests.fakes.fixture import FakeTools
from tests.unit.hardware.test_host_checks import LIMITS_8M, LIMITS_UNLIMITED

RECORDINGS = REPO / "tests/fixtures/recordings"
PYXRT = REPO / "tests/fixtures/pyxrt_fake/pyxrt.py"
RENDER_GID = 993


def npu_host(
    root: Path,
    *,
    revision: str = "0x10",
    driver: str | None = "amdxdna",
    accel: bool = True,
    accel_mode: int = 0o660,
    groups: tuple[int, ...] = (1000, RENDER_GID),
    memlock: str = LIMITS_UNLIMITED,
    plugin: bool = True,
    pyxrt: bool = True,
) -> Path:
    (root / "etc").mkdir(parents=True)
    (root / "etc/os-release").write_text(
        'ID=ubuntu\nVERSION_ID="26.04"\nPRETTY_NAME="Ubuntu 26.04 LTS"\n'
    )
    (root / "etc/group").write_text(f"render:x:{RENDER_GID}:me\nme:x:1000:\n")
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "proc/sys/kernel/osrelease").write_text("7.0.0-27-generic\n")
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/limits").write_text(memlock)
    (root / "proc/self/status").write_text(
        f"Name:\tdoit\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\n"
        f"Groups:\t{' '.join(str(g) for g in groups)}\n"
    )
    function = root / "sys/bus/pci/devices/0000:c5:00.1"
    function.mkdir(parents=True)
    for name, value in (
        ("vendor", "0x1022"),
        ("device", "0x17f0"),
        ("revision", revision),
        ("class", "0x118000"),
    ):
        (function / name).write_text(value + "\n")
    if driver:
        (root / "sys/bus/pci/drivers" / driver).mkdir(parents=True)
        (function / "driver").symlink_to(f"../../../bus/pci/drivers/{driver}")
    if accel:
        node = root / "dev/accel/accel0"
        node.parent.mkdir(parents=True)
        node.write_text("")
        node.chmod(accel_mode)
        shutil.chown(node, user=0, group=RENDER_GID)
    prefix = root / "opt/xilinx/xrt"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "lib/libxrt_coreutil.so.2").write_text("")
    if plugin:
        (prefix / "lib/libxrt_driver_xdna.so.2").write_text("")
    (prefix / "python").mkdir()
    if pyxrt:
        shutil.copy(PYXRT, prefix / "python/pyxrt.py")
    return root


def replay(fakes: FakeTools, *scenarios: str) -> None:
    """Copy the recordings of these scenarios into the fakes' scenario (later ones win)."""
    for name in scenarios:
        shutil.copytree(RECORDINGS / name, fakes.scenario, dirs_exist_ok=True)


def installed_xrt(fakes: FakeTools, version: str = "2.20.0", plugin: bool = True) -> None:
    packages = {"xrt-base": version, "xrt-npu": version}
    if plugin:
        packages["xrt_plugin-amdxdna"] = "2.20.1"
    fakes.installed(packages)


LIMITS = {"8mib": LIMITS_8M, "unlimited": LIMITS_UNLIMITED}
