"""`doit validate` and `doit doctor`: run the gates, record validation.json and the benchmark
history, and turn logs into causes and fixes."""

from __future__ import annotations

import dataclasses
import datetime
import json
from pathlib import Path
from typing import Any

from xdnaforge.config.project import Project
from xdnaforge.diagnosis.knowledge import Diagnosis
from xdnaforge.diagnosis.log_verdict import (
    FAILURE,
    HEALTHY,
    UNKNOWN,
    UNKNOWN_FAILURE,
    Verdict,
    scan_file,
)
from xdnaforge.diagnosis.readers import healthy_evidence
from xdnaforge.errors import StageFailed
from xdnaforge.hardware.gate_context import Context, Gate
from xdnaforge.hardware.gates import run_gates
from xdnaforge.hardware.npu_user import NpuUser, lookup, named_user, running_uid
from xdnaforge.planning.plan import Plan
from xdnaforge.stages.report import write_report
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_atomic, write_record

__all__ = ["doctor", "doctor_logs", "healthy_evidence", "validate"]

DOCTOR_GATES = ("host", "memlock", "device")


def _history_file(space: Workspace) -> Path:
    return space.records / "bench" / "history.jsonl"


def read_history(space: Workspace) -> list[dict[str, Any]]:
    path = _history_file(space)
    if not path.exists():
        return []
    entries = []
    for line in path.read_text().splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue  # a torn last line from a killed run loses one entry, not the history
    return entries


def append_history(space: Workspace, entry: dict[str, Any]) -> None:
    """One more line in the benchmark history (rewritten atomically, never torn)."""
    path = _history_file(space)
    lines = path.read_text() if path.exists() else ""
    write_atomic(path, lines + json.dumps(entry, sort_keys=True) + "\n")


def format_gate(gate: Gate) -> str:
    lines = [f"{gate.status.upper():4} {gate.name}: {gate.summary}"]
    lines.extend(format_diagnosis(d, indent="     ") for d in gate.diagnoses)
    return "\n".join(lines)


def format_diagnosis(diagnosis: Diagnosis, indent: str = "") -> str:
    family = f" ({diagnosis.family})" if diagnosis.family else ""
    lines = [f"[{diagnosis.severity}] {diagnosis.code}: {diagnosis.title}{family}"]
    lines.append(f"  seen:  {diagnosis.evidence}")
    if diagnosis.source:
        lines.append(f"  from:  {diagnosis.source}")
    if diagnosis.ioctl:
        lines.append(f"  ioctl: {diagnosis.ioctl}")
    if diagnosis.errno:
        lines.append(f"  errno: {diagnosis.errno}")
    lines += [f"  cause: {diagnosis.cause}", f"  fix:   {diagnosis.fix}"]
    if diagnosis.references:
        lines.append(f"  see:   {', '.join(diagnosis.references)}")
    return "\n".join(indent + line for line in lines)


def speaking_for(project: Project) -> tuple[NpuUser | None, str]:
    """The NPU's user to switch to for the user-level gates (only when running as root), and
    who xdnaforge runs as; warns when the gates would prove nothing for the user."""
    site = project.site
    uid = running_uid(site.sysroot)
    running_as = "root" if uid == 0 else f"uid {uid}"
    named = named_user(site.npu_user, site.artifacts_dir, site.sysroot)
    user = lookup(*named, site.sysroot) if named else None
    if uid == 0 and named and user is None:
        raise StageFailed(
            f"the NPU's user {named[0]} ({named[1]}) is not in {site.sysroot / 'etc/passwd'}",
            hint="name an existing user in site.yaml (npu_user: NAME)",
        )
    if uid != 0:
        if user is not None and user.uid != uid:
            print(
                f"warning: validating as {running_as}, not as the NPU's user "
                f"{user.describe()}: run `sudo doit validate` to check for them"
            )
        return None, running_as
    if user is None or user.uid == 0:
        print(
            "warning: validating as root: the memlock and device gates then prove nothing for "
            "the NPU's user (their memlock limit and group membership are not root's); name "
            "the user in site.yaml (npu_user: NAME) or validate as that user"
        )
        return None, running_as
    print(
        f"validating for the NPU's user {user.describe()}: memlock, device, examine and pyxrt "
        "run as them (runuser: PAM limits, supplementary groups); xrt-smi validate runs as "
        "root (it sets the power mode)"
    )
    return user, running_as


