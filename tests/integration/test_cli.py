"""The `xdnaforge` command and every task's help page and exit codes, run as a user would:
the console script from a directory that is not the checkout, and `doit` in the checkout."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.integration.conftest import Outcome, run_doit
from tests.unit.test_host import make_sysroot

XDNAFORGE = Path(sys.executable).parent / "xdnaforge"
TASKS = (
    "check",
    "plan",
    "prove",
    "survey",
    "fetch",
    "patch",
    "deps",
    "env",
    "build",
    "rebuild-check",
    "audit",
    "install",
    "rollback",
    "memlock",
    "validate",
    "pyxrt",
    "doctor",
    "compat",
    "matrix",
    "kernel-check",
    "revalidate",
    "kernel-hook",
    "report",
    "publish",
    "lava-job",
    "lava-results",
    "fleet-report",
    "ci-workflow",
    "track",
)
# every task that acts on a target resolves it first: an unknown one is exit 3, nothing run
TARGETED = (
    "plan",
    "prove",
    "survey",
    "fetch",
    "patch",
    "deps",
    "env",
    "build",
    "rebuild-check",
    "audit",
    "install",
    "rollback",
    "validate",
    "compat",
    "report",
    "publish",
)


def xdnaforge(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Outcome:
    child_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "LC_ALL": "C.UTF-8",
        **(env or {}),
    }
    done = subprocess.run(
        [str(XDNAFORGE), *args],
        cwd=cwd,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Outcome(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A directory that is neither the checkout nor a project."""
    place = tmp_path / "elsewhere"
    place.mkdir()
    return place


def test_the_command_runs_the_tasks_from_any_directory_with_c(
    project_dir: Path, elsewhere: Path
) -> None:
    (project_dir / "site.yaml").write_text("jobs: 3\n")
    outcome = xdnaforge("-C", str(project_dir), "check", cwd=elsewhere)
    assert outcome.rc == 0, outcome.output
    assert "all valid" in outcome.stdout
    # it read the project given (its site.yaml), not the checkout's (which has none)
    assert "site: defaults" not in outcome.stdout
    assert "site: site.yaml" in outcome.stdout


def test_the_project_directory_comes_from_the_environment_or_the_current_directory(
    project_dir: Path, elsewhere: Path
) -> None:
    (project_dir / "recipes/ubuntu26-compat.yaml").write_text("name: [\n")
    by_env = xdnaforge("check", cwd=elsewhere, env={"XDNAFORGE_PROJECT_DIR": str(project_dir)})
    here = xdnaforge("check", cwd=project_dir)
    for outcome in (by_env, here):
        assert outcome.rc == 3, outcome.output
        assert "recipes/ubuntu26-compat.yaml:" in outcome.stderr


def test_a_directory_that_is_no_project_is_one_line_and_exit_3(elsewhere: Path) -> None:
    outcome = xdnaforge("-C", str(elsewhere), "plan", cwd=elsewhere)
    assert outcome.rc == 3
    assert outcome.stderr.strip().count("\n") == 0
    assert "is not an xdnaforge project (no recipes/ in it)" in outcome.stderr


def test_without_a_task_it_lists_the_tasks_with_their_doc_line(elsewhere: Path) -> None:
    outcome = xdnaforge(cwd=elsewhere)
    assert outcome.rc == 0, outcome.output
    block = outcome.stdout.split("tasks:\n")[1].split("\n\n")[0]
    listed = [line.split()[0] for line in block.splitlines()]
    assert sorted(listed) == sorted(TASKS)


@pytest.mark.parametrize("task", TASKS)
def test_every_task_help_has_options_two_examples_exit_codes_and_its_doc_page(
    task: str, elsewhere: Path
) -> None:
    outcome = xdnaforge(task, "--help", cwd=elsewhere)
    assert outcome.rc == 0, outcome.output
    page = outcome.stdout
    assert page.startswith(f"xdnaforge {task}: ")
    examples = page.split("examples:\n")[1].split("\n\n")[0].splitlines()
    assert len(examples) == 2
    assert all(re.match(rf"  (sudo -E )?xdnaforge {task}\b", line) for line in examples)
    codes = page.split("exit codes:\n")[1].split("\n\n")[0].splitlines()
    assert any(line.split()[0] == "0" for line in codes)
    assert any(line.split()[0] == "3" for line in codes)
    doc = page.split("read more: ")[1].strip()
    assert doc == f"docs/tasks.md#{task}"
    assert f"\n## {task}\n" in (REPO / "docs/tasks.md").read_text()
    assert "--help" in page.split("options:\n")[1]
    # nothing was started: a page, not the task
    assert f".  {task}" not in outcome.output


