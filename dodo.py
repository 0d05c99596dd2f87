"""xdnaforge tasks: build AMD NPU userspace from pinned recipes, audit, install, validate.

Thin on purpose: load the project once, turn planned stages into doit tasks.
Run `doit list` for the tasks and `doit help <task>` for their options.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from doit.exceptions import InvalidDodoFile

from xdnaforge.actions import command, env, fleet, hardware, pipeline
from xdnaforge.actions.reporter import Reporter
from xdnaforge.cli.main import HELP_ONLY_ENV, asks_help
from xdnaforge.config.project import load_project
from xdnaforge.errors import ConfigError

ROOT = Path(__file__).resolve().parent


PROJECT: Any
try:
    PROJECT = load_project(Path(os.environ.get("XDNAFORGE_PROJECT_DIR", ROOT)), os.environ)
except ConfigError as error:
    under_cli = os.environ.get(HELP_ONLY_ENV) == "1"  # xdnaforge said the problems already
    # (doit alone runs the default task, `check`: it says the problems, not help)
    if not under_cli and not asks_help(sys.argv[1:], bare_is_help=False):
        # doit prints "ERROR: <message>" without a traceback and exits 3
        raise InvalidDodoFile(str(error)) from None
    if not under_cli:
        sys.stderr.write(f"{error}\n")
    # the help pages of a project whose configuration is broken, after its problems: no
    # action runs (actions/command.py prints the page), so no task needs the project
    PROJECT = None

DOIT_CONFIG = {
    "default_tasks": ["check"],
    "dep_file": str((PROJECT.site.build_dir if PROJECT else ROOT / "build") / ".doit.db"),
    "backend": "xdnaforge-json",
    "verbosity": 2,
    "action_string_formatting": "new",
    # failures said once, as our messages: no `TaskFailed - taskid:` frame (actions/reporter.py)
    "reporter": Reporter,
}


def _option(name: str, kind: type, default: Any, help_text: str) -> dict[str, Any]:
    """A command-line option of a task (`--name`)."""
    return {"name": name, "long": name, "type": kind, "default": default, "help": help_text}


TARGET = {
    **_option(
        "target",
        str,
        "",
        "recipe to act on (default: the supported matrix cell matching this host)",
    ),
    "short": "t",
}
YES = _option(
    "yes", bool, False, "run the system changes shown (same as XDNAFORGE_ALLOW_SYSTEM_CHANGES=1)"
)
ROOT_DIR = _option(
    "root", str, "/", "install into this root instead of / (dpkg --root; for images and tests)"
)
KERNEL = _option("kernel", str, "", "judge this kernel release instead of the running one")
STOP_STALE = {
    **_option(
        "stop_stale",
        bool,
        False,
        "stop the processes a killed earlier run left behind in the build directory, then run",
    ),
    "long": "stop-stale",
}


def _task(
    action: Any,
    *args: Any,
    params: Sequence[dict[str, Any]] = (TARGET,),
    basename: str | None = None,
) -> dict[str, Any]:
    """A task that runs `action(*args, **options)` every time it is asked for."""
    task: dict[str, Any] = {
        # `doit TASK --help` prints the task's page (actions/command.py) instead of running it
        "actions": [(command.run_or_help, [action, list(args)])],
        "params": [*params, command.HELP],
        "uptodate": [False],
        "verbosity": 2,
    }
    if basename:
        task["basename"] = basename  # task names with a dash (function names cannot have one)
    return task


def _stage(stage: str) -> dict[str, Any]:
    return _task(pipeline.run_tasks, DOIT_CONFIG, PROJECT, stage, params=(TARGET, STOP_STALE))


def task_check() -> dict[str, Any]:
    """Validate every recipe, matrix, patch series and site.yaml (all problems at once)."""
    return _task(pipeline.check, PROJECT, params=())


def task_plan() -> dict[str, Any]:
    """Show a target's stages, pins, inputs, outputs and fingerprints; changes nothing."""
    return _task(pipeline.show_plan, PROJECT)


ENVIRONMENT = (
    {
        **_option(
            "env_root",
            str,
            "",
            "a root file system to run in with bwrap (default: the recipe's environment)",
        ),
        "long": "env-root",
    },
    {
        **_option("env_name", str, "", "what records call that environment (e.g. 'forky twin')"),
        "long": "env-name",
    },
    _option("cc", str, "", "the C compiler there (default gcc; a twin may need gcc-15)"),
    _option("cxx", str, "", "the C++ compiler there (default g++)"),
)


