"""The bottom-up hardware gates: host, memlock, device, runtime, examine, validate, pyxrt.

A gate runs only when the gates it depends on passed; otherwise it is skipped with the
reason. Each records what it saw (command, exit status, relevant lines), its figures and,
when it fails, the diagnosis from the knowledge base. Host files are read under the
sysroot, tools run through run.py with timeouts, so tests drive this with a fake sysroot
and fake tools.
"""

from __future__ import annotations

import grp
import json
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bench import Metric, evaluate
from .errors import ToolNotFound
from .host import HostFacts, read_host_facts, read_text
from .install_checks import memlock, parse_memlock, stale_library_path
from .knowledge import Diagnosis, by_code, diagnose
from .npu_user import NpuUser, as_user
from .paths import Workspace
from .plan import Plan, matching_cells
from .project import Project
from .records import read_record
from .run import CommandFailed, CommandResult, run
from .runtime_check import check_packages, expected_packages
from .tools.dpkg import query_installed
from .tools.xrt_smi import (
    examine_argv,
    parse_examine_json,
    parse_examine_text,
    parse_validate_json,
    parse_validate_text,
    validate_argv,
)

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
# one buffer, written and read back through the NPU's driver: pyxrt, device, BO all work
PYXRT_PROBE = """
import json, sys
result = {"python": sys.version.split()[0]}
try:
    import pyxrt
except ImportError as error:
    result.update(ok=False, stage="import", error=str(error))
else:
    try:
        device = pyxrt.device(0)
        data = bytes(range(256)) * 16
        bo = pyxrt.bo(device, len(data), pyxrt.bo.host_only, 0)
        bo.write(data, 0)
        bo.sync(pyxrt.xclBOSyncDirection.XCL_BO_SYNC_BO_TO_DEVICE)
        bo.sync(pyxrt.xclBOSyncDirection.XCL_BO_SYNC_BO_FROM_DEVICE)
        back = bytes(bo.read(len(data), 0))
        result.update(ok=back == data, stage="round trip", error=None if back == data
                      else "the buffer read back differs from what was written")
    except Exception as error:  # the probe reports, the gate judges
        result.update(ok=False, stage="device", error=f"{type(error).__name__}: {error}")
print(json.dumps(result))
"""


@dataclass
class Gate:
    name: str
    status: str = "skip"  # pass, fail, skip
    summary: str = ""
    evidence: list[str] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    diagnoses: list[Diagnosis] = field(default_factory=list)
    ran_as: str = ""  # whose limits, groups and device access the gate saw

    def passed(self, summary: str) -> Gate:
        self.status, self.summary = "pass", summary
        return self

    def failed(self, summary: str, *diagnoses: Diagnosis) -> Gate:
        self.status, self.summary = "fail", summary
        self.diagnoses.extend(
            d for d in diagnoses if d.code not in {x.code for x in self.diagnoses}
        )
        return self

    def as_record(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "summary": self.summary,
            "evidence": self.evidence,
            "metrics": [m.as_record() for m in self.metrics],
            "diagnoses": [d.as_record() for d in self.diagnoses],
            "ran_as": self.ran_as,
        }


@dataclass
class Context:
    project: Project
    plan: Plan
    work: Path  # where tool outputs go (build/<target>/validate)
    history: list[dict[str, float]]
    facts: HostFacts | None = None
    found: dict[str, Any] = field(default_factory=dict)  # what gates learn for later ones
    # set when xdnaforge runs as root and the NPU's user is known: USER_GATES run as them
    user: NpuUser | None = None
    running_as: str = ""  # who xdnaforge itself is ("root", "uid 1000")
    switched: bool = False  # the gate running now runs as `user`
    root_report: Path | None = None  # xrt-smi validate's report, made as root beforehand

    @property
    def sysroot(self) -> Path:
        return self.project.site.sysroot

    def under_root(self, path: Path) -> Path:
        return self.sysroot / path.relative_to("/") if path.is_absolute() else path

    def tool(
        self,
        argv: Sequence[str],
        *,
        timeout: float | None = None,
        env: dict[str, str] | None = None,
        as_root: bool = False,
    ) -> CommandResult:
        """Run a tool; as the NPU's user when the gate running now speaks for them (unless
        `as_root`: the kernel log is not the user's to read)."""
        prefix_bin = self.project.site.xrt_prefix / "bin"
        path = f"{prefix_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        switch = self.user is not None and self.switched and not as_root
        prefix = as_user(self.user) if self.user is not None and switch else []
        return run(
            [*prefix, *argv],
            cwd=self.output_dir() if switch else self.work,
            timeout=timeout or self.project.site.tool_timeout_s,
            env={"PATH": path, **(env or {})},
            log_file=self.work / "tools.log",
        )

    def output_dir(self) -> Path:
        """Where tools write their reports: a directory of the user's when they run as them."""
        if self.user is None or not self.switched:
            return self.work
        folder = self.work / f"as-{self.user.name}"
        folder.mkdir(exist_ok=True)
        os.chown(folder, self.user.uid, self.user.gid)
        return folder

    def read_as_user(self, path: Path) -> str:
        """A /proc/self file as the gate's user sees it: their own process's, through runuser."""
        if self.user is None or not self.switched:
            return read_text(self.under_root(path)) or ""
        return self.tool(["cat", str(self.under_root(path))], timeout=60).stdout


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
    facts = context.facts = read_host_facts(context.sysroot)
    gate.evidence.append(facts.describe())
    if facts.distro_id is None or facts.kernel is None:
        return gate.failed(f"cannot read os-release or the kernel release under {context.sysroot}")
    cells = [
        c for c in matching_cells(context.project.cells(), facts) if c.recipe == context.plan.target
    ]
    if not cells:
        return gate.passed(
            f"{facts.describe()}; no matrix cell of {context.plan.target} "
            "matches this host (unverified combination)"
        )
    cell = cells[0]
    context.found["cell"] = cell.name
    note = f": {cell.reason.strip()}" if cell.reason and cell.expect != "supported" else ""
    return gate.passed(f"{facts.describe()}; matrix cell {cell.name} ({cell.expect}{note})")


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
    facts = context.facts or read_host_facts(context.sysroot)
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
    facts = context.facts or read_host_facts(context.sysroot)
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
    return gate.passed(
        f"{npu.pci} rev {npu.revision} at {npu.slot} bound to amdxdna; {shown} read/write{inside}"
    )


