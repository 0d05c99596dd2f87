"""After a kernel upgrade: revalidate only, or build another recipe? And the hooks that make
sure someone asks: a kernel postinst.d script that records "revalidation needed for kernel X"
(never more), and a boot-time unit that runs the check on the first boot into that kernel.
"""

from __future__ import annotations

import dataclasses
import datetime
import sys
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.compat.facts import HostCompat
from xdnaforge.compat.placement import host_cells
from xdnaforge.config.matrix import USABLE
from xdnaforge.config.project import Project
from xdnaforge.hardware.npu_user import installing_user, named_user
from xdnaforge.hardware.xrt_layout import find_layout
from xdnaforge.host import HostFacts
from xdnaforge.install.consent import require, require_root
from xdnaforge.state.records import read_record, write_atomic, write_record

HOOK = "etc/kernel/postinst.d/zz-xdnaforge-revalidate"
UNIT = "etc/systemd/system/xdnaforge-revalidate.service"
WANTS = "etc/systemd/system/multi-user.target.wants/xdnaforge-revalidate.service"
STATE_DIR = "/var/lib/xdnaforge"

HOOK_SCRIPT = """#!/bin/sh
# Installed by xdnaforge (doit kernel-hook). A new kernel means the NPU userspace must be
# revalidated: this records that, and nothing else. It builds nothing, installs nothing and
# never claims success; it never fails the kernel's installation either.
version="$1"
state="${XDNAFORGE_STATE_DIR:-%(state)s}"
[ -n "$version" ] || exit 0
mkdir -p "$state" 2>/dev/null || exit 0
printf 'revalidation needed for kernel %%s (kernel installed %%s)\\n' "$version" \\
    "$(date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ)" > "$state/revalidate-$version" 2>/dev/null
exit 0
"""

UNIT_FILE = """# Installed by xdnaforge (doit kernel-hook): on the first boot into a kernel that the
# postinst.d hook marked, run the revalidation and write its outcome to the report.
[Unit]
Description=xdnaforge: revalidate the NPU userspace on the first boot of a new kernel
ConditionPathExists=%(state)s/revalidate-%%v
After=multi-user.target

[Service]
Type=oneshot
# a wedged NPU must not hold the boot forever (oneshot units wait without limit by default)
TimeoutStartSec=30min
# The gates speak for the NPU's user: their memlock limit and groups, not root's. User= with
# PAMName=login gives the service a login session: pam_limits applies the user's limits and
# initgroups their supplementary groups (render).
User=%(user)s
PAMName=login
WorkingDirectory=%(project)s
# "+": as root, and only the installed xrt-smi: validate sets the NPU's power mode, which the
# driver allows root only. "-": its failure is the validate gate's to report, not systemd's.
ExecStartPre=+-/bin/rm -f %(report)s
ExecStartPre=+-%(xrt_smi)s validate --format JSON --output %(report)s
ExecStart=%(python)s -m doit -f %(project)s/dodo.py revalidate --root-validate %(report)s
# "+": as root, since the marker belongs to root; it goes whatever the outcome
ExecStopPost=+/bin/rm -f %(state)s/revalidate-%%v %(report)s

[Install]
WantedBy=multi-user.target
"""


@dataclass(frozen=True, slots=True)
class Decision:
    kind: str  # revalidate, build, unverified
    kernel: str
    target: str | None  # the recipe to revalidate or build
    installed: str | None  # the recipe xdnaforge installed on this system
    message: str


def installed_target(project: Project) -> str | None:
    """The target whose install.json says it is installed into the inspected system."""
    root = str(project.site.sysroot.resolve())
    for record_path in sorted(project.site.artifacts_dir.glob("*/install.json")):
        record = read_record(record_path)
        if record and record.get("state") == "installed" and record.get("root") == root:
            return str(record["target"])
    return None


