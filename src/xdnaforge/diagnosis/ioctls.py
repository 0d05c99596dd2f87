"""The amdxdna ioctls as logs name them (`DRM_IOCTL_AMDXDNA_CREATE_HWCTX IOCTL failed
(err=-22)`): what each one asks the driver to do, so a failed ioctl reads as the operation
that failed, next to its errno (diagnosis/errnos.py).

Pure and fixed: the names and their meaning are those of include/uapi/drm/amdxdna_accel.h
(in-tree, drivers/accel/amdxdna since 6.14) and of the out-of-tree amdxdna's additions
(WAIT_CMD, GET_ARRAY).
"""

from __future__ import annotations

import re

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
}
_IOCTL_RE = re.compile(r"\bDRM_IOCTL_AMDXDNA_([A-Z_]+)\b")


def ioctl_family(line: str) -> str:
    """The family of the amdxdna ioctl `line` names ("" when it names none this table knows)."""
    match = _IOCTL_RE.search(line)
    return FAMILIES.get(match.group(1), "") if match else ""


def describe_ioctl(line: str) -> str:
    """ "DRM_IOCTL_AMDXDNA_CREATE_HWCTX (create a hardware context ...)" or ""."""
    match = _IOCTL_RE.search(line)
    if match is None:
        return ""
    name = match.group(1)
    meaning = MEANINGS.get(name, "an amdxdna ioctl this table does not know")
    return f"DRM_IOCTL_AMDXDNA_{name} ({meaning})"