def test_doit_task_help_is_the_same_page_under_doit_s_name(project_dir: Path) -> None:
    outcome = run_doit(project_dir, "build", "--help")
    assert outcome.rc == 0, outcome.output
    assert outcome.stdout.startswith("doit build: Fetch, patch")
    assert "  -t, --target VALUE" in outcome.stdout
    assert "  doit build --target ubuntu26-compat" in outcome.stdout
    assert "not recognized" not in outcome.output


def test_a_task_s_options_on_its_page_are_the_ones_it_accepts(project_dir: Path) -> None:
    page = run_doit(project_dir, "install", "--help").stdout
    options = re.findall(r"^  (?:-\w, )?--([\w-]+)", page, re.MULTILINE)
    assert options == ["target", "yes", "root", "help"]


@pytest.mark.parametrize("verb", ["dumpdb", "info", "strace", "forget", "reset-dep", "clean"])
def test_doit_verbs_that_do_not_apply_refuse_in_one_line(
    verb: str, project_dir: Path, elsewhere: Path
) -> None:
    for outcome, program in (
        (run_doit(project_dir, verb, "build"), "doit"),
        (xdnaforge("-C", str(project_dir), verb, cwd=elsewhere), "xdnaforge"),
    ):
        assert outcome.rc == 3, outcome.output
        assert outcome.stdout == ""
        lines = outcome.stderr.splitlines()
        assert len(lines) == 1
        assert lines[0].startswith(f"{program} {verb}: not used by xdnaforge; ")
        assert "Traceback" not in outcome.output


@pytest.mark.parametrize("task", TARGETED)
def test_an_unknown_target_is_exit_3_in_one_message(task: str, project_dir: Path) -> None:
    outcome = run_doit(project_dir, task, "--target", "nope")
    assert outcome.rc == 3, outcome.output
    assert "TaskFailed" not in outcome.output
    assert "taskid" not in outcome.output
    assert "nope" in outcome.stderr
    assert re.search(r"\{'|<class |\(\[", outcome.output) is None  # no Python repr


def test_an_unknown_task_option_is_exit_3(project_dir: Path) -> None:
    outcome = run_doit(project_dir, "build", "--tagret", "ubuntu26-compat")
    assert outcome.rc == 3
    assert "Traceback" not in outcome.output
    assert outcome.stderr == (
        "ERROR: doit build: unknown option --tagret; its options: --target, --stop-stale, "
        "--help (`doit build --help` lists them)\n"
    )
    typed = run_doit(project_dir, "prove", "--timeout", "soon")
    assert typed.rc == 3
    assert typed.stderr == "ERROR: option --timeout takes a whole number, got 'soon'\n"


