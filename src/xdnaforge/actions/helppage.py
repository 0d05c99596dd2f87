"""The help page of each command (`doit TASK --help`, `xdnaforge TASK --help`, the man page):
what it does, its options, two examples, its exit codes and the doc page to read.

Pure: the text is made from the task's own doc line and option definitions (dodo.py's params),
so the page cannot drift from what the command accepts; the examples and exit codes are here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DOCS = "docs/tasks.md"


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """What a command's page says besides its options."""

    examples: tuple[str, str]
    codes: tuple[tuple[int, str], ...]


FAILED = (1, "a stage failed (the message says which and what to do)")
CONFIG = (3, "bad configuration, an unknown target or a missing tool (nothing was run)")
PREVIEW = (0, "done, or without --yes: the commands it would run were printed (a preview)")
STOPPED = (130, "stopped by Ctrl-C (143: by SIGTERM); the same command resumes")
DONE = (0, "done")

_BUILDING = (DONE, FAILED, CONFIG, STOPPED)
_CHANGING = (PREVIEW, FAILED, CONFIG, STOPPED)
_READING = (DONE, FAILED, CONFIG)

USAGE: dict[str, Usage] = {
    "check": Usage(
        examples=("check", "check  # after editing recipes/ubuntu26-compat.yaml"),
        codes=((0, "every file is valid"), (3, "problems, each as file:line:col with a hint")),
    ),
    "plan": Usage(
        examples=("plan", "plan --target ubuntu26-compat"),
        codes=((0, "the plan was printed; nothing changed"), CONFIG),
    ),
    "fetch": Usage(
        examples=("fetch --target ubuntu26-compat", "fetch --target upstream-main --stop-stale"),
        codes=_BUILDING,
    ),
    "patch": Usage(
        examples=("patch --target ubuntu26-compat", "patch -t xdna-2.21.75"),
        codes=_BUILDING,
    ),
    "prove": Usage(
        examples=(
            "prove --target ubuntu26-compat",
            "prove --target ubuntu26-compat --env-root /srv/forky --env-name 'forky twin' "
            "--cc gcc-15 --cxx g++-15",
        ),
        codes=((0, "every change proven or not needed"), FAILED, CONFIG, STOPPED),
    ),
    "survey": Usage(
        examples=("survey --target ubuntu26-compat", "survey -t upstream-main"),
        codes=_READING,
    ),
    "deps": Usage(
        examples=("deps --target ubuntu26-compat", "sudo deps -t ubuntu26-compat --yes"),
        codes=_CHANGING,
    ),
    "env": Usage(
        examples=(
            "env --target ubuntu26-compat",
            "sudo env --target ubuntu26-compat --refresh --yes",
        ),
        codes=_CHANGING,
    ),
    "build": Usage(
        examples=("build --target ubuntu26-compat", "build -t upstream-main --stop-stale"),
        codes=_BUILDING,
    ),
    "rebuild-check": Usage(
        examples=("rebuild-check --target ubuntu26-compat", "rebuild-check -t xdna-1.9"),
        codes=(
            (0, "both builds were compared (the record says whether they match)"),
            *_BUILDING[1:],
        ),
    ),
    "audit": Usage(
        examples=(
            "audit --target ubuntu26-compat",
            "audit --deb a.deb --deb b.deb --json v.json",
        ),
        codes=((0, "every package passes"), (1, "a package is blocked (findings shown)"), CONFIG),
    ),
    "install": Usage(
        examples=(
            "install --target ubuntu26-compat",
            "sudo install --target ubuntu26-compat --yes",
        ),
        codes=_CHANGING,
    ),
    "rollback": Usage(
        examples=("rollback --target ubuntu26-compat", "sudo rollback --yes"),
        codes=_CHANGING,
    ),
    "memlock": Usage(
        examples=("memlock", "sudo memlock --yes"),
        codes=_CHANGING,
    ),
    "validate": Usage(
        examples=("validate", "validate --target ubuntu26-compat"),
        codes=((0, "every gate passed or was skipped with its reason"), FAILED, CONFIG),
    ),
    "pyxrt": Usage(
        examples=(
            "pyxrt --python ~/venv/bin/python",
            "sudo pyxrt --python /usr/bin/python3.12 --yes",
        ),
        codes=_CHANGING,
    ),
    "doctor": Usage(
        examples=("doctor", "doctor --log dmesg.txt --log xrt-smi.txt --json findings.json"),
        codes=((0, "healthy, or the diagnoses were printed"), FAILED, CONFIG),
    ),
    "compat": Usage(
        examples=("compat", "compat --target ubuntu26-compat --facts host.yaml --json out.json"),
        codes=((0, "a recipe fits"), (1, "no recipe fits this host"), CONFIG),
    ),
    "matrix": Usage(
        examples=("matrix", "matrix --matrix matrices/ubuntu26.yaml"),
        codes=(
            (0, "every cell behaved as the matrix expects"),
            (1, "NEWS: a cell did not behave as expected"),
            CONFIG,
            STOPPED,
        ),
    ),
    "kernel-check": Usage(
        examples=("kernel-check", "kernel-check --kernel 7.0.0-28-generic"),
        codes=((0, "the decision was printed (revalidate, or which recipe to build)"), CONFIG),
    ),
    "revalidate": Usage(
        examples=("revalidate", "revalidate --kernel 7.0.0-28-generic --root-validate v.json"),
        codes=_READING,
    ),
    "kernel-hook": Usage(
        examples=("kernel-hook", "sudo kernel-hook --install --yes"),
        codes=_CHANGING,
    ),
    "report": Usage(
        examples=("report", "report --target ubuntu26-compat"),
        codes=_READING,
    ),
    "publish": Usage(
        examples=("publish --target ubuntu26-compat", "publish -t ubuntu26-compat --snapshot s1"),
        codes=_READING,
    ),
    "lava-job": Usage(
        examples=(
            "lava-job --target ubuntu26-compat",
            "lava-job -t xdna-1.9 --device-type docker",
        ),
        codes=_READING,
    ),
    "lava-results": Usage(
        examples=("lava-results results.yaml", "lava-results --host lab-7 results.yaml"),
        codes=_READING,
    ),
    "fleet-report": Usage(
        examples=("fleet-report --from hostA/artifacts --from hostB/artifacts", "fleet-report a b"),
        codes=(
            (0, "every cell on every host behaved as the matrix expects"),
            (1, "NEWS: a cell on a host did not behave as expected (as in `doit matrix`)"),
            CONFIG,
        ),
    ),
    "ci-workflow": Usage(
        examples=("ci-workflow", "ci-workflow  # with fleet: in site.yaml"),
        codes=_READING,
    ),
    "track": Usage(
        examples=("track --line xdna-1.9", "track --line upstream-main --check"),
        codes=((0, "done (--check: the branch has not moved)"), (1, "--check: it moved"), CONFIG),
    ),
}


