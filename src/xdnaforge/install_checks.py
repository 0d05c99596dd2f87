"""Checks before an install and the texts that fix what they find; pure.

Known traps from users' machines: an old XRT tree ahead of /opt/xilinx/xrt/lib in
LD_LIBRARY_PATH (the wrong libxrt_core loads and finds no plugin), a distro XRT (Debian and
Ubuntu libxrt packages: no amdxdna plugin, "No devices found"), and a memlock limit far
below what the NPU needs (mmap EAGAIN as a normal user).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .compat.resolver import Verdict

XRT_LIB = "/opt/xilinx/xrt/lib"
# Debian/Ubuntu's own XRT packages (source package xrt): they shadow or conflict with ours
DISTRO_XRT_PACKAGES = (
    "libxrt2",
    "libxrt-coreutil2",
    "libxrt-npu2",
    "libxrt-utils",
    "libxrt-utils-npu",
    "libxrt-dev",
    "xrt-utils",
    "python3-pyxrt",
)
MEMLOCK_FILES = {
    "etc/security/limits.d/99-xdnaforge-memlock.conf": (
        "# written by xdnaforge: the NPU pins buffers in memory (RLIMIT_MEMLOCK)\n"
        "*    soft    memlock    unlimited\n"
        "*    hard    memlock    unlimited\n"
    ),
    "etc/systemd/system.conf.d/99-xdnaforge-memlock.conf": (
        "# written by xdnaforge: services and sessions started by systemd\n"
        "[Manager]\nDefaultLimitMEMLOCK=infinity\n"
    ),
    "etc/systemd/user.conf.d/99-xdnaforge-memlock.conf": (
        "# written by xdnaforge: user services started by systemd --user\n"
        "[Manager]\nDefaultLimitMEMLOCK=infinity\n"
    ),
}


@dataclass(frozen=True, slots=True)
class Check:
    code: str
    blocking: bool
    message: str
    fix: str


def stale_library_path(ld_library_path: str) -> Check | None:
    """A directory holding another libxrt ahead of /opt/xilinx/xrt/lib."""
    entries = [e.rstrip("/") for e in ld_library_path.split(":") if e]
    ahead = []
    for entry in entries:
        if entry == XRT_LIB:
            break
        if re.search(r"(xrt|xilinx)", entry, re.IGNORECASE):
            ahead.append(entry)
    if not ahead:
        return None
    return Check(
        code="stale-xrt-path",
        blocking=False,
        message=f"LD_LIBRARY_PATH has {', '.join(ahead)} ahead of {XRT_LIB}: programs would "
        "load that XRT instead of the one installed here",
        fix="remove them from LD_LIBRARY_PATH (and from the shell start-up files that add "
        "them), or `source /opt/xilinx/xrt/setup.sh` last",
    )


def distro_xrt(installed: dict[str, str]) -> Check | None:
    found = {p: v for p, v in installed.items() if p in DISTRO_XRT_PACKAGES}
    if not found:
        return None
    listing = ", ".join(f"{p} {v}" for p, v in sorted(found.items()))
    return Check(
        code="distro-xrt",
        blocking=True,
        message=f"the distribution's XRT is installed ({listing}): it has no amdxdna plugin "
        "and shadows or conflicts with this build",
        fix=f"remove it first: sudo apt-get remove {' '.join(sorted(found))}",
    )


def parse_memlock(limits: str) -> tuple[int | None, int | None] | None:
    """/proc/<pid>/limits -> (soft, hard) bytes, None meaning unlimited; None if absent."""
    for line in limits.splitlines():
        if line.startswith("Max locked memory"):
            parts = line.split()
            soft, hard = parts[3], parts[4]
            return (
                None if soft == "unlimited" else int(soft),
                None if hard == "unlimited" else int(hard),
            )
    return None


def memlock(limits: tuple[int | None, int | None] | None, minimum_kib: int | None) -> Check | None:
    """The limit against the recipe's minimum (None: unlimited is required)."""
    if limits is None:
        return None
    soft, hard = limits
    needed = None if minimum_kib is None else minimum_kib * 1024

    def too_low(value: int | None) -> bool:
        if value is None:
            return False
        return needed is None or value < needed

    if not (too_low(soft) or too_low(hard)):
        return None

    def show(value: int | None) -> str:
        return "unlimited" if value is None else f"{value // 1024} KiB"

    wanted = "unlimited" if needed is None else f"{minimum_kib} KiB"
    drop_ins = "\n".join(f"--- /{path}\n{text}" for path, text in MEMLOCK_FILES.items())
    return Check(
        code="memlock",
        blocking=False,
        message=f"memlock limit is soft {show(soft)}, hard {show(hard)}; the NPU needs "
        f"{wanted} (buffer mmap fails with EAGAIN as a normal user)",
        fix="write these drop-ins (`doit memlock --yes` does), then log in again:\n" + drop_ins,
    )


def compat_warnings(verdict: Verdict, recipe: str) -> list[Check]:
    """What the compat resolver says against installing `recipe` on this host: firmware the
    driver will reject, a driver contract that does not hold. Warnings: the packages are
    userspace and change nothing in the kernel, but the user should know before."""
    found = []
    fw = verdict.firmware
    if fw.accepted is False:
        found.append(
            Check(
                code="firmware-not-accepted",
                blocking=False,
                message=f"the NPU will not come up: {fw.why[-1]}",
                fix=verdict.fix or "see `doit compat`",
            )
        )
    fits = verdict.recipes.get(recipe)
    if fits is not None and fits.ok is False:
        found.append(
            Check(
                code="contract-not-held",
                blocking=False,
                message=f"{recipe}'s driver contract does not hold here: {'; '.join(fits.why)}",
                fix="`doit compat` lists the recipes that fit this host",
            )
        )
    return found
