"""What `lspci -k` (and `-nnk`, `-vk`) prints of a device and its kernel driver, read from
pciutils' format strings. A pure parser; nothing is run here.

pciutils (lspci.c, show_device / show_terse; ls-kernel.c, show_kernel): a device's block
starts at column 0 with its slot ("c5:00.1 Signal processing controller [1180]: Advanced
Micro Devices, Inc. [AMD] Strix/Krackan/Strix Halo Neural Processing Unit [1022:17f0] (rev
10)", with a domain "0000:" under -D), and its indented lines follow: "\tKernel driver in
use: %s" when a driver is bound to the device, "\tKernel modules: %s" for the modules that
could drive it. A driver is bound only once its probe returned success.

Under -v, each memory BAR is a line "\tMemory at %s (%s) [disabled] [size=%s]" (lspci.c,
show_bases; under -vv "\tRegion %d: Memory at ..."): "[disabled]" when the device's
command register has memory decoding off, which no driver that enabled the device
(amdxdna's probe begins with pcim_enable_device, undone when the probe fails) leaves so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SLOT_RE = re.compile(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) (.*)$")
_IN_USE_RE = re.compile(r"^\s+Kernel driver in use: (\S+)")
_MODULES_RE = re.compile(r"^\s+Kernel modules: (.+?)\s*$")
_MEMORY_RE = re.compile(r"^\s*(?:Region \d+: )?Memory at \S+ \([^)\n]*\)( \[disabled\])?")
# the vendor and device id lspci -nn puts after the device's name
_IDS_RE = re.compile(r"\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]")


@dataclass(frozen=True, slots=True)
class PciDevice:
    slot: str
    description: str
    driver: str  # the bound driver, "" when none
    modules: tuple[str, ...]


def devices(text: str) -> list[PciDevice]:
    """The device blocks of lspci -k output (only blocks with kernel lines: without -k,
    lspci says nothing of drivers)."""
    found: list[PciDevice] = []
    slot = description = driver = ""
    modules: tuple[str, ...] = ()
    seen_kernel = False

    def close() -> None:
        if slot and seen_kernel:
            found.append(PciDevice(slot, description, driver, modules))

    for line in text.splitlines():
        head = _SLOT_RE.match(line)
        if head:
            close()
            slot, description = head.group(1), head.group(2)
            driver, modules, seen_kernel = "", (), False
            continue
        if not slot:
            continue
        in_use = _IN_USE_RE.match(line)
        if in_use:
            driver, seen_kernel = in_use.group(1), True
            continue
        listed = _MODULES_RE.match(line)
        if listed:
            modules = tuple(m.strip() for m in listed.group(1).split(",") if m.strip())
            seen_kernel = True
        elif line and not line[0].isspace():
            close()
            slot, seen_kernel = "", False
    close()
    return found


def memory_disabled(text: str, vendor: str, device_ids: frozenset[str]) -> list[str]:
    """The slots of the devices with one of these ids (lspci -nn shows them) whose every
    memory BAR lspci -v printed is "[disabled]": no driver has enabled them."""
    found: list[str] = []
    slot = ""
    wanted = False
    states: list[bool] = []

    def close() -> None:
        if slot and wanted and states and all(states):
            found.append(slot)

    for line in text.splitlines():
        head = _SLOT_RE.match(line)
        if head:
            close()
            slot, states = head.group(1), []
            wanted = any(
                ids.group(1).lower() == vendor and ids.group(2).lower() in device_ids
                for ids in _IDS_RE.finditer(head.group(2))
            )
            continue
        # -v separates the blocks with a blank line (a paste may have lost the indentation)
        memory = _MEMORY_RE.match(line)
        if memory and slot:
            states.append(memory.group(1) is not None)
        elif not line.strip():
            close()
            slot = ""
    close()
    return found