def decide(
    project: Project, host: HostFacts, kernel: str | None, compat: HostCompat | None = None
) -> Decision:
    """`host` as the command read it; `kernel`: judge this release instead of the running one
    (by its release: the driver it will carry has not reported itself yet); `compat`: the
    running driver's facts, which place the host by its DRM driver version."""
    facts = host
    if kernel and kernel != host.kernel:
        facts = dataclasses.replace(facts, kernel=kernel)
        compat = None
    release = facts.kernel or "unknown"
    installed = installed_target(project)
    inside, moved = host_cells(project.cells(), facts, compat)
    cells = [c for c in inside if c.expect in USABLE]
    why = {name: f" ({text})" for name, text in moved.items()}
    if not cells:
        keep = (
            f"keep {installed} and run `doit validate --target {installed}` to find out"
            if installed
            else "nothing is known to work here yet"
        )
        return Decision(
            "unverified",
            release,
            installed,
            installed,
            f"no supported matrix cell matches kernel {release} on this host: unverified; {keep}"
            + "".join(f"; {name}: {text}" for name, text in sorted(moved.items())),
        )
    cell = cells[0]
    if cell.recipe == installed:
        return Decision(
            "revalidate",
            release,
            cell.recipe,
            installed,
            f"revalidate only: kernel {release} is in cell {cell.name}{why.get(cell.name, '')}, "
            f"whose recipe "
            f"{cell.recipe} is installed; -nokmod userspace does not depend on the "
            f"kernel, so nothing is compiled (doit validate --target {cell.recipe})",
        )
    was = f"installed is {installed}" if installed else "nothing is installed by xdnaforge"
    return Decision(
        "build",
        release,
        cell.recipe,
        installed,
        f"build {cell.recipe}: kernel {release} is in cell {cell.name}"
        f"{why.get(cell.name, '')}; {was} "
        f"(doit build --target {cell.recipe}, then doit install)",
    )


def record_decision(project: Project, decision: Decision, outcome: str) -> None:
    """Write kernel.json for the affected targets, so their reports show it."""
    body = {
        "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "kernel": decision.kernel,
        "decision": decision.kind,
        "target": decision.target,
        "installed": decision.installed,
        "message": decision.message,
        "outcome": outcome,
    }
    for target in {t for t in (decision.target, decision.installed) if t}:
        write_record(project.site.artifacts_dir / target / "kernel.json", "kernel", body)


def hook_files(dodo_dir: Path, user: str, xrt_smi: Path) -> dict[str, str]:
    values = {
        "state": STATE_DIR,
        "user": user,
        "project": str(dodo_dir),
        "python": sys.executable,
        "xrt_smi": str(xrt_smi),
        "report": f"{STATE_DIR}/validate-%v.json",
    }
    return {HOOK: HOOK_SCRIPT % values, UNIT: UNIT_FILE % values}


def install_hook(project: Project, dodo_dir: Path, root: Path, yes: bool) -> None:
    site = project.site
    named = named_user(site.npu_user, site.artifacts_dir, site.sysroot)
    user, source = named or (installing_user(), "who runs this")
    print(f"the revalidation runs as the NPU's user {user} (from {source})")
    # the installed stack's xrt-smi: /opt/xilinx/xrt/bin for ours, /usr/bin for a distro's
    layout = find_layout(
        root,
        [name for recipe in project.recipes.values() for name in recipe.install_order],
        site_prefix=site.xrt_prefix if site.xrt_prefix_given else None,
    )
    print(f"xrt-smi validate runs as {layout.xrt_smi} ({layout.source})")
    files = hook_files(dodo_dir, user, layout.xrt_smi)
    for path, text in files.items():
        print(f"--- {root / path}\n{text}")
    print(f"--- {root / WANTS} -> ../xdnaforge-revalidate.service (enables the unit)")
    require(yes, "not installed: adds a kernel hook and a boot-time unit", "the files above")
    require_root(root, "kernel-hook --install")
    for path, text in files.items():
        write_atomic(root / path, text)
    (root / HOOK).chmod(0o755)
    link = root / WANTS
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to("../xdnaforge-revalidate.service")
    print(
        "installed: the next kernel package marks itself for revalidation, and the first "
        "boot into it runs `doit revalidate`"
    )
