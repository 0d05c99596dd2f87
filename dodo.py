"""xdnaforge tasks: build AMD NPU userspace from pinned recipes, audit, install, validate.

Thin on purpose: load the project once, turn planned stages into doit tasks.
Run `doit list` for the tasks and `doit help <task>` for their options.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from doit.exceptions import InvalidDodoFile

from xdnaforge import steps, tasks
from xdnaforge.errors import ConfigError
from xdnaforge.project import load_project

ROOT = Path(__file__).resolve().parent

try:
    PROJECT = load_project(Path(os.environ.get("XDNAFORGE_PROJECT_DIR", ROOT)), os.environ)
except ConfigError as error:
    # doit prints "ERROR: <message>" without a traceback and exits 3
    raise InvalidDodoFile(str(error)) from None

DOIT_CONFIG = {
    "default_tasks": ["check"],
    "dep_file": str(PROJECT.site.build_dir / ".doit.db"),
    "backend": "xdnaforge-json",
    "verbosity": 2,
    "action_string_formatting": "new",
}

TARGET = {
    "name": "target",
    "short": "t",
    "long": "target",
    "type": str,
    "default": "",
    "help": "recipe to act on (default: the supported matrix cell matching this host)",
}
YES = {
    "name": "yes",
    "long": "yes",
    "type": bool,
    "default": False,
    "help": "run the system changes shown (same as XDNAFORGE_ALLOW_SYSTEM_CHANGES=1)",
}


def task_check() -> dict[str, Any]:
    """Validate every recipe, matrix, patch series and site.yaml (all problems at once)."""
    return {"actions": [(steps.check, [PROJECT])], "uptodate": [False], "verbosity": 2}


def task_plan() -> dict[str, Any]:
    """Show a target's stages, pins, inputs, outputs and fingerprints; changes nothing."""
    return _with_target(steps.show_plan, PROJECT)


def task_fetch() -> dict[str, Any]:
    """Check out the pinned sources of a target (nested submodules too) and verify every pin."""
    return _stage("fetch")


def task_patch() -> dict[str, Any]:
    """Apply the target's patch series (fetching first if needed); reruns change nothing."""
    return _stage("patch")


def task_deps() -> dict[str, Any]:
    """Show the missing build dependencies and the command to install them (runs with --yes)."""
    task = _with_target(steps.deps, PROJECT)
    task["params"] = [TARGET, YES]
    return task


def task_build() -> dict[str, Any]:
    """Fetch, patch, check deps, build XRT and the shim (-nokmod), collect, audit, report."""
    return _stage("report")


def task_audit() -> dict[str, Any]:
    """Prove that .deb files carry no kernel payload: --deb FILE (repeatable) or --target T."""
    task = _with_target(steps.audit, PROJECT)
    task["params"] = [
        TARGET,
        {
            "name": "deb",
            "long": "deb",
            "type": list,
            "default": [],
            "help": "a .deb to audit (repeat for more); no target needed",
        },
        {
            "name": "json",
            "long": "json",
            "type": str,
            "default": "",
            "help": "with --deb: also write the verdicts as JSON to this file",
        },
    ]
    return task


ROOT_DIR = {
    "name": "root",
    "long": "root",
    "type": str,
    "default": "/",
    "help": "install into this root instead of / (dpkg --root; for images and tests)",
}


def task_install() -> dict[str, Any]:
    """Install the audited packages in recipe order (shows the commands; runs them with --yes)."""
    task = _with_target(steps.install, PROJECT)
    task["params"] = [TARGET, YES, ROOT_DIR]
    return task


def task_rollback() -> dict[str, Any]:
    """Restore the packages the last install replaced (shows the commands; runs with --yes)."""
    task = _with_target(steps.rollback, PROJECT)
    task["params"] = [TARGET, YES, ROOT_DIR]
    return task


def task_memlock() -> dict[str, Any]:
    """Show (and with --yes write) the limits.d and systemd drop-ins for an unlimited memlock."""
    return {
        "actions": [(steps.memlock, [])],
        "params": [YES, ROOT_DIR],
        "uptodate": [False],
        "verbosity": 2,
    }


def task_validate() -> dict[str, Any]:
    """Bottom-up hardware gates (host ... xrt-smi validate, pyxrt), figures and diagnoses."""
    return _with_target(steps.validate, PROJECT)


def task_doctor() -> dict[str, Any]:
    """Diagnose this host (no build needed) or a saved log: --log FILE (repeatable)."""
    task = _with_target(steps.doctor, PROJECT)
    task["params"] = [
        TARGET,
        {
            "name": "log",
            "long": "log",
            "type": list,
            "default": [],
            "help": "a saved kernel log, xrt-smi or build output to diagnose (repeatable)",
        },
    ]
    return task


def task_matrix() -> dict[str, Any]:
    """Build every matrix cell that changed, revalidate the ones for this host, print a table."""
    return {
        "actions": [(steps.matrix, [globals(), PROJECT])],
        "params": [
            {
                "name": "matrix",
                "long": "matrix",
                "type": str,
                "default": "",
                "help": "a matrix file (default: every file in matrices/)",
            }
        ],
        "uptodate": [False],
        "verbosity": 2,
    }


KERNEL = {
    "name": "kernel",
    "long": "kernel",
    "type": str,
    "default": "",
    "help": "judge this kernel release instead of the running one",
}


def task_kernel_check() -> dict[str, Any]:
    """After a kernel upgrade: say whether to revalidate only or to build another recipe."""
    return {
        "basename": "kernel-check",
        "actions": [(steps.kernel_check, [PROJECT])],
        "params": [KERNEL],
        "uptodate": [False],
        "verbosity": 2,
    }


def task_revalidate() -> dict[str, Any]:
    """First boot into a new kernel: kernel-check, validate if that is all, record the outcome."""
    return {
        "actions": [(steps.revalidate, [PROJECT])],
        "params": [KERNEL],
        "uptodate": [False],
        "verbosity": 2,
    }


def task_kernel_hook() -> dict[str, Any]:
    """Show, or with --install --yes install, the kernel hook and first-boot revalidation unit."""
    return {
        "basename": "kernel-hook",
        "actions": [(steps.kernel_hook, [str(ROOT)])],
        "params": [
            {
                "name": "install",
                "long": "install",
                "type": bool,
                "default": False,
                "help": "install the hook and the unit",
            },
            YES,
            ROOT_DIR,
        ],
        "uptodate": [False],
        "verbosity": 2,
    }


def task_report() -> dict[str, Any]:
    """Render BUILD_REPORT.md (and a JSON twin) from a target's records; builds nothing."""
    return _with_target(steps.report, PROJECT)


def task__stages() -> Any:
    yield from tasks.stage_tasks(PROJECT)


def _stage(stage: str) -> dict[str, Any]:
    return _with_target(steps.run_tasks, globals(), PROJECT, stage)


def _with_target(action: Any, *args: Any) -> dict[str, Any]:
    return {
        "actions": [(action, list(args))],
        "params": [TARGET],
        "uptodate": [False],
        "verbosity": 2,
    }
