"""Host facts (os-release, kernel release, NPU PCI functions and their driver, whether this runs
in a container), read from files.

Every path is under a configurable sysroot so tests can build a fake one; this module starts
no process (the kernel release comes from /proc/sys/kernel/osrelease, which is `uname -r`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

AMD_VENDOR = "1022"


@dataclass(frozen=True, slots=True, kw_only=True)
class NpuGeneration:
    """What the driver makes of one PCI device id and revision."""

    device: str  # 17f0
    revision: str  # 0x10
    generation: str  # npu4
    name: str  # the driver's default_vbnv: "NPU Strix"
    firmware_dir: str  # under /lib/firmware/amdnpu/: the directory it loads from

    @property
    def pci(self) -> str:
        return f"{AMD_VENDOR}:{self.device}"


def _npu(
    device: str, revision: str, generation: str, name: str, firmware: str = ""
) -> NpuGeneration:
    own = f"{device}_{revision.removeprefix('0x')}"
    return NpuGeneration(
        device=device,
        revision=revision,
        generation=generation,
        name=name,
        firmware_dir=firmware or own,
    )


# Every (device, revision) amd/xdna-driver binds: the amdxdna_ids table of
# src/driver/amdxdna/amdxdna_pci_drv.c (identical on branches 1.8, 1.9 and main, snapshot of
# 2026-08-21, main 856409ca), names from each npu*_regs.c `default_vbnv`. The AIE2 devices
# load a fixed `fw_path` (npu6 shares npu4's priv: 17f0_20 loads amdnpu/17f0_10/); the AIE4
# ones (npu3 family, aie4_pci.c) load amdnpu/<device>_<revision>/. `-pf` entries are the
# physical functions (17f2, 1b0b) of the same generation. 1.7 bound 1502, 17f0 rev 0/0x10/
# 0x11/0x20, 1569, 1640, 17f1/17f3 rev 0x10 and 1b0a/1b0c; 1.6 had no 1b0a-1b0c.
# tools/info.json (1.8) and tools/WHENCE (1.9) also ship firmware for 17f1_15/17f2_15
# ("npu11" in info.json), which no branch's driver table binds yet: not listed here.
NPU_GENERATIONS: tuple[NpuGeneration, ...] = (
    _npu("1502", "0x00", "npu1", "NPU Phoenix"),
    _npu("17f0", "0x10", "npu4", "NPU Strix"),
    _npu("17f0", "0x11", "npu5", "NPU Strix Halo"),
    _npu("17f0", "0x20", "npu6", "NPU Krackan", firmware="17f0_10"),
    _npu("17f1", "0x10", "npu3", "RyzenAI-npu3"),
    _npu("17f2", "0x10", "npu3", "RyzenAI-npu3-pf"),
    _npu("17f3", "0x10", "npu3", "RyzenAI-npu3"),
    _npu("17f1", "0x11", "npu7", "RyzenAI-npu7"),
    _npu("17f2", "0x11", "npu7", "RyzenAI-npu7-pf"),
    _npu("17f3", "0x11", "npu7", "RyzenAI-npu7"),
    _npu("17f1", "0x12", "npu8", "RyzenAI-npu8"),
    _npu("17f2", "0x12", "npu8", "RyzenAI-npu8-pf"),
    _npu("17f3", "0x12", "npu8", "RyzenAI-npu8"),
    _npu("17f1", "0x13", "npu9", "RyzenAI-npu9"),
    _npu("17f2", "0x13", "npu9", "RyzenAI-npu9-pf"),
    _npu("17f3", "0x13", "npu9", "RyzenAI-npu9"),
    _npu("17f1", "0x14", "npu10", "RyzenAI-npu10"),
    _npu("17f2", "0x14", "npu10", "RyzenAI-npu10-pf"),
    _npu("17f3", "0x14", "npu10", "RyzenAI-npu10"),
    _npu("1b0a", "0x00", "npu3", "RyzenAI-npu3"),
    _npu("1b0b", "0x00", "npu3", "RyzenAI-npu3-pf"),
    _npu("1b0c", "0x00", "npu3", "RyzenAI-npu3"),
)
# AMD NPU PCI device ids: every device above, and 17f0 revision 0 / 1569 / 1640, which
# xdna-driver 1.6 and 1.7 still bound (npu2 and early npu3 silicon)
NPU_DEVICE_IDS = frozenset({n.device for n in NPU_GENERATIONS} | {"1569", "1640"})


def _revision_key(revision: str) -> int:
    return int(revision, 16)


def npu_generation(device: str, revision: str | None) -> NpuGeneration | None:
    """The generation the current driver gives a PCI device id and revision, if it binds it."""
    wanted = device.lower().removeprefix(f"{AMD_VENDOR}:")
    if revision is None:
        return None
    try:
        number = _revision_key(revision)
    except ValueError:
        return None
    return next(
        (n for n in NPU_GENERATIONS if n.device == wanted and _revision_key(n.revision) == number),
        None,
    )


# PCI class 0x1180xx: "processing accelerator"; the NPU function reports it.
ACCELERATOR_CLASS_PREFIX = "0x1180"


@dataclass(frozen=True, slots=True, kw_only=True)
class PciFunction:
    slot: str  # 0000:c5:00.1
    vendor: str  # 1022
    device: str  # 17f0
    revision: str  # 0x10
    driver: str | None  # amdxdna, or None when unbound

    @property
    def pci(self) -> str:
        return f"{self.vendor}:{self.device}"

    @property
    def generation(self) -> NpuGeneration | None:
        """What the current driver makes of this function (None: it binds no such one)."""
        return npu_generation(self.device, self.revision) if self.vendor == AMD_VENDOR else None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerFacts:
    """This process runs in a container: which engine, and the files that say so."""

    engine: str  # podman, docker, lxc, kubernetes, or "unknown"
    evidence: tuple[str, ...]
    name: str | None = None
    image: str | None = None

    def as_record(self) -> dict[str, object]:
        return {
            "engine": self.engine,
            "name": self.name,
            "image": self.image,
            "evidence": list(self.evidence),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class HostFacts:
    sysroot: str
    distro_id: str | None
    distro_version: str | None
    distro_name: str | None
    kernel: str | None
    npus: tuple[PciFunction, ...]
    container: ContainerFacts | None = None

    def describe(self) -> str:
        distro = f"{self.distro_id or '?'} {self.distro_version or '?'}"
        npus = ", ".join(
            f"{n.pci} rev {n.revision} at {n.slot} (driver: {n.driver or 'none'})"
            for n in self.npus
        )
        inside = f"; inside a {self.container.engine} container" if self.container else ""
        return f"{distro}, kernel {self.kernel or '?'}, NPU: {npus or 'none found'}{inside}"


def parse_os_release(text: str) -> dict[str, str]:
    """os-release(5): KEY=value lines, values shell-quoted."""
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, raw = line.partition("=")
        try:
            parts = shlex.split(raw)
        except ValueError:
            parts = [raw.strip("\"'")]
        values[key.strip()] = parts[0] if parts else ""
    return values


def read_text(path: Path) -> str | None:
    """A small system file's text, None when it cannot be read."""
    return _read(path)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _hex_id(text: str | None) -> str:
    return (text or "").lower().removeprefix("0x").rjust(4, "0")