@pytest.mark.parametrize(
    ("task", "args"),
    [
        ("memlock", ()),
        ("kernel-hook", ("--install",)),
    ],
)
def test_a_preview_without_yes_exits_0_and_changes_nothing(
    task: str, args: tuple[str, ...], project_dir: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outcome = run_doit(project_dir, task, *args, "--root", str(root))
    assert outcome.rc == 0, outcome.output
    assert "rerun with --yes" in outcome.output
    assert list(root.rglob("*")) == []


def test_a_failed_stage_is_exit_1_said_once_without_doit_s_frame(project_dir: Path) -> None:
    # the target's packages were never built: its audit has nothing to read
    outcome = run_doit(project_dir, "audit", "--target", "ubuntu26-compat")
    assert outcome.rc == 1, outcome.output
    assert "TaskFailed" not in outcome.output
    assert "taskid" not in outcome.output


def test_plan_prints_and_exits_0_on_a_matching_host(project_dir: Path) -> None:
    make_sysroot(project_dir / "sysroot")
    assert run_doit(project_dir, "plan").rc == 0


def test_completion_scripts_complete_tasks_and_targets(project_dir: Path, elsewhere: Path) -> None:
    tasks = xdnaforge("__complete", "tasks", cwd=elsewhere).stdout.split()
    assert set(TASKS) <= set(tasks)
    targets = xdnaforge("-C", str(project_dir), "__complete", "targets", cwd=elsewhere)
    assert "ubuntu26-compat" in targets.stdout.split()
    options = xdnaforge("__complete", "options", "install", cwd=elsewhere).stdout.split()
    assert options == ["--target", "-t", "--yes", "--root", "--help"]
    # bash itself completes with the shipped script: `xdnaforge bu<TAB>` and `--target u<TAB>`
    script = REPO / "completions/xdnaforge.bash"
    shown = subprocess.run(
        [
            "bash",
            "-c",
            f"source {script}; "
            "COMP_WORDS=(xdnaforge bu); COMP_CWORD=1; _xdnaforge; echo ${COMPREPLY[@]}; "
            "COMP_WORDS=(xdnaforge build --target ubuntu26-c); COMP_CWORD=3; _xdnaforge; "
            "echo ${COMPREPLY[@]}",
        ],
        env={
            "PATH": f"{XDNAFORGE.parent}:{os.environ['PATH']}",
            "XDNAFORGE_PROJECT_DIR": str(project_dir),
            "HOME": str(elsewhere),
        },
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.splitlines()
    assert shown == ["build", "ubuntu26-compat"]


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("completions/xdnaforge.bash", ("completion", "bash")),
        ("completions/_xdnaforge", ("completion", "zsh")),
        ("man/xdnaforge.1", ("man",)),
    ],
)
def test_the_shipped_completion_and_man_page_are_what_the_command_makes(
    name: str, args: tuple[str, ...], elsewhere: Path
) -> None:
    made = xdnaforge(*args, cwd=elsewhere)
    assert made.rc == 0, made.output
    assert (REPO / name).read_text() == made.stdout, (
        f"{name} is stale: run `.venv/bin/python scripts/gen_cli_files.py`"
    )


def test_the_man_page_renders_every_task(elsewhere: Path, tmp_path: Path) -> None:
    page = tmp_path / "xdnaforge.1"
    page.write_text(xdnaforge("man", cwd=elsewhere).stdout)
    rendered = subprocess.run(
        ["man", "-l", "-P", "cat", str(page)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "MANWIDTH": "100"},
    )
    if rendered.returncode != 0 and "not found" in rendered.stderr:
        pytest.skip("man is not installed (package man-db)")
    for task in TASKS:
        assert f"\n   {task}\n" in rendered.stdout


def test_check_jsonschema_accepts_the_shipped_files_with_the_published_schemas(
    tmp_path: Path,
) -> None:
    tool = Path(sys.executable).parent / "check-jsonschema"
    for name, pattern in (("recipe", "recipes"), ("matrix", "matrices")):
        files = [str(p) for p in sorted((REPO / pattern).glob("*.yaml"))]
        schema = REPO / f"schemas/{name}.schema.json"
        done = subprocess.run(
            [str(tool), "--schemafile", str(schema), *files],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    # and it refuses what the loader refuses: an unknown key
    broken = tmp_path / "broken.yaml"
    broken.write_text((REPO / "recipes/ubuntu26-compat.yaml").read_text() + "patchs: []\n")
    refused = subprocess.run(
        [str(tool), "--schemafile", str(REPO / "schemas/recipe.schema.json"), str(broken)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert refused.returncode == 1
    assert "patchs" in refused.stdout


def test_doit_help_task_is_the_task_s_page(project_dir: Path) -> None:
    helped = run_doit(project_dir, "help", "rebuild-check")
    asked = run_doit(project_dir, "rebuild-check", "--help")
    assert helped.rc == 0, helped.output
    assert helped.stdout == asked.stdout
    assert "exit codes:" in helped.stdout
    # doit's own help still answers for its commands
    assert "PURPOSE\n    run tasks" in run_doit(project_dir, "help", "run").stdout
