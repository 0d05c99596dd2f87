"""The amdxdna ioctls as logs name them (`DRM_IOCTL_AMDXDNA_CREATE_HWCTX IOCTL failed
(err=-22)`): what each one asks the driver to do, so a failed ioctl reads as the operation
that failed, next to its errno (diagnosis/errnos.py).

Pure. The meanings and families below are reviewed by hand, per operation, from
include/uapi/drm/amdxdna_accel.h (in-tree, drivers/accel/amdxdna since 6.14) and the
out-of-tree amdxdna's additions (WAIT_CMD, GET_ARRAY, and the early ATTACH_BO, SUBMIT_*).
Which names the header ever gave an operation is generated (data/ioctls.json, written by
scripts/gen_ioctls.py from every version of the header): a shim built while CREATE_HWCTX was
called CREATE_CTX (January-February 2025) prints the other name for the same operation.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from xdnaforge.diagnosis.errnos import reported

MEANINGS = {
    "CREATE_HWCTX": "create a hardware context (the firmware reserves columns for it)",
    "DESTROY_HWCTX": "destroy a hardware context",
    "CONFIG_HWCTX": "configure a hardware context (its compute units, debug buffer)",
    "CREATE_BO": "allocate a buffer object (device heap, command or shared buffer)",
    "GET_BO_INFO": "look up a buffer object's address and mmap offset",
    "SYNC_BO": "synchronise a buffer object between host and device",
    "EXEC_CMD": "submit a command to a hardware context",
    "WAIT_CMD": "wait for a submitted command to complete",
    "GET_INFO": "query the driver (version, firmware, clocks, contexts, telemetry)",
    "GET_ARRAY": "query an array of driver records (contexts, telemetry)",
    "SET_STATE": "set device state (power mode; needs root on older XRT)",
    "CREATE_HWCTX_UNSECURE": "create a hardware context (early 2024 headers)",
    "ATTACH_BO": "attach a buffer object to a hardware context (early 2024 headers)",
    "DETACH_BO": "detach a buffer object from a hardware context (early 2024 headers)",
    "SUBMIT_WAIT": "submit a wait on a fence (2024 headers)",
    "SUBMIT_SIGNAL": "submit a fence signal (2024 headers)",
}
# the family of the operation an ioctl asks for: the shim's ioctl wrapper prints one
# template for all of them, so the ioctl it names decides the family
FAMILIES = {
    "CREATE_HWCTX": "hwctx",
    "DESTROY_HWCTX": "hwctx",
    "CONFIG_HWCTX": "hwctx",
    "CREATE_BO": "memory",
    "GET_BO_INFO": "memory",
    "SYNC_BO": "memory",
    "EXEC_CMD": "command",
    "WAIT_CMD": "command",
    "GET_INFO": "versions",  # a query this driver does not answer: userspace newer than it
    "GET_ARRAY": "versions",
    "SET_STATE": "device-access",
    "CREATE_HWCTX_UNSECURE": "hwctx",
    "ATTACH_BO": "memory",
    "DETACH_BO": "memory",
    "SUBMIT_WAIT": "command",
    "SUBMIT_SIGNAL": "command",
}
_IOCTL_RE = re.compile(r"\bDRM_IOCTL_AMDXDNA_([A-Z_]+)\b")
NAMES = Path(__file__).resolve().parent / "data" / "ioctls.json"


@functools.cache
def history() -> dict[str, dict[str, object]]:
    """The generated names: every one the header's enum had, and the renames."""
    data: dict[str, dict[str, object]] = json.loads(NAMES.read_text("utf-8"))
    return data


def canonical(name: str) -> str:
    """The operation's name as the table keys it (CREATE_CTX -> CREATE_HWCTX)."""
    renamed = history()["renamed"]
    found = renamed.get(name, name)
    return found if isinstance(found, str) else name


def ioctl_family(line: str) -> str:
    """The family of the amdxdna ioctl `line` names ("" when it names none this table knows)."""
    match = _IOCTL_RE.search(line)
    return FAMILIES.get(canonical(match.group(1)), "") if match else ""


# Opening the accel node (amdxdna_drm_open, amdxdna_drm.c; amdxdna_pci_drv.c in-tree) fails
# for few reasons: no memory, or binding the process's address space to the device for
# shared virtual addressing (iommu_sva_bind_device), whose "not supported" (EOPNOTSUPP) is
# the IOMMU's: no SVA/PASID for this device in the IOMMU's mode. The DRM core's own open
# (drm_open) returns no EOPNOTSUPP; a node that is missing or not permitted is another errno.
_ACCEL_NODE_RE = re.compile(r"/dev/accel/accel\d+")
_OPEN_RE = re.compile(r"(?i)\bopen(?:ing)?\b")
OPEN_FAMILIES = {"EOPNOTSUPP": "iommu"}


def accel_open_family(line: str) -> str:
    """The family of a failed open of the NPU's accel node from the errno it reports ("" when
    the line is no such open or its errno says nothing of where it failed)."""
    if not (_ACCEL_NODE_RE.search(line) and _OPEN_RE.search(line)):
        return ""
    errno = reported(line)
    return OPEN_FAMILIES.get(errno.name, "") if errno is not None else ""


def describe_ioctl(line: str) -> str:
    """ "DRM_IOCTL_AMDXDNA_CREATE_HWCTX (create a hardware context ...)" or ""."""
    match = _IOCTL_RE.search(line)
    if match is None:
        return ""
    name = match.group(1)
    meaning = MEANINGS.get(canonical(name), "an amdxdna ioctl this table does not know")
    if canonical(name) != name:
        span = history()["names"].get(name, {})
        when = f" {span['first']} .. {span['last']}" if isinstance(span, dict) and span else ""
        meaning += f"; {canonical(name)} as the header named it{when}"
    return f"DRM_IOCTL_AMDXDNA_{name} ({meaning})"