def read_pci_npus(sysroot: Path) -> tuple[PciFunction, ...]:
    devices = sysroot / "sys/bus/pci/devices"
    found = []
    if not devices.is_dir():
        return ()
    for entry in sorted(devices.iterdir()):
        vendor = _hex_id(_read(entry / "vendor"))
        device = _hex_id(_read(entry / "device"))
        pci_class = (_read(entry / "class") or "").lower()
        if vendor != AMD_VENDOR:
            continue
        if device not in NPU_DEVICE_IDS and not pci_class.startswith(ACCELERATOR_CLASS_PREFIX):
            continue
        revision = (_read(entry / "revision") or "0x00").lower()
        driver_link = entry / "driver"
        driver = None
        if driver_link.is_symlink() or driver_link.exists():
            # the driver link points at /sys/bus/pci/drivers/<name>; only its name matters
            driver = Path(
                str(driver_link.readlink()) if driver_link.is_symlink() else driver_link
            ).name
        found.append(
            PciFunction(
                slot=entry.name, vendor=vendor, device=device, revision=revision, driver=driver
            )
        )
    return tuple(found)


# cgroup paths that container engines give their containers (cgroup v1, and v2 hosts that
# show the host's hierarchy); a v2 namespace shows only "0::/", so the files above matter more
_CGROUP_MARKERS = (
    ("/libpod-", "podman"),
    ("/docker/", "docker"),
    ("/docker-", "docker"),
    ("/kubepods", "kubernetes"),
    ("/lxc/", "lxc"),
)


def read_container(sysroot: Path) -> ContainerFacts | None:
    """Whether this process runs in a container, from the marks engines leave in it."""
    engine, evidence = None, []
    podman = _read(sysroot / "run/.containerenv")
    values = parse_os_release(podman or "")
    if podman is not None:
        engine = "podman"
        evidence.append(f"/run/.containerenv ({values.get('engine', 'present')})")
    if (sysroot / ".dockerenv").exists():
        engine = engine or "docker"
        evidence.append("/.dockerenv")
    # systemd's convention: the engine sets `container=` in PID 1's environment
    environ = (_read(sysroot / "proc/1/environ") or "").split("\0")
    named = next((v.partition("=")[2] for v in environ if v.startswith("container=")), None)
    if named:
        engine = engine or ("podman" if named == "oci" else named)
        evidence.append(f"/proc/1/environ: container={named}")
    for line in (_read(sysroot / "proc/1/cgroup") or "").splitlines():
        marker = next((m for m in _CGROUP_MARKERS if m[0] in line), None)
        if marker:
            engine = engine or marker[1]
            evidence.append(f"/proc/1/cgroup: {line.strip()}")
            break
    if not evidence:
        return None
    return ContainerFacts(
        engine=engine or "unknown",
        evidence=tuple(evidence),
        name=values.get("name") or None,
        image=values.get("image") or None,
    )


def read_host_facts(sysroot: Path) -> HostFacts:
    os_release = _read(sysroot / "etc/os-release") or _read(sysroot / "usr/lib/os-release") or ""
    values = parse_os_release(os_release)
    return HostFacts(
        sysroot=str(sysroot),
        distro_id=values.get("ID"),
        # Debian testing (forky) and sid have no VERSION_ID, only the codename
        distro_version=values.get("VERSION_ID") or values.get("VERSION_CODENAME"),
        distro_name=values.get("PRETTY_NAME"),
        kernel=_read(sysroot / "proc/sys/kernel/osrelease"),
        npus=read_pci_npus(sysroot),
        container=read_container(sysroot),
    )


def read_memory_available_kib(sysroot: Path) -> int | None:
    for line in (_read(sysroot / "proc/meminfo") or "").splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return None


def choose_jobs(cores: int, memory_available_kib: int | None, gib_per_job: float = 2.0) -> int:
    """Parallel compile jobs: XRT's compile units need up to ~2 GiB each, so memory can be
    the limit before cores are (a 2-core, 24 GiB machine: 2; 16 cores, 16 GiB: 8)."""
    if memory_available_kib is None:
        return max(1, cores)
    by_memory = int(memory_available_kib / (gib_per_job * 1024 * 1024))
    return max(1, min(cores, by_memory))
