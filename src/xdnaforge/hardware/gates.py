"""The bottom-up hardware gates: host, memlock, device, runtime, examine, validate, pyxrt.

A gate runs only when the gates it depends on passed; otherwise it is skipped with the reason.
Each records what it saw (command, exit status, relevant lines), its figures and, when it fails,
the diagnosis from the knowledge base. Host files are read under the sysroot, tools run through
process/run.py with timeouts, so tests drive this with a fake sysroot and fake tools. This
module orders the gates and runs the system ones (host, memlock, device); hardware/xrt_gates.py
holds those that prove the installed XRT, hardware/gate_context.py their types.
"""

from __future__ import annotations

import grp
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from xdnaforge.compat.here import verdict_here
from xdnaforge.compat.observe import observe
from xdnaforge.compat.placement import host_cells
from xdnaforge.diagnosis.classify import diagnose
from xdnaforge.diagnosis.knowledge import by_code
from xdnaforge.errors import ToolNotFound
from xdnaforge.hardware.gate_context import Context, Gate
from xdnaforge.hardware.host_checks import memlock, parse_memlock
from xdnaforge.hardware.xrt_gates import gate_examine, gate_pyxrt, gate_runtime, gate_validate
from xdnaforge.host import read_text
from xdnaforge.process.run import CommandFailed

DEPENDS = {
    "host": (),
    "memlock": ("host",),
    "device": ("host",),
    "runtime": ("host",),
    "examine": ("device", "runtime"),
    "validate": ("examine", "memlock"),
    "pyxrt": ("examine", "memlock"),
}
ORDER = tuple(DEPENDS)
# what these gates see is the user's (limits, groups, device access), so they run as the
# NPU's user when xdnaforge runs as root for them; xrt-smi validate stays root (power mode)
USER_GATES = frozenset({"memlock", "device", "examine", "pyxrt"})


def _kernel_log(context: Context, gate: Gate) -> str:
    """The kernel log of this boot: journalctl -k -b, dmesg when there is no journal."""
    for argv in (["journalctl", "-k", "-b", "--no-pager"], ["dmesg"]):
        try:
            result = context.tool(argv, timeout=60, as_root=True)
        except ToolNotFound:
            continue
        except CommandFailed as error:
            gate.evidence.append(f"{' '.join(argv)}: {error.message.splitlines()[0]}")
            continue
        gate.evidence.append(f"+ {' '.join(argv)} (exit 0)")
        return result.stdout
    return ""


def gate_host(context: Context, gate: Gate) -> Gate:
    facts = context.facts
    gate.evidence.append(facts.describe())
    if facts.distro_id is None or facts.kernel is None:
        return gate.failed(f"cannot read os-release or the kernel release under {context.sysroot}")
    # the cell by the driver the host runs (its DRM version) where the compat facts know it
    inside, moved = host_cells(context.project.cells(), facts, observe(context.sysroot, host=facts))
    cells = [c for c in inside if c.recipe == context.plan.target]
    mine = {c.name for c in context.project.cells() if c.recipe == context.plan.target}
    placed = "".join(f"; {name}: {why}" for name, why in sorted(moved.items()) if name in mine)
    if not cells:
        return gate.passed(
            f"{facts.describe()}; no matrix cell of {context.plan.target} "
            f"matches this host (unverified combination){placed}"
        )
    cell = cells[0]
    context.found["cell"] = cell.name
    note = f": {cell.reason.strip()}" if cell.reason and cell.expect != "supported" else ""
    how = f", {moved[cell.name]}" if cell.name in moved else ""
    return gate.passed(f"{facts.describe()}; matrix cell {cell.name} ({cell.expect}{note}){how}")


def gate_memlock(context: Context, gate: Gate) -> Gate:
    limits = parse_memlock(context.read_as_user(Path("/proc/self/limits")))
    if limits is None:
        gate.summary = "no /proc/self/limits to read"
        return gate
    soft, hard = limits
    gate.evidence.append(f"RLIMIT_MEMLOCK soft {soft or 'unlimited'}, hard {hard or 'unlimited'}")
    inside = _container_note(context, gate, "limits", "--ulimit memlock=-1:-1")
    check = memlock(limits, context.plan.recipe.validation.memlock_min_kib)
    if check is None:
        return gate.passed(f"memlock limit is sufficient{inside}")
    return gate.failed(f"{check.message}{inside}", by_code("memlock", check.message))


def _container_note(context: Context, gate: Gate, what: str, flag: str) -> str:
    """Inside a container the gate reads the container's own limits and nodes: say so."""
    facts = context.facts
    if facts.container is None:
        return ""
    engine = facts.container.engine
    gate.evidence.append(
        f"inside a {engine} container ({'; '.join(facts.container.evidence)}): these are the "
        f"container's own {what}, set by `{engine} run {flag}`, not the host's"
    )
    return f" (the {engine} container's own {what}: {flag})"


def _identity(context: Context) -> tuple[int, set[int]]:
    text = context.read_as_user(Path("/proc/self/status"))
    uid = os.getuid()
    groups = set(os.getgroups()) | {os.getgid()}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == "Uid" and value.split():
            uid = int(value.split()[1])  # effective uid
        elif key == "Groups":
            groups = {int(g) for g in value.split()}
        elif key == "Gid" and value.split():
            groups.add(int(value.split()[1]))
    return uid, groups


def _group_name(context: Context, gid: int) -> str:
    for line in (read_text(context.sysroot / "etc/group") or "").splitlines():
        parts = line.split(":")
        if len(parts) > 2 and parts[2] == str(gid):
            return parts[0]
    if context.sysroot == Path("/"):
        try:
            return grp.getgrgid(gid).gr_name
        except KeyError:
            pass
    return str(gid)


