"""Checks before an install and the texts that fix what they find; pure.

Known traps from users' machines: an old XRT tree ahead of /opt/xilinx/xrt/lib in
LD_LIBRARY_PATH (the wrong libxrt_core loads and finds no plugin), a distro XRT without the
amdxdna plugin (Ubuntu 25.10's 2.19: "No devices found"), a distro XRT with it beside ours
(two stacks: which one a program gets depends on the loader path and PATH), and a memlock
limit far below what the NPU needs (mmap EAGAIN as a normal user). A distro stack is judged
by its files (does it hold libxrt_driver_xdna?), not by its package names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdnaforge.compat.resolver import Verdict
from xdnaforge.hardware.xrt_layout import PLUGIN_RE, layout_from_files

XRT_LIB = "/opt/xilinx/xrt/lib"
# Debian/Ubuntu's own XRT packages (source package xrt): they shadow or conflict with ours
DISTRO_XRT_PACKAGES = (
    "libxrt1",  # 2.13 (Debian 13)
    "libxrt2",
    "libxrt-alveo2",
    "libxrt-utils-alveo",
    "python3-xrt",
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


def stale_library_path(ld_library_path: str, xrt_lib: str = XRT_LIB) -> Check | None:
    """A directory holding another libxrt ahead of `xrt_lib` (the installed stack's)."""
    entries = [e.rstrip("/") for e in ld_library_path.split(":") if e]
    ahead = []
    for entry in entries:
        if entry == xrt_lib:
            break
        if re.search(r"(xrt|xilinx)", entry, re.IGNORECASE):
            ahead.append(entry)
    if not ahead:
        return None
    return Check(
        code="stale-xrt-path",
        blocking=False,
        message=f"LD_LIBRARY_PATH has {', '.join(ahead)} ahead of {xrt_lib}: programs would "
        "load that XRT instead of the one installed here",
        fix="remove them from LD_LIBRARY_PATH (and from the shell start-up files that add "
        "them)" + (", or `source /opt/xilinx/xrt/setup.sh` last" if xrt_lib == XRT_LIB else ""),
    )


def distro_xrt(
    installed: Mapping[str, str],
    files: Mapping[str, Sequence[str]] | None = None,
    *,
    installing_distro: bool = False,
    distro_targets: Sequence[str] = (),
) -> Check | None:
    """The distribution's own XRT, judged by its files (`files`: package -> paths, dpkg's
    lists). With the plugin it is a valid stack, and installing ours beside it a conflict;
    without it the "No devices found" trap. Installing a distro recipe, it is that stack."""
    found = {p: v for p, v in installed.items() if p in DISTRO_XRT_PACKAGES}
    if not found or installing_distro:
        return None
    listing = ", ".join(f"{p} {v}" for p, v in sorted(found.items()))
    theirs = {p: list((files or {}).get(p, ())) for p in found}
    plugin = sorted(path for paths in theirs.values() for path in paths if PLUGIN_RE.search(path))
    remove = f"sudo apt-get remove {' '.join(sorted(found))}"
    if not plugin:
        return Check(
            code="distro-xrt",
            blocking=True,
            message=f"the distribution's XRT is installed ({listing}) without the amdxdna "
            "plugin (no libxrt_driver_xdna.so* among its files, as Ubuntu 25.10's 2.19): "
            "xrt-smi finds no devices with it, and it shadows or conflicts with this build",
            fix=f"remove it first: {remove}",
        )
    layout = layout_from_files(theirs)
    lib = layout.lib_dir if layout else "/usr/lib"
    smi = layout.xrt_smi if layout else "/usr/bin/xrt-smi"
    keep = (
        f"to keep it, validate it instead of installing this build: `doit build --target "
        f"{distro_targets[0]}`, then `doit validate --target {distro_targets[0]}`"
        if distro_targets
        else "to keep it, do not install this build"
    )
    return Check(
        code="distro-xrt-stack",
        blocking=True,
        message=f"the distribution's XRT stack with the amdxdna plugin is installed "
        f"({listing}; plugin {plugin[0]}): a valid stack of its own. Installed beside it, "
        f"this build makes two: programs load {lib}/libxrt_coreutil (the loader's default "
        f"path) unless LD_LIBRARY_PATH starts with {XRT_LIB}, and {smi} comes first on PATH "
        "unless /opt/xilinx/xrt/bin precedes it, so which XRT runs depends on the shell",
        fix=f"{keep}; to switch to this build, remove it first: {remove}",
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