def anchor(task: str) -> str:
    """The task's section in docs/tasks.md (GitHub's heading anchors)."""
    return f"{DOCS}#{task}"


def _option_line(param: Mapping[str, Any]) -> str:
    long = str(param.get("long") or param["name"])
    short = f"-{param['short']}, " if param.get("short") else ""
    kind = param.get("type")
    value = "" if kind is bool else (" VALUE ..." if kind is list else " VALUE")
    default = param.get("default")
    shown = f" (default: {default})" if default not in ("", None, False, []) else ""
    repeat = " (repeatable)" if kind is list and "repeat" not in str(param.get("help")) else ""
    return f"  {short}--{long}{value}\n      {param.get('help', '')}{repeat}{shown}"


def _example(program: str, example: str) -> str:
    """`sudo deps ...` is run as root with the caller's environment (the venv's doit)."""
    if example.startswith("sudo "):
        where = ".venv/bin/doit" if program == "doit" else program
        return f"sudo -E {where} {example.removeprefix('sudo ')}"
    return f"{program} {example}"


def render(task: str, doc: str, params: Sequence[Mapping[str, Any]], program: str = "doit") -> str:
    """The page: a line of what it does, usage, options, examples, exit codes, the doc page."""
    usage = USAGE.get(task, Usage(examples=(task, f"{task} --help"), codes=_READING))
    shown = [p for p in params if p["name"] != "help"]
    lines = [f"{program} {task}: {doc.strip()}", "", "usage:", f"  {program} {task} [options]"]
    lines += ["", "options:"]
    lines += [_option_line(p) for p in shown]
    lines.append("  --help\n      this page")
    lines += ["", "examples:"] + [f"  {_example(program, e)}" for e in usage.examples]
    lines += ["", "exit codes:"] + [f"  {code:<3} {meaning}" for code, meaning in usage.codes]
    lines += ["", f"read more: {anchor(task)}"]
    return "\n".join(lines) + "\n"