def gate_device(context: Context, gate: Gate) -> Gate:
    facts = context.facts
    log = _kernel_log(context, gate)
    gate.evidence.extend(
        line.strip() for line in log.splitlines() if "amdxdna" in line or "amdnpu" in line
    )
    # only the NPU's lines: the knowledge's generic entries would otherwise take another
    # driver's "failed to load firmware" for the NPU's
    npu_log = "\n".join(line for line in log.splitlines() if "xdna" in line or "amdnpu" in line)
    log_diagnoses = [d for d in diagnose(npu_log) if d.severity != "info"]
    if not facts.npus:
        return gate.failed(
            "no AMD NPU PCI function (1022:1502/17f0/17f1/17f2/...) on this host", *log_diagnoses
        )
    npu = facts.npus[0]
    if npu.driver != "amdxdna":
        bound = f"bound to {npu.driver}" if npu.driver else "not bound to any driver"
        return gate.failed(f"NPU {npu.pci} at {npu.slot} is {bound}, not amdxdna", *log_diagnoses)
    inside = _container_note(
        context, gate, "device nodes", "--device /dev/accel/accel0 --group-add keep-groups"
    )
    nodes = sorted((context.sysroot / "dev/accel").glob("accel*"))
    if not nodes:
        return gate.failed(
            f"amdxdna is bound but there is no /dev/accel node{inside}",
            *log_diagnoses,
            by_code("accel-node-missing", "xdnaforge: no /dev/accel/accel*"),
        )
    node = nodes[0]
    info = node.stat()
    uid, groups = _identity(context)
    mode = info.st_mode
    readable_writable = uid == 0 or (
        (info.st_uid == uid and mode & stat.S_IRUSR and mode & stat.S_IWUSR)
        or (info.st_gid in groups and mode & stat.S_IRGRP and mode & stat.S_IWGRP)
        or (mode & stat.S_IROTH and mode & stat.S_IWOTH)
    )
    shown = f"/dev/accel/{node.name}"
    group = _group_name(context, info.st_gid)
    gate.evidence.append(
        f"{shown}: mode {stat.filemode(mode)[1:]}, group {group}, checked for uid {uid}"
    )
    if not readable_writable:
        line = (
            f"xdnaforge: {shown} is not readable and writable by uid {uid} "
            f"(mode {stat.filemode(mode)[1:]}, group {group})"
        )
        return gate.failed(
            f"{shown} is not readable and writable for this user (group {group}){inside}",
            by_code("render-group", line),
        )
    if log_diagnoses:
        return gate.failed("the kernel log shows amdxdna errors", *log_diagnoses)
    bound = f"{npu.pci} rev {npu.revision} at {npu.slot} bound to amdxdna; {shown} read/write"
    broken = _contract(context, gate, log)
    if broken:
        # a prediction, not an observation: the gates after this one still run
        gate.blocking = False
        return gate.failed(
            f"{bound}, but the driver contract of {context.plan.recipe.name} does not hold "
            f"here: {broken}{inside}",
            by_code("driver-contract", f"xdnaforge: driver contract: {broken}"),
        )
    return gate.passed(f"{bound}{inside}")


def _contract(context: Context, gate: Gate, log: str) -> str:
    """The recipe's `driver:` contract against this host's driver and firmware (the compat
    resolver), as evidence; why it does not hold ("" when it holds or is unknown). A contract
    that does not hold fails the device gate without blocking the gates after it: they observe
    what it predicts (a known-broken cell is judged by where it really breaks)."""
    verdict = verdict_here(context.sysroot, context.facts, [context.plan.recipe], log)
    fits = verdict.recipes[context.plan.recipe.name]
    state = {True: "holds", False: "does NOT hold", None: "unknown"}[fits.ok]
    gate.evidence.append(
        f"driver contract of {context.plan.recipe.name} (doit compat): {state}: "
        + "; ".join(fits.why)
    )
    return "; ".join(fits.why) if fits.ok is False else ""


GATES: dict[str, Callable[[Context, Gate], Gate]] = {
    "host": gate_host,
    "memlock": gate_memlock,
    "device": gate_device,
    "runtime": gate_runtime,
    "examine": gate_examine,
    "validate": gate_validate,
    "pyxrt": gate_pyxrt,
}


def run_gates(context: Context, wanted: Sequence[str]) -> list[Gate]:
    """Every gate in order; a gate whose prerequisites did not pass is skipped, with why."""
    results: dict[str, Gate] = {}
    for name in ORDER:
        gate = Gate(name=name)
        results[name] = gate
        if name not in wanted:
            gate.summary = "not in the recipe's gates"
            continue
        blocked = [
            d
            for d in DEPENDS[name]
            if d in wanted and results[d].status != "pass" and results[d].blocking
        ]
        if blocked:
            gate.summary = f"skipped: {', '.join(blocked)} did not pass"
            continue
        context.switched = context.user is not None and name in USER_GATES
        gate.ran_as = (
            f"{context.user.name} (uid {context.user.uid}, via runuser)"
            if context.user is not None and context.switched
            else context.running_as
        )
        try:
            GATES[name](context, gate)
        except (CommandFailed, ToolNotFound) as error:
            if not context.switched:
                raise
            # runuser itself failed (the user vanished, PAM refused): say so, do not crash
            gate.failed(f"cannot run as {gate.ran_as}: {error.message.splitlines()[0]}")
        finally:
            context.switched = False
    return list(results.values())
