"""Host facts from a fake sysroot (files only; no process is started)."""

from __future__ import annotations

from pathlib import Path

from xdnaforge.host import parse_os_release, read_host_facts

UBUNTU_26 = 'PRETTY_NAME="Ubuntu 26.04 LTS"\nNAME="Ubuntu"\nVERSION_ID="26.04"\nID=ubuntu\n'


def make_sysroot(root: Path, *, driver: str | None = "amdxdna", revision: str = "0x10") -> Path:
    (root / "etc").mkdir(parents=True)
    (root / "etc/os-release").write_text(UBUNTU_26)
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "proc/sys/kernel/osrelease").write_text("7.0.0-27-generic\n")
    npu = root / "sys/bus/pci/devices/0000:c5:00.1"
    npu.mkdir(parents=True)
    (npu / "vendor").write_text("0x1022\n")
    (npu / "device").write_text("0x17f0\n")
    (npu / "revision").write_text(f"{revision}\n")
    (npu / "class").write_text("0x118000\n")
    if driver:
        drivers = root / "sys/bus/pci/drivers" / driver
        drivers.mkdir(parents=True)
        (npu / "driver").symlink_to(f"../../../bus/pci/drivers/{driver}")
    gpu = root / "sys/bus/pci/devices/0000:c4:00.0"
    gpu.mkdir(parents=True)
    (gpu / "vendor").write_text("0x1002\n")
    (gpu / "device").write_text("0x150e\n")
    return root


def test_reads_distro_kernel_and_npu(tmp_path: Path) -> None:
    facts = read_host_facts(make_sysroot(tmp_path))
    assert (facts.distro_id, facts.distro_version) == ("ubuntu", "26.04")
    assert facts.kernel == "7.0.0-27-generic"
    assert len(facts.npus) == 1
    npu = facts.npus[0]
    assert (npu.slot, npu.pci, npu.revision, npu.driver) == (
        "0000:c5:00.1",
        "1022:17f0",
        "0x10",
        "amdxdna",
    )


def test_unbound_npu_has_no_driver(tmp_path: Path) -> None:
    facts = read_host_facts(make_sysroot(tmp_path, driver=None))
    assert facts.npus[0].driver is None
    assert "driver: none" in facts.describe()


def test_empty_sysroot_gives_unknowns(tmp_path: Path) -> None:
    facts = read_host_facts(tmp_path)
    assert facts.distro_id is None
    assert facts.kernel is None
    assert facts.npus == ()


def test_os_release_quoting() -> None:
    values = parse_os_release("# c\nID=zimaos\nVERSION_ID='1.7'\nNAME=\"Zima OS\"\nbroken\n")
    assert values == {"ID": "zimaos", "VERSION_ID": "1.7", "NAME": "Zima OS"}


def test_no_container_marks_means_a_host(tmp_path: Path) -> None:
    assert read_host_facts(make_sysroot(tmp_path)).container is None


def test_podman_is_recognised_from_its_containerenv(tmp_path: Path) -> None:
    root = make_sysroot(tmp_path)
    (root / "run").mkdir()
    (root / "run/.containerenv").write_text(
        'engine="podman-4.9.3"\nname="xdna-runtime"\nid="4f1c"\n'
        'image="localhost/xdnaforge-xdna-2.21.75:0123456789ab"\nrootless=1\n'
    )
    facts = read_host_facts(root)
    assert facts.container is not None
    assert facts.container.as_record() == {
        "engine": "podman",
        "name": "xdna-runtime",
        "image": "localhost/xdnaforge-xdna-2.21.75:0123456789ab",
        "evidence": ["/run/.containerenv (podman-4.9.3)"],
    }
    assert facts.describe().endswith("; inside a podman container")


def test_docker_is_recognised_from_dockerenv_and_pid1(tmp_path: Path) -> None:
    root = make_sysroot(tmp_path)
    (root / ".dockerenv").write_text("")
    (root / "proc/1").mkdir(parents=True)
    (root / "proc/1/environ").write_bytes(b"PATH=/usr/bin\0container=docker\0HOME=/root\0")
    (root / "proc/1/cgroup").write_text("12:memory:/docker/8d2f0c\n0::/\n")
    container = read_host_facts(root).container
    assert container is not None
    assert container.engine == "docker"
    assert container.evidence == (
        "/.dockerenv",
        "/proc/1/environ: container=docker",
        "/proc/1/cgroup: 12:memory:/docker/8d2f0c",
    )


def test_a_cgroup_alone_is_enough(tmp_path: Path) -> None:
    root = make_sysroot(tmp_path)
    (root / "proc/1").mkdir(parents=True)
    (root / "proc/1/cgroup").write_text("0::/machine.slice/libpod-3c1d.scope/container\n")
    container = read_host_facts(root).container
    assert container is not None
    assert container.engine == "podman"


def test_every_device_the_driver_binds_has_its_generation_and_firmware_directory() -> None:
    from xdnaforge.host import NPU_DEVICE_IDS, NPU_GENERATIONS, npu_generation

    krackan = npu_generation("17f0", "0x20")
    assert krackan is not None
    assert (krackan.generation, krackan.name, krackan.firmware_dir) == (
        "npu6",
        "NPU Krackan",
        "17f0_10",  # npu6 loads npu4's firmware
    )
    phoenix = npu_generation("1022:1502", "0x0")
    assert phoenix is not None
    assert (phoenix.generation, phoenix.firmware_dir) == ("npu1", "1502_00")
    for device in ("17f1", "17f2", "17f3"):
        assert [n.revision for n in NPU_GENERATIONS if n.device == device] == [
            "0x10",
            "0x11",
            "0x12",
            "0x13",
            "0x14",
        ]
    pf = npu_generation("17f2", "0x13")
    assert pf is not None
    assert (pf.generation, pf.name, pf.firmware_dir) == ("npu9", "RyzenAI-npu9-pf", "17f2_13")
    assert {"1b0a", "1b0b", "1b0c"} <= NPU_DEVICE_IDS
    assert npu_generation("17f1", "0x15") is None  # firmware exists, no driver binds it
    assert npu_generation("17f0", None) is None


def test_a_new_npu_function_is_found_and_named(tmp_path: Path) -> None:
    root = make_sysroot(tmp_path)
    npu = root / "sys/bus/pci/devices/0000:c5:00.1"
    (npu / "device").write_text("0x1b0c\n")
    (npu / "revision").write_text("0x00\n")
    (npu / "class").write_text("0x048000\n")  # not the accelerator class: found by its id
    facts = read_host_facts(root)
    assert [n.pci for n in facts.npus] == ["1022:1b0c"]
    generation = facts.npus[0].generation
    assert generation is not None
    assert generation.generation == "npu3"