def validate(
    project: Project, plan: Plan, space: Workspace, root_report: Path | None = None
) -> None:
    """Run the recipe's gates; `root_report`: xrt-smi validate's report, made as root before
    (the boot unit runs xdnaforge as the NPU's user and only that tool as root)."""
    work = space.work / "validate"
    work.mkdir(parents=True, exist_ok=True)
    history = read_history(space)
    user, running_as = speaking_for(project)
    context = Context(
        project=project,
        plan=plan,
        work=work,
        history=[h.get("metrics", {}) for h in history],
        user=user,
        running_as=running_as,
        root_report=root_report,
    )
    gates = run_gates(context, plan.recipe.validation.gates)
    for gate in gates:
        print(format_gate(gate))
    failed = [g.name for g in gates if g.status == "fail"]
    verdict = "fail" if failed else "pass"
    lock = read_record(space.record("lock")) or {}
    install = read_record(space.record("install")) or {}
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    facts = context.facts
    host = {
        "distro": f"{facts.distro_id} {facts.distro_version}",
        "kernel": facts.kernel or "unknown",
        "npu": ", ".join(f"{n.pci} rev {n.revision} ({n.driver or 'unbound'})" for n in facts.npus),
        "cell": context.found.get("cell", "none"),
        "firmware": context.found.get("firmware") or "unknown",
        # inside a container the memlock and device gates saw the container's limits and nodes
        "container": facts.container.as_record() if facts.container else None,
    }
    metrics = [m for g in gates for m in g.metrics]
    write_record(
        space.record("validation"),
        "validation",
        {
            "target": plan.target,
            "time": now,
            "host": host,
            "verdict": verdict,
            "gates": [g.as_record() for g in gates],
            "lock_fingerprint": lock.get("fingerprints", {}).get("patch"),
            "installed": install.get("state", "not by xdnaforge"),
            "npu_user": user.name if user is not None else None,
        },
    )
    if metrics:
        entry = {
            "time": now,
            "kernel": host["kernel"],
            "firmware": host["firmware"],
            "host": host["npu"],
            "xrt": context.found.get("xrt_version"),
            "lock_fingerprint": lock.get("fingerprints", {}).get("patch"),
            "metrics": context.found.get("metrics", {}),
        }
        append_history(space, entry)
        write_record(
            space.record("bench"),
            "bench",
            {
                "target": plan.target,
                "latest_metrics": [m.as_record() for m in metrics],
                "history_entries": len(history) + 1,
            },
        )
    write_report(plan.target, space)
    if failed:
        raise StageFailed(
            f"validation of {plan.target} failed at: {', '.join(failed)}",
            hint=f"the diagnoses above say why; details in {space.record('validation')}",
        )
    print(f"validation of {plan.target}: every gate passed")


# the verdict scripts read from `doit doctor --json OUT` (the text output's last line says it)
VERDICTS = {
    FAILURE: "failures",
    UNKNOWN_FAILURE: "failures",
    HEALTHY: "healthy",
    UNKNOWN: "unknown",
}


def verdict_record(name: str, verdict: Verdict) -> dict[str, Any]:
    """One log's findings and verdict as `doit doctor --json` writes them."""
    return {
        "file": name,
        "verdict": VERDICTS[verdict.status],
        "status": verdict.status,
        "evidence": verdict.evidence,
        "findings": [d.as_record() for d in verdict.diagnoses],
        "unexplained": [
            {"line": u.line, "source": u.source.describe() if u.source else None}
            for u in verdict.unexplained
        ],
    }


