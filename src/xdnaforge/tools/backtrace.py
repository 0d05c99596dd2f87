"""The frames of a backtrace as gdb (`bt`, `thread apply all bt`) and pstack print them, and
whether the innermost frame of the NPU's userspace is one that waits for the device. A pure
parser; nothing is run here.

gdb's frame lines: "#1  0x00007f... in shim_xdna::hwq::wait_command (this=..., seq=3, ...)
at .../hwq.cpp:118" or, without an address, "#1  shim_xdna::hwq::wait_command(...)
[libxrt_driver_xdna.so.2]". The shim's functions that block until the NPU answers are named
wait* in every release (xdna-driver src/shim: hwq.cpp wait_command, fence.cpp wait and
wait_syncobj_done, platform.cpp wait_syncobj, host/platform_host.cpp wait_cmd_ioctl and
wait_cmd_syncobj, buffer.cpp wait_for_submitted, and the umq and virtio variants); XRT's
xrt::run::wait and xrt::bo's sync wait on them.
"""

from __future__ import annotations

import re

_FRAME_RE = re.compile(r"^#(\d+)\s+(?:0x[0-9a-fA-F]+ in )?([\w:~<>]+)\s*\(", re.M)
_SHIM_RE = re.compile(r"^shim_xdna(?:_edge)?::")


def frames(text: str) -> list[tuple[int, str]]:
    """(frame number, function) of each frame line, in the order printed."""
    return [(int(m.group(1)), m.group(2)) for m in _FRAME_RE.finditer(text)]


def blocked_in_shim(text: str) -> str | None:
    """The shim function a backtrace is blocked in, when its innermost shim frame (below
    the system calls) is one that waits for the NPU; None otherwise."""
    for _number, function in sorted(frames(text)):
        if not _SHIM_RE.match(function):
            continue
        return function if function.rsplit("::", 1)[-1].startswith("wait") else None
    return None