def task_prove() -> dict[str, Any]:
    """Prove each compatibility change: its proof fails without it and passes with it."""
    return _task(
        env.prove,
        PROJECT,
        params=(
            TARGET,
            *ENVIRONMENT,
            _option("timeout", int, 600, "seconds one proof run may take"),
        ),
    )


def task_survey() -> dict[str, Any]:
    """Read the fetched tree's CMake files: old minimums, -Werror, Boost, libraries to package."""
    return _task(env.survey, PROJECT, params=(TARGET, *ENVIRONMENT))


def task_fetch() -> dict[str, Any]:
    """Check out the pinned sources of a target (nested submodules too) and verify every pin."""
    return _stage("fetch")


def task_patch() -> dict[str, Any]:
    """Apply the target's patch series (fetching first if needed); reruns change nothing."""
    return _stage("patch")


def task_deps() -> dict[str, Any]:
    """Show the missing build dependencies and the command to install them (runs with --yes)."""
    return _task(pipeline.deps, PROJECT, params=(TARGET, YES))


def task_env() -> dict[str, Any]:
    """Create or update the target's build environment (build/envs/<distro>-<release>)."""
    return _task(
        env.env,
        PROJECT,
        params=(
            TARGET,
            _option(
                "refresh", bool, False, "make it anew from the archive (built beside, swapped)"
            ),
            YES,
        ),
    )


def task_build() -> dict[str, Any]:
    """Fetch, patch, check deps, build XRT and the shim (-nokmod), collect, audit, report."""
    return _stage("report")


BUILDINFO = _option(
    "buildinfo",
    str,
    "",
    "rebuild what this .buildinfo (a path or URL) describes and compare with its digests",
)


def task_rebuild_check() -> dict[str, Any]:
    """Build the target again in a fresh tree at another path; compare the packages."""
    return _task(
        pipeline.rebuild_check, PROJECT, params=(TARGET, BUILDINFO), basename="rebuild-check"
    )


def task_audit() -> dict[str, Any]:
    """Prove that .deb files carry no kernel payload: --deb FILE (repeatable) or --target T."""
    return _task(
        pipeline.audit,
        PROJECT,
        params=(
            TARGET,
            _option("deb", list, [], "a .deb to audit (repeat for more); no target needed"),
            _option("json", str, "", "with --deb: also write the verdicts as JSON to this file"),
        ),
    )


def task_install() -> dict[str, Any]:
    """Install the audited packages in recipe order (shows the commands; runs them with --yes)."""
    return _task(pipeline.install, PROJECT, params=(TARGET, YES, ROOT_DIR))


def task_rollback() -> dict[str, Any]:
    """Restore the packages the last install replaced (shows the commands; runs with --yes)."""
    return _task(pipeline.rollback, PROJECT, params=(TARGET, YES, ROOT_DIR))


def task_memlock() -> dict[str, Any]:
    """Show (and with --yes write) the limits.d and systemd drop-ins for an unlimited memlock."""
    return _task(pipeline.memlock, params=(YES, ROOT_DIR))


def task_validate() -> dict[str, Any]:
    """Bottom-up hardware gates (host ... xrt-smi validate, pyxrt), figures and diagnoses."""
    return _task(hardware.validate, PROJECT)


def task_pyxrt() -> dict[str, Any]:
    """Build pyxrt for --python PATH against the installed XRT; install it (system: --yes)."""
    return _task(
        hardware.pyxrt,
        PROJECT,
        params=(
            TARGET,
            _option("python", str, "", "the interpreter to build for (a venv's bin/python)"),
            _option(
                "source",
                str,
                "",
                "an XRT tree to take pyxrt.cpp from (default: the recipe's fetched tree, "
                "else the installed version's tag in XRT's mirror or object cache)",
            ),
            YES,
        ),
    )


def task_doctor() -> dict[str, Any]:
    """Diagnose this host (no build needed) or a saved log: --log FILE (repeatable)."""
    return _task(
        hardware.doctor,
        PROJECT,
        params=(
            TARGET,
            _option(
                "log",
                list,
                [],
                "a saved kernel log, xrt-smi or build output to diagnose (repeatable)",
            ),
            _option("json", str, "", "also write the findings and verdict to this JSON file"),
        ),
    )


