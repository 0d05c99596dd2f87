"""A host's compatibility facts, read from files under a sysroot (a thin reader: no process).

The NPU (sysfs, through host.py), which amdxdna is loaded and from where (/sys/module, the
module file under lib/modules), its DRM driver version (DRM_IOCTL_VERSION on the accel node,
else the kernel log's `Initialized amdxdna_accel_driver X.Y.Z`: the log handed in, or
var/log/kern.log / var/log/dmesg), the firmware files under
lib/firmware/{updates/,}amdnpu/ with their links and the `Release x.y.z.w` inside each blob
(.xz read with lzma; .zst by name only), the running firmware (sysfs fw_version),
/proc/cmdline, the installed XRT packages (dpkg's status file), whether the amdxdna plugin
(libxrt_driver_xdna.so*) is in a library directory, and the kernel log's amdxdna lines.
"""

from __future__ import annotations

import fcntl
import lzma
import re
import struct
from pathlib import Path

from xdnaforge import host as host_facts
from xdnaforge.compat.evidence import relevant_lines
from xdnaforge.compat.facts import FirmwareFile, HostCompat

_RELEASE_RE = re.compile(rb"Release (\d+\.\d+\.\d+\.\d+)")
_NAME_VERSION_RE = re.compile(r"npu[\w]*\.sbin\.(\d+\.\d+\.\d+\.\d+)")
_INITIALIZED_RE = re.compile(r"Initialized amdxdna_accel_driver (\d+\.\d+\.\d+)")
# DRM_IOCTL_VERSION = _IOWR('d', 0x00, struct drm_version) with a 64-byte struct on LP64
_DRM_IOCTL_VERSION = 0xC0406400
_BLOB_HEAD = 1 << 20  # the Release string sits in the first KiBs of the blob
_LOG_TAIL = 4 << 20  # the last boot's lines are at the end of a long kern.log
_MODULE_PLACES = (
    ("updates/dkms/amdxdna.ko*", "dkms"),
    ("updates/amdxdna.ko*", "dkms"),
    ("extra/amdxdna.ko*", "dkms"),
    ("kernel/drivers/accel/amdxdna/amdxdna.ko*", "in-tree"),
)
_XRT_PACKAGES = (
    "xrt-base",
    "xrt-npu",
    "xrt_plugin-amdxdna",
    "xrt-plugin-amdxdna",
    "libxrt2",
    "libxrt-npu2",
    "libxrt-utils-npu",
    "fastflowlm",  # a consumer: its known failures depend on its release
)


def blob_version(path: Path) -> tuple[str | None, str]:
    """The firmware version inside a blob, and how it was found."""
    try:
        if path.name.endswith(".xz"):
            with lzma.open(path) as stream:
                head = stream.read(_BLOB_HEAD)
        elif path.name.endswith(".zst"):
            head = b""  # no zstd reader in the standard library of Python 3.11
        else:
            with path.open("rb") as stream:
                head = stream.read(_BLOB_HEAD)
    except (OSError, lzma.LZMAError):
        head = b""
    match = _RELEASE_RE.search(head)
    if match:
        return match.group(1).decode(), "blob"
    named = _NAME_VERSION_RE.search(path.name)
    if named:
        return named.group(1), "file name"
    return None, "unknown"


def firmware_root(sysroot: Path) -> Path | None:
    for base in (sysroot / "lib/firmware", sysroot / "usr/lib/firmware"):
        if base.is_dir():
            return base
    return None


def read_firmware(sysroot: Path) -> tuple[FirmwareFile, ...]:
    base = firmware_root(sysroot)
    if base is None:
        return ()
    found = []
    for top in ("updates/amdnpu", "amdnpu"):
        root = base / top
        if not root.is_dir():
            continue
        for entry in sorted(root.glob("*/*")):
            relative = entry.relative_to(base).as_posix()
            if entry.is_symlink():
                target = str(entry.readlink())
                version = None
                if entry.exists():
                    version, _ = blob_version(entry.resolve())
                found.append(FirmwareFile(path=relative, target=target, version=version))
            elif entry.is_file():
                version, _ = blob_version(entry)
                found.append(FirmwareFile(path=relative, version=version))
    return tuple(found)


def drm_version_ioctl(node: Path) -> str | None:
    """DRM_IOCTL_VERSION on the accel node (no process; None when it cannot be asked)."""
    try:
        with node.open("rb") as device:
            buffer = bytearray(64)
            fcntl.ioctl(device.fileno(), _DRM_IOCTL_VERSION, buffer)
    except OSError:
        return None
    major, minor, patch = struct.unpack_from("iii", buffer)
    return f"{major}.{minor}.{patch}"


