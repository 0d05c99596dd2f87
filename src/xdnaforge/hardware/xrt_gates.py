"""The gates that prove the installed XRT userspace: runtime (packages), `xrt-smi examine`,
`xrt-smi validate` (figures against thresholds and history) and pyxrt per interpreter.

Each takes the Context and its Gate and fills it; ordering and skipping are hardware/gates.py's.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from xdnaforge.diagnosis.classify import diagnose
from xdnaforge.diagnosis.knowledge import by_code
from xdnaforge.errors import ToolNotFound
from xdnaforge.hardware.bench import evaluate
from xdnaforge.hardware.gate_context import Context, Gate
from xdnaforge.hardware.host_checks import stale_library_path
from xdnaforge.hardware.package_check import check_packages, expected_packages
from xdnaforge.process.run import CommandFailed, CommandResult
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record
from xdnaforge.tools.dpkg import query_installed
from xdnaforge.tools.xrt_smi import (
    examine_argv,
    parse_examine_json,
    parse_examine_text,
    parse_validate_json,
    parse_validate_text,
    validate_argv,
)

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
    layout = context.xrt()
    gate.evidence.append(f"XRT layout: {layout.describe()}")
    problems = list(check.problems)
    where = layout.plugin_dir or layout.lib_dir
    libs = context.under_root(where)
    diagnoses = []
    if layout.plugin_dir is None or not list(libs.glob("libxrt_driver_xdna.so*")):
        problems.append(f"no libxrt_driver_xdna.so* in {where}")
        diagnoses.append(by_code("no-plugin", f"xdnaforge: no libxrt_driver_xdna.so* in {libs}"))
    stale = stale_library_path(os.environ.get("LD_LIBRARY_PATH", ""), str(layout.lib_dir))
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


def _validate_data(context: Context) -> list[Path]:
    """Where xrt-smi validate looks for its test data, those of them that hold any."""
    layout = context.xrt()
    places = [context.under_root(layout.archive_dir)]
    data_home = os.environ.get("XDG_DATA_HOME")
    places += [Path(data_home) / "xrt"] if data_home else []
    places.append(Path.home() / ".local/share/xrt")
    return [p for p in places if p.is_dir() and any(f.is_file() for f in p.rglob("*"))]


def gate_validate(context: Context, gate: Gate) -> Gate:
    layout = context.xrt()
    if context.root_report is None and layout.from_packages and not _validate_data(context):
        # a distro stack ships no test archives: xrt-smi would "skip" every test, which is
        # neither a pass nor the NPU's failure
        gate.status = "skip"
        gate.summary = (
            f"skipped: the installed XRT ({layout.source}) ships no xrt-smi validate test "
            f"data; xrt-smi looks for it in {layout.archive_dir} (xrt_smi_*.a archives, or "
            "the plugin's xclbins), then $XDG_DATA_HOME/xrt and ~/.local/share/xrt: put the "
            "plugin's archives there to run it"
        )
        gate.evidence.append(f"no files in {context.under_root(layout.archive_dir)}")
        return gate
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
    layout = context.xrt()
    if layout.python_dir is None:
        return []
    return sorted(p.name for p in context.under_root(layout.python_dir).glob("pyxrt*.so"))


STACK_OWN = "the stack's own pyxrt in"


def _recorded_bindings(context: Context) -> dict[str, dict[str, str]]:
    """The bindings `doit pyxrt` built for this target, by interpreter (pyxrt.json)."""
    site = context.project.site
    space = Workspace(context.plan.target, site.build_dir, site.artifacts_dir)
    record = read_record(space.record("pyxrt")) or {}
    return {str(b["python"]): b for b in record.get("bindings", []) if b.get("python")}


def _recorded_problem(python: str, binding: dict[str, str]) -> str | None:
    """Why the binding pyxrt.json names for `python` cannot be the one it imports."""
    path = Path(str(binding.get("binding", "")))
    if not binding.get("binding") or not path.is_file():
        return (
            f"the pyxrt `doit pyxrt` installed for this interpreter ({path}) is gone; "
            f"`doit pyxrt --python {python}` builds it again"
        )
    return None


def _changed(binding: dict[str, str]) -> str | None:
    """The binding's digest now, when it is not the one `doit pyxrt` recorded: not a failure
    by itself (the probe decides), but what imports is not what xdnaforge built."""
    digest = hashlib.sha256(Path(binding["binding"]).read_bytes()).hexdigest()
    return digest if digest != binding.get("sha256") else None


def gate_pyxrt(context: Context, gate: Gate) -> Gate:
    layout = context.xrt()
    python_dir = context.under_root(layout.python_dir or layout.bin_dir.parent / "python")
    recorded = _recorded_bindings(context)
    own = _pyxrt_builds(context)
    gate.evidence.append(f"{STACK_OWN} {python_dir}: {', '.join(own) or 'none'}")
    # the configured interpreters, then every one `doit pyxrt` built a binding for
    pythons = list(dict.fromkeys([*context.project.site.pythons, *recorded]))
    outcomes = []
    for python in pythons:
        binding = recorded.get(python)
        if binding is not None:
            gate.evidence.append(
                f"{python}: {binding.get('tag', '?')} binding from `doit pyxrt`: "
                f"{binding.get('binding')} (sha256 {str(binding.get('sha256'))[:12]}, "
                f"{binding.get('source', '?')})"
            )
            problem = _recorded_problem(python, binding)
            if problem is not None:
                outcomes.append((python, False, problem))
                continue
            now = _changed(binding)
            if now is not None:
                gate.evidence.append(
                    f"{python}: its binding changed since `doit pyxrt` installed it "
                    f"(sha256 {now[:12]} now)"
                )
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
                    f"this interpreter ({probe['error']}){built_for}; "
                    f"`doit pyxrt --python {python}` builds one",
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
