"""What one xdna-driver line says of itself beyond its pins, for `doit track` (pure): its own
XRT version (`tools/info.json`, 2.25.37 on 1.8, where the XRT tag says 2.25.0), every
firmware and certificate blob it was released with (`tools/WHENCE` from 1.9 on, whose
`info.json` lists none; `tools/info.json` before), and the PCI ids its driver binds
(`src/driver/amdxdna/amdxdna_pci_drv.c`'s id table), with the changes between two lines
worded for a maintainer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence

_WHENCE_LINK_RE = re.compile(
    r"^Link:\s*amdnpu/([0-9a-f]{4}_[0-9a-f]{2})/(\S+)\s*->\s*(\S+)\s*$", re.MULTILINE
)
_BLOB_VERSION_RE = re.compile(r"\.sbin\.(\d+(?:\.\d+){3})$")
_DEVICE_RE = re.compile(r"\{\s*0x([0-9A-Fa-f]{4}),\s*0x([0-9A-Fa-f]+),\s*&(\w+)\s*\}")


def line_xrt_version(info: str | None) -> str | None:
    """`202620.2.25.37` in tools/info.json's `xrt.version` -> `2.25.37`."""
    try:
        data = json.loads(info or "")
    except ValueError:
        return None
    xrt = data.get("xrt") if isinstance(data, dict) else None
    version = xrt.get("version") if isinstance(xrt, dict) else None
    parts = re.findall(r"\d+", version) if isinstance(version, str) else []
    if len(parts) == 4:
        parts = parts[1:]
    return ".".join(parts) if len(parts) == 3 else None


def released_blobs(whence: str | None, info: str | None) -> dict[str, str]:
    """`<dir>/<requested name>` -> version, for every firmware and certificate blob (npu.dev.sbin,
    cert.dev.sbin): from WHENCE's `Link:` lines when it has any, else info.json's list."""
    found: dict[str, str] = {}
    for directory, name, target in _WHENCE_LINK_RE.findall(whence or ""):
        version = _BLOB_VERSION_RE.search(target.split("/")[-1])
        if version:
            found[f"{directory}/{name}"] = version.group(1)
    if found:
        return found
    try:
        data = json.loads(info or "")
    except ValueError:
        return found
    for item in data.get("firmwares", []) if isinstance(data, dict) else []:
        if not isinstance(item, dict):
            continue
        device, revision = item.get("pci_device_id"), item.get("pci_revision_id")
        name, version = item.get("fw_name"), item.get("version")
        if all(isinstance(v, str) for v in (device, revision, name, version)):
            found[f"{str(device).lower()}_{str(revision).lower()}/{name}"] = str(version)
    return found


def bound_devices(pci_drv: str | None) -> tuple[str, ...]:
    """`1022:17f0 rev 0x10` for each (device, revision) the driver's id table selects."""
    found = []
    for device, revision, _ in _DEVICE_RE.findall(pci_drv or ""):
        entry = f"1022:{device.lower()} rev 0x{int(revision, 16):02x}"
        if entry not in found:
            found.append(entry)
    return tuple(sorted(found))


def device_changes(
    old: Sequence[str], new: Sequence[str], known: Callable[[str], bool]
) -> list[str]:
    """Ids the driver now binds and no longer binds; for each added one, whether
    xdnaforge's host facts know it (a host with it is otherwise an unknown NPU)."""
    lines = []
    added = [d for d in new if d not in old]
    dropped = [d for d in old if d not in new]
    if added:
        unknown = [d for d in added if not known(d)]
        note = (
            f"; not in xdnaforge's host facts: {', '.join(unknown)}"
            if unknown
            else "; xdnaforge's host facts know each"
        )
        lines.append(f"the driver now binds {', '.join(added)}{note}")
    if dropped:
        lines.append(f"the driver no longer binds {', '.join(dropped)}")
    if not lines:
        lines.append(f"the driver binds the same {len(new)} ids" if new else "no id table read")
    return lines


def blob_changes(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    """Each blob released with another version, and the whole list."""
    lines = []
    for key in sorted(old.keys() | new.keys()):
        before, after = old.get(key), new.get(key)
        if before != after:
            lines.append(f"{key} released with {after or 'nothing'} (was {before or 'nothing'})")
    listed = ", ".join(f"{k} {v}" for k, v in sorted(new.items())) or "none listed"
    same = "" if lines else " (the same as before)"
    lines.append(f"the line was released with {listed}{same}")
    return lines