def drm_version_from_log(text: str | None) -> str | None:
    found = _INITIALIZED_RE.findall(text or "")
    return found[-1] if found else None


def saved_kernel_log(sysroot: Path) -> str | None:
    """The tail of a kernel log a syslog daemon or the boot wrote (var/log/kern.log,
    var/log/dmesg), when no log was handed in: read as a file, no process."""
    for name in ("var/log/kern.log", "var/log/dmesg"):
        path = sysroot / name
        try:
            with path.open("rb") as stream:
                size = path.stat().st_size
                stream.seek(max(0, size - _LOG_TAIL))
                return stream.read().decode("utf-8", errors="replace")
        except OSError:
            continue
    return None


def driver_source(sysroot: Path, kernel: str | None) -> tuple[str | None, str | None]:
    """('in-tree' | 'dkms', the module's own version) from where amdxdna.ko lives."""
    version = host_facts.read_text(sysroot / "sys/module/amdxdna/version")
    modules = sysroot / "lib/modules" / (kernel or "")
    if kernel and modules.is_dir():
        # depmod's search order: updates/ (DKMS installs there) before the kernel's own tree
        for pattern, source in _MODULE_PLACES:
            if any(modules.glob(pattern)):
                return source, version
    if version:  # in-tree amdxdna sets no MODULE_VERSION; the out-of-tree one does
        return "dkms", version
    return None, None


def read_userspace(sysroot: Path) -> dict[str, str]:
    status = host_facts.read_text(sysroot / "var/lib/dpkg/status") or ""
    found = {}
    for stanza in status.split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in stanza.splitlines() if ": " in line and line[0] != " "
        )
        if fields.get("Package") in _XRT_PACKAGES and "installed" in fields.get("Status", ""):
            found[fields["Package"]] = fields.get("Version", "?")
    return found


_LIBRARY_DIRS = (
    "opt/xilinx/xrt/lib",
    "usr/lib/x86_64-linux-gnu",
    "usr/lib64",
    "usr/lib",
    "usr/local/lib",
)


def read_plugin(sysroot: Path) -> bool | None:
    """Whether the installed XRT has the amdxdna plugin (libxrt_driver_xdna.so*): None when
    no XRT is installed at all (no libxrt_coreutil.so*), so there is nothing to judge."""
    xrt = plugin = False
    for directory in _LIBRARY_DIRS:
        base = sysroot / directory
        if not base.is_dir():
            continue
        xrt = xrt or any(base.glob("libxrt_coreutil.so*"))
        plugin = plugin or any(base.glob("libxrt_driver_xdna.so*"))
    if plugin:
        return True
    return False if xrt else None


def observe(
    sysroot: Path, kernel_log: str | None = None, *, host: host_facts.HostFacts | None = None
) -> HostCompat:
    """What decides compatibility on the host under `sysroot`; `host`: its facts as the
    command already read them (read here only when the caller has none)."""
    base = host if host is not None else host_facts.read_host_facts(sysroot)
    npu = next((n for n in base.npus if n.driver == "amdxdna"), base.npus[0] if base.npus else None)
    source, module_version = driver_source(sysroot, base.kernel)
    nodes = sysroot / "dev/accel"
    accel = sorted(nodes.glob("accel*")) if nodes.is_dir() else []
    log = kernel_log if kernel_log is not None else saved_kernel_log(sysroot)
    drm = (drm_version_ioctl(accel[0]) if accel else None) or drm_version_from_log(log)
    running = None
    for node in sorted((sysroot / "sys/class/accel").glob("accel*/device/fw_version")):
        running = host_facts.read_text(node)
        break
    return HostCompat(
        kernel=base.kernel,
        distro_id=base.distro_id,
        distro_version=base.distro_version,
        pci=npu.pci if npu else None,
        revision=npu.revision if npu else None,
        driver_source=source,
        drm_version=drm,
        driver_version=module_version if source == "dkms" else None,
        firmware=read_firmware(sysroot),
        firmware_listed=firmware_root(sysroot) is not None,
        running_firmware=running,
        userspace=read_userspace(sysroot),
        plugin=read_plugin(sysroot),
        kernel_log=relevant_lines(log),
        cmdline=host_facts.read_text(sysroot / "proc/cmdline"),
        origin=f"sysroot {sysroot}",
    )
