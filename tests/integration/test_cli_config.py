"""`doit check`, `doit plan` and `doit list` as a user runs them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import DATA, REPO
from tests.debs import deb_bytes, xrt_base
from tests.integration.conftest import run_doit, tree
from tests.unit.test_host import make_sysroot


def test_check_passes_on_the_shipped_files(project_dir: Path) -> None:
    outcome = run_doit(project_dir, "check")
    assert outcome.rc == 0, outcome.output
    assert "all valid" in outcome.stdout


def test_doit_finds_its_backend_when_run_from_another_directory(
    project_dir: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outcome = run_doit(project_dir, "check", cwd=elsewhere)
    assert outcome.rc == 0, outcome.output  # was a TypeError traceback from doit, rc 3
    assert "all valid" in outcome.stdout
    assert list(elsewhere.iterdir()) == []


def test_check_names_all_four_mistakes_without_a_traceback(project_dir: Path) -> None:
    shutil.copy(DATA / "invalid/recipe-four-mistakes.yaml", project_dir / "recipes")
    outcome = run_doit(project_dir, "check")
    assert outcome.rc == 3
    assert "Traceback" not in outcome.output
    for expected in (
        "recipes/recipe-four-mistakes.yaml:16:3: source.commit: expected a full commit id",
        "recipes/recipe-four-mistakes.yaml:17:3: source.ref: expected a string, got a number",
        "recipes/recipe-four-mistakes.yaml:31:3: install.ordr: unknown key 'ordr' (did you mean",
        "recipes/recipe-four-mistakes.yaml:35:1: validate: duplicate key 'validate'",
    ):
        assert expected in outcome.stderr
    assert "f0b7bd5" not in outcome.output


def test_plan_shows_pins_and_stages_and_writes_nothing(project_dir: Path) -> None:
    before = tree(project_dir)
    outcome = run_doit(project_dir, "plan", "--target", "ubuntu26-compat")
    assert outcome.rc == 0, outcome.output
    text = outcome.stdout
    assert "f0b7bd5fbc9d45892d050cb55701541350390b99" in text
    assert "xrt @ 021204355eeaa034ff69aae407ace2265adf047a" in text
    for stage in ("fetch", "patch", "deps", "build-xrt", "build-shim", "package", "audit"):
        assert f". {stage}" in text
    assert "input fingerprint: " in text
    assert tree(project_dir) == before


def test_plan_for_an_unknown_target_lists_the_known_ones(project_dir: Path) -> None:
    outcome = run_doit(project_dir, "plan", "--target", "nope")
    assert outcome.rc == 3  # an unknown target is bad configuration (README "Exit codes")
    assert "Traceback" not in outcome.output
    assert "unknown target 'nope'" in outcome.output
    assert (
        "targets: debian-forky-archive, ryzen-ai-ubuntu24, ubuntu26-archive, ubuntu26-compat, "
        "upstream-main, xdna-1.7, xdna-1.8, xdna-1.9, xdna-2.21.75" in outcome.output
    )


def test_plan_without_target_picks_the_supported_cell_for_this_host(project_dir: Path) -> None:
    make_sysroot(project_dir / "sysroot")
    outcome = run_doit(project_dir, "plan")
    assert outcome.rc == 0, outcome.output
    assert outcome.stdout.splitlines()[1].startswith("target ubuntu26-compat")
    assert "matrix cell ubuntu26-npu4: supported" in outcome.stdout


def test_plan_without_target_on_an_unknown_host_says_none_matches(project_dir: Path) -> None:
    make_sysroot(project_dir / "sysroot", revision="0x20")
    outcome = run_doit(project_dir, "plan")
    assert outcome.rc == 3  # no target given and none fits: nothing to act on
    assert "no supported matrix cell matches this host (ubuntu 26.04" in outcome.output
    assert "zimaos17-npu5" in outcome.output


def test_list_gives_each_task_a_one_line_help(project_dir: Path) -> None:
    outcome = run_doit(project_dir, "list")
    assert outcome.rc == 0, outcome.output
    lines = dict(line.split(None, 1) for line in outcome.stdout.splitlines() if line.strip())
    assert lines["check"].startswith("Validate every recipe")
    assert lines["plan"].startswith("Show a target's stages")


def test_loading_the_dodo_file_imports_no_stage_module(project_dir: Path) -> None:
    """Every command loads dodo.py: the stages' imports (GitPython, Jinja2 ...) wait until a
    command runs them (they were 85 ms of every command's start-up)."""
    probe = (
        "import runpy, sys; runpy.run_path(sys.argv[1]); "
        "print(sorted(m for m in ('git', 'jinja2', 'elftools', 'xdnaforge.tools.xrt_smi') "
        "if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(REPO / "dodo.py")],
        env={**os.environ, "XDNAFORGE_PROJECT_DIR": str(project_dir)},
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _laughs(levels: int) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [" + ",".join([f"*a{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_in_a_recipe_stops_every_command_with_its_line(
    project_dir: Path, tmp_path: Path
) -> None:
    (project_dir / "recipes/bomb.yaml").write_text(_laughs(9))  # 432 bytes
    deb = tmp_path / "x.deb"
    deb.write_bytes(b"")
    outcome = run_doit(project_dir, "audit", "--deb", str(deb))  # its timeout is the guard
    assert outcome.rc == 3
    assert "Traceback" not in outcome.output
    assert "recipes/bomb.yaml:1:" in outcome.output
    assert "aliases expand this document past 100000 values" in outcome.output


def test_configuration_links_that_leave_the_project_are_not_read_or_echoed(
    project_dir: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "credentials"
    secret.write_text("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI\n")
    (project_dir / "recipes/creds.yaml").symlink_to(secret)
    series = project_dir / "patches/ubuntu26/series"
    series.unlink()
    series.symlink_to(secret)
    outcome = run_doit(project_dir, "check")
    assert outcome.rc == 3
    assert "wJalrXUtnFEMI" not in outcome.output
    assert f"recipes/creds.yaml:1:1: is a link to {secret}, outside the project" in outcome.stderr
    assert "patches/ubuntu26/series:1:1: is a link to" in outcome.stderr


def test_a_broken_series_is_a_located_message(project_dir: Path) -> None:
    series = project_dir / "patches/ubuntu26/series"
    series.write_bytes(series.read_bytes() + b"\xff\xfe.patch\n")
    outcome = run_doit(project_dir, "check")
    assert outcome.rc == 3
    assert "Traceback" not in outcome.output
    assert "patches/ubuntu26/series:" in outcome.stderr
    assert "not UTF-8 text (byte 0xff)" in outcome.stderr
    series.unlink()
    series.mkdir()
    outcome = run_doit(project_dir, "check")
    assert outcome.rc == 3
    assert "patches/ubuntu26/series:1:1: not a regular file" in outcome.stderr


def test_audit_arguments_that_are_no_file_are_messages_not_tracebacks(
    project_dir: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    outcome = run_doit(project_dir, "audit", "--deb", str(fifo))  # it blocked forever
    assert outcome.rc == 1
    assert f"{fifo}: not a regular file" in outcome.output
    deb = tmp_path / "ok.deb"
    deb.write_bytes(deb_bytes(xrt_base()))
    for json_out in (str(tmp_path), "/proc/version"):
        outcome = run_doit(project_dir, "audit", "--deb", str(deb), "--json", json_out)
        assert outcome.rc == 1, json_out
        assert "Traceback" not in outcome.output
        assert f"cannot write --json {json_out}:" in outcome.output


def test_check_keeps_step_paths_inside_and_names_to_one_pattern(project_dir: Path) -> None:
    recipe = project_dir / "recipes/ubuntu26-compat.yaml"
    text = recipe.read_text()
    text = text.replace(
        "    - name: shim\n      cwd: build\n", "    - name: ../shim\n      cwd: ../../etc\n"
    )
    text = text.replace('["Release/xrt_plugin*-amdxdna.deb"]', '["/tmp/*.deb"]')
    recipe.write_text(text)
    matrix = next(project_dir.glob("matrices/*.yaml"))
    matrix.write_text(matrix.read_text().replace("- name: ubuntu26-npu4\n", "- name: ../../x\n", 1))
    outcome = run_doit(project_dir, "check")
    assert outcome.rc == 3
    assert "Traceback" not in outcome.output
    line = text.splitlines().index("    - name: ../shim") + 1
    for expected in (
        f"recipes/ubuntu26-compat.yaml:{line}:",
        "build.steps[1].name: is not a name",
        "build.steps[1].cwd: leaves the source tree",
        "build.steps[1].packages[0]: leaves the build tree",
        "cells[0].name: is not a name",
    ):
        assert expected in outcome.stderr, expected
    for value in ("../shim", "../../etc", "/tmp/*.deb", "../../x"):
        assert value not in outcome.output, value


def test_an_impossible_date_in_a_recipe_is_exit_3_with_its_line_in_every_command(
    project_dir: Path,
) -> None:
    recipe = project_dir / "recipes/ubuntu26-compat.yaml"
    text = recipe.read_text()
    assert "\ndescription: " in text
    recipe.write_text(text.replace("\ndescription: ", "\nreleased: 2024-02-30\ndescription: ", 1))
    line = recipe.read_text().splitlines().index("released: 2024-02-30") + 1
    for command in (("check",), ("plan", "--target", "ubuntu26-compat")):
        outcome = run_doit(project_dir, *command)
        assert outcome.rc == 3, command
        assert "Traceback" not in outcome.output
        assert (
            f"recipes/ubuntu26-compat.yaml:{line}:11: released: YAML reads this as a date or "
            "time, and no such date or time exists\n"
            "    hint: correct it, or quote it if it is text\n"
        ) in outcome.stderr


def test_a_hard_linked_recipe_is_refused_without_its_content(
    project_dir: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "credentials.yaml"
    secret.write_text("name: creds\ntoken: ghp_wJalrXUtnFEMI\n")
    os.link(secret, project_dir / "recipes/creds.yaml")  # a path check cannot see this
    outcome = run_doit(project_dir, "check")
    assert outcome.rc == 3
    assert "Traceback" not in outcome.output
    assert "wJalrXUtnFEMI" not in outcome.output
    assert (
        "recipes/creds.yaml:1:1: has 2 hard links, so it may be another file's content: "
        "not read; copy it instead of linking it\n"
    ) in outcome.stderr


def test_help_is_shown_though_the_configuration_is_broken(project_dir: Path) -> None:
    (project_dir / "site.yaml").write_text("targets: [\n")
    for args in (("build", "--help"), ("help", "validate")):
        outcome = run_doit(project_dir, *args)
        assert outcome.rc == 0, outcome.output
        assert "usage:" in outcome.stdout
        # the problems are said all the same, once, with their line
        assert outcome.stderr.count("site.yaml:2:1: YAML syntax error") == 1
    # what runs a task still stops on them, the default task too
    running: tuple[tuple[str, ...], ...] = (("build",), ())
    for task in running:
        outcome = run_doit(project_dir, *task)
        assert outcome.rc == 3
        assert "site.yaml:2:1" in outcome.output
        assert "Traceback" not in outcome.output
    cli = subprocess.run(
        [str(Path(sys.executable).parent / "xdnaforge"), "-C", str(project_dir), "build", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "XDNAFORGE_PROJECT_DIR": str(project_dir)},
    )
    assert cli.returncode == 0, cli.stderr
    assert "usage:" in cli.stdout
    assert cli.stderr.count("site.yaml:2:1") == 1