def task_compat() -> dict[str, Any]:
    """Which firmware loads, whether it is accepted, which recipes fit, the fix (read-only)."""
    return _task(
        hardware.compat,
        PROJECT,
        params=(
            {**TARGET, "help": "judge only this recipe (default: every recipe)"},
            _option("facts", str, "", "judge the host a facts file describes (YAML) instead"),
            _option("json", str, "", "also write the verdict as JSON to this file"),
        ),
    )


def task_matrix() -> dict[str, Any]:
    """Build every matrix cell that changed, revalidate the ones for this host, print a table."""
    return _task(
        hardware.matrix,
        DOIT_CONFIG,
        PROJECT,
        params=(
            _option("matrix", str, "", "a matrix file (default: every file in matrices/)"),
            STOP_STALE,
        ),
    )


def task_kernel_check() -> dict[str, Any]:
    """After a kernel upgrade: say whether to revalidate only or to build another recipe."""
    return _task(hardware.kernel_check, PROJECT, params=(KERNEL,), basename="kernel-check")


def task_revalidate() -> dict[str, Any]:
    """First boot into a new kernel: kernel-check, validate if that is all, record the outcome."""
    return _task(
        hardware.revalidate,
        PROJECT,
        params=(
            KERNEL,
            {
                **_option(
                    "root_validate",
                    str,
                    "",
                    "the xrt-smi validate JSON report made as root (the boot unit does)",
                ),
                "long": "root-validate",
            },
        ),
    )


def task_kernel_hook() -> dict[str, Any]:
    """Show, or with --install --yes install, the kernel hook and first-boot revalidation unit."""
    return _task(
        hardware.kernel_hook,
        PROJECT,
        str(ROOT),
        basename="kernel-hook",
        params=(
            _option("install", bool, False, "install the hook and the unit"),
            YES,
            ROOT_DIR,
        ),
    )


def task_report() -> dict[str, Any]:
    """Render BUILD_REPORT.md (and a JSON twin) from a target's records; builds nothing."""
    return _task(pipeline.report, PROJECT)


def task_publish() -> dict[str, Any]:
    """Publish a target's audited packages to the site's APT repository (aptly snapshot)."""
    snapshot = _option("snapshot", str, "", "republish this earlier snapshot (fleet rollback)")
    return _task(fleet.publish, PROJECT, params=(TARGET, snapshot))


def task_lava_job() -> dict[str, Any]:
    """Write a LAVA job per matrix cell (ssh or docker device) into artifacts/lava/."""
    device = {
        **_option("device_type", str, "ssh", "LAVA device type: ssh (bare metal) or docker"),
        "long": "device-type",
    }
    return _task(fleet.lava_job, PROJECT, params=(TARGET, device), basename="lava-job")


def task_lava_results() -> dict[str, Any]:
    """Read LAVA's results export (YAML) into the cell's validation record and bench history."""
    host = _option("host", str, "", "the device's name (default: lava-job-<job id>)")
    task = _task(fleet.lava_results, PROJECT, params=(host,), basename="lava-results")
    return {**task, "pos_arg": "files"}  # doit lava-results FILE...


def task_fleet_report() -> dict[str, Any]:
    """Merge hosts' record directories into one cells x hosts report (Markdown, JSON, HTML)."""
    sources = {
        **_option("sources", list, [], "a host's records directory (repeatable)"),
        "long": "from",
    }
    task = _task(fleet.fleet_report_task, PROJECT, params=(sources,), basename="fleet-report")
    return {**task, "pos_arg": "dirs"}  # `--from A --from B` or `doit fleet-report A B`


def task_ci_workflow() -> dict[str, Any]:
    """Write a GitHub Actions workflow (build, publish, validate per cell, fleet report)."""
    return _task(fleet.ci_workflow, PROJECT, params=(), basename="ci-workflow")


def task_track() -> dict[str, Any]:
    """Write a candidate recipe for an upstream line (--check: exit 1 if its branch moved)."""
    return _task(
        pipeline.track,
        PROJECT,
        params=(
            _option("line", str, "", "the line's recipe name: recipes/<line>.yaml"),
            _option("branch", str, "", "the xdna-driver branch to read (default: source.track)"),
            _option("tag", str, "", "an xdna-driver tag to read instead"),
            _option("commit", str, "", "an xdna-driver commit (40 hex) to read instead"),
            _option(
                "check", bool, False, "change nothing; exit 1 if the branch moved past the pin"
            ),
            {
                **_option(
                    "start_from",
                    str,
                    "",
                    "the recipe to carry from (default: the line's own, else the nearest pin)",
                ),
                "long": "from",
            },
        ),
    )