def doctor_logs(files: list[str], json_out: str = "") -> None:
    """Diagnose saved logs or pasted xrt-smi output; unknown failures are said to be unknown.
    `json_out`: also write the findings and verdicts there (record kind `doctor`)."""
    worst = False
    records = []
    for name in files:
        path = Path(name)
        print(f"== {name}")
        try:
            verdict = scan_file(path)  # streamed: journals can be hundreds of MB
        except OSError as error:
            raise StageFailed(f"{name}: cannot read: {error.strerror}") from None
        worst |= _report(verdict)
        records.append(verdict_record(name, verdict))
    if json_out:
        _write_doctor_record(Path(json_out), records)
    if worst:
        raise StageFailed("known or unknown failures found (see above)")


def _write_doctor_record(path: Path, logs: list[dict[str, Any]]) -> None:
    verdicts = {log["verdict"] for log in logs}
    overall = next((v for v in ("failures", "unknown", "healthy") if v in verdicts), "unknown")
    try:
        write_record(path, "doctor", {"verdict": overall, "logs": logs})
    except OSError as error:
        raise StageFailed(f"{path}: cannot write: {error.strerror}") from None
    print(f"findings written to {path}")


def _report(verdict: Verdict) -> bool:
    """Print the verdict; True when something is failing (known or not)."""
    for diagnosis in verdict.diagnoses:
        print(format_diagnosis(diagnosis))
    for item in verdict.unexplained[:5]:
        print(f"[unknown] {item.describe()}")
    if len(verdict.unexplained) > 5:
        print(f"[unknown] ... and {len(verdict.unexplained) - 5} more unexplained line(s)")
    if verdict.status == HEALTHY:
        note = " (only notes above)" if verdict.diagnoses else ""
        print(f"healthy: {verdict.evidence}{note}")
    elif verdict.status == UNKNOWN:
        print("unknown: no known failure and no sign of a working stack in this log")
    elif verdict.status == UNKNOWN_FAILURE:
        print("unknown failure: error-level lines that no known failure explains (see above)")
    return verdict.failing


def without_recipe_limits(plan: Plan) -> Plan:
    """The plan with the general requirements (memlock unlimited) instead of a recipe's."""
    validation = dataclasses.replace(plan.recipe.validation, memlock_min_kib=None)
    recipe = dataclasses.replace(plan.recipe, validation=validation)
    return dataclasses.replace(plan, recipe=recipe)


def doctor(
    project: Project, plan: Plan, space: Workspace, *, unmatched: bool = False, json_out: str = ""
) -> None:
    """The gates that need no build, and the kernel log read for known signatures;
    `unmatched`: no matrix cell matches this host, which is a warning, not a pass;
    `json_out`: also write the gates' findings and the verdict there (record `doctor`)."""
    work = space.work / "doctor"
    work.mkdir(parents=True, exist_ok=True)
    user, running_as = speaking_for(project)
    context = Context(
        project=project, plan=plan, work=work, history=[], user=user, running_as=running_as
    )
    gates = run_gates(context, DOCTOR_GATES)
    for gate in gates:
        if gate.name == "host" and unmatched and gate.status == "pass":
            facts = context.facts.describe()
            print(
                f"WARN host: {facts}; no matrix cell matches this host (unverified "
                "combination); the checks below use the general requirements (memlock "
                "unlimited), no recipe's limits"
            )
        elif gate.name in DOCTOR_GATES:
            print(format_gate(gate))
    failed = [g.name for g in gates if g.status == "fail"]
    if json_out:
        body = {
            "verdict": "failures" if failed else "healthy",
            "gates": [g.as_record() for g in gates if g.name in DOCTOR_GATES],
            "findings": [d.as_record() for g in gates for d in g.diagnoses],
        }
        try:
            write_record(Path(json_out), "doctor", body)
        except OSError as error:
            raise StageFailed(f"{json_out}: cannot write: {error.strerror}") from None
        print(f"findings written to {json_out}")
    if failed:
        raise StageFailed(f"doctor found problems at: {', '.join(failed)}")