def gate_runtime(context: Context, gate: Gate) -> Gate:
    """The recipe's packages at the versions recorded for this target, files as dpkg
    installed them, the plugin library present, no stale XRT ahead in the library path."""
    admindir = context.sysroot / "var/lib/dpkg"
    order = context.plan.recipe.install_order
    installed = query_installed(
        order,
        cwd=context.work,
        log_file=context.work / "tools.log",
        admindir=None if context.sysroot == Path("/") else admindir,
    )
    site = context.project.site
    space = Workspace(context.plan.target, site.build_dir, site.artifacts_dir)
    expected = expected_packages(
        order,
        read_record(space.record("install")),
        read_record(space.record("packages")),
        str(context.sysroot.resolve()),
        context.plan.recipe.validation.plugin_version,
    )
    check = check_packages(expected, installed, context.sysroot, admindir)
    gate.evidence.extend(check.evidence)
    problems = list(check.problems)
    libs = context.under_root(site.xrt_prefix / "lib")
    diagnoses = []
    if not list(libs.glob("libxrt_driver_xdna.so*")):
        problems.append(f"no libxrt_driver_xdna.so* in {site.xrt_prefix}/lib")
        diagnoses.append(by_code("no-plugin", f"xdnaforge: no libxrt_driver_xdna.so* in {libs}"))
    stale = stale_library_path(os.environ.get("LD_LIBRARY_PATH", ""))
    if stale is not None:
        problems.append(stale.message)
    if problems:
        return gate.failed("; ".join(problems), *diagnoses)
    return gate.passed(check.summary)


def _run_tool(context: Context, gate: Gate, argv: list[str]) -> tuple[CommandResult | None, str]:
    """Run xrt-smi; on failure record the evidence and the diagnoses, return (None, text)."""
    gate.evidence.append(f"+ {' '.join(argv)}")
    try:
        result = context.tool(argv)
    except CommandFailed as error:
        text = error.output
        gate.evidence.append(error.message.splitlines()[0])
        gate.evidence.extend(line for line in text.splitlines()[-15:] if line.strip())
        if error.returncode is None:
            gate.failed(
                f"{argv[0]} {argv[1]} did not answer within "
                f"{context.project.site.tool_timeout_s:g} s",
                by_code("xrt-smi-hang", "xdnaforge: xrt-smi did not answer"),
            )
        return None, text
    gate.evidence.append(f"exit status {result.returncode}")
    return result, result.stdout + result.stderr


def gate_examine(context: Context, gate: Gate) -> Gate:
    output = context.output_dir() / "examine.json"
    output.unlink(missing_ok=True)  # xrt-smi refuses to overwrite without --force
    result, text = _run_tool(context, gate, examine_argv(output))
    if result is None:
        if gate.status == "fail":
            return gate
        return gate.failed("xrt-smi examine failed", *diagnose(text))
    report = parse_examine_json(output.read_text()) if output.exists() else parse_examine_text(text)
    gate.evidence.append(
        f"XRT {report.xrt_version}, devices: "
        f"{', '.join(f'{d.bdf} {d.name}' for d in report.devices) or 'none'}, "
        f"firmware {report.firmware}"
    )
    context.found["firmware"] = report.firmware
    context.found["xrt_version"] = report.xrt_version
    if not report.devices:
        return gate.failed(
            "xrt-smi examine finds no device",
            by_code("no-devices-found", "[xrt-smi] ERROR: No devices found."),
        )
    expected = context.plan.recipe.validation
    if expected.xrt_version and report.xrt_version != expected.xrt_version:
        return gate.failed(
            f"the loaded XRT is {report.xrt_version}, not {expected.xrt_version}: "
            "another XRT comes first in the library path"
        )
    note = ""
    if expected.firmware_version and report.firmware != expected.firmware_version:
        note = (
            f"; firmware {report.firmware} is not the {expected.firmware_version} this "
            "line was proven with"
        )
    return gate.passed(
        f"{report.devices[0].name} at {report.devices[0].bdf}, XRT "
        f"{report.xrt_version}, firmware {report.firmware}{note}"
    )


def _validate_as_root(context: Context, gate: Gate) -> tuple[CommandResult | None, str, Path]:
    """Run xrt-smi validate, or read the report the boot unit made as root before."""
    if context.root_report is None:
        output = context.work / "validate.json"
        output.unlink(missing_ok=True)
        return (*_run_tool(context, gate, validate_argv(output)), output)
    gate.ran_as = "root (the boot unit, before xdnaforge: it sets the power mode)"
    gate.evidence.append(f"report of xrt-smi validate run as root: {context.root_report}")
    if not context.root_report.is_file():
        gate.failed(
            f"xrt-smi validate, run as root by the boot unit, wrote no {context.root_report}; "
            "its output is in `journalctl -b -u xdnaforge-revalidate`"
        )
        return None, "", context.root_report
    done = CommandResult(tuple(validate_argv(context.root_report)), 0, "", "", 0.0)
    return done, "", context.root_report


def gate_validate(context: Context, gate: Gate) -> Gate:
    result, text, output = _validate_as_root(context, gate)
    if gate.status == "fail":
        return gate
    report = (
        parse_validate_json(output.read_text()) if output.exists() else parse_validate_text(text)
    )
    errors = [e for t in report.tests for e in t.errors]
    for test in report.tests:
        gate.evidence.append(f"{test.name}: {test.status} {'; '.join(test.details + test.errors)}")
    failed = [t.name for t in report.tests if t.status == "FAILED"]
    diagnoses = diagnose("\n".join([text, *errors]))
    if result is None or failed or not report.tests:
        what = f"tests failed: {', '.join(failed)}" if failed else "xrt-smi validate failed"
        return gate.failed(what, *[d for d in diagnoses if d.severity != "info"])
    gate.diagnoses.extend(d for d in diagnoses if d.severity == "info")
    figures = report.metrics()
    validation = context.plan.recipe.validation
    gate.metrics = evaluate(figures, validation.thresholds, validation.baseline, context.history)
    context.found["metrics"] = figures
    judged = ", ".join(f"{m.name} {m.value:g} {m.unit} ({m.verdict})" for m in gate.metrics)
    bad = [m for m in gate.metrics if m.failed]
    if bad:
        return gate.failed(f"figures out of bounds: {judged}")
    return gate.passed(f"{len(report.tests)} tests passed ({report.power_mode} mode); {judged}")


def _pyxrt_builds(context: Context) -> list[str]:
    folder = context.under_root(context.project.site.xrt_prefix / "python")
    return sorted(p.name for p in folder.glob("pyxrt*.so"))


def gate_pyxrt(context: Context, gate: Gate) -> Gate:
    python_dir = context.under_root(context.project.site.xrt_prefix / "python")
    outcomes = []
    for python in context.project.site.pythons:
        argv = [python, "-c", PYXRT_PROBE]
        try:
            result = context.tool(argv, env={"PYTHONPATH": str(python_dir)})
        except (CommandFailed, ToolNotFound) as error:
            outcomes.append((python, False, error.message.splitlines()[0]))
            continue
        probe = json.loads(result.stdout.strip().splitlines()[-1])
        if probe["ok"]:
            outcomes.append((python, True, f"Python {probe['python']}: buffer round trip ok"))
        elif probe["stage"] == "import":
            builds = _pyxrt_builds(context)
            tags = sorted({m.group(1) for b in builds if (m := re.search(r"cpython-(\d+)", b))})
            built_for = f"; pyxrt here is built for cpython-{', '.join(tags)}" if tags else ""
            outcomes.append(
                (
                    python,
                    False,
                    f"Python {probe['python']}: no pyxrt binding for "
                    f"this interpreter ({probe['error']}){built_for}",
                )
            )
        else:
            outcomes.append(
                (python, False, f"Python {probe['python']}: {probe['stage']}: {probe['error']}")
            )
    gate.evidence.extend(f"{python}: {text}" for python, _, text in outcomes)
    if all(ok for _, ok, _ in outcomes):
        return gate.passed("; ".join(text for _, _, text in outcomes))
    return gate.failed(
        "; ".join(text for _, ok, text in outcomes if not ok),
        *diagnose("\n".join(text for _, _, text in outcomes)),
    )


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
        blocked = [d for d in DEPENDS[name] if d in wanted and results[d].status != "pass"]
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
