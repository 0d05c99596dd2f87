"""`doit lava-job` checked with LAVA's own job schema (Debian's lava-common), the test
shell's `lava-test-case` lines run against a strict stand-in, and `doit lava-results`
reading a results export back into records."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO, missing_tool
from tests.integration.conftest import run_doit
from xdnaforge.config.fleet import FleetSettings
from xdnaforge.config.project import load_project
from xdnaforge.fleet import lava

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lava"
DIST_PACKAGES = "/usr/lib/python3/dist-packages"
SITE = """fleet:
  apt_url: https://lab.example/xdnaforge/apt
  results_url: https://lab.example/xdnaforge/results
  xdnaforge_url: https://git.lab.example/xdnaforge.git
  docker_image: ghcr.io/lab/zimaos-userspace:1.7
"""


@pytest.fixture(scope="module")
def lava_validate() -> Callable[[dict[str, Any]], None]:
    """lava_common.schemas.validate, from the venv or Debian's lava-common package."""
    try:
        schemas = importlib.import_module("lava_common.schemas")
    except ImportError:
        if not Path(DIST_PACKAGES, "lava_common").is_dir():
            missing_tool("lava_common", "which is not installed")
        # appended, not prepended: the venv's own packages keep precedence
        sys.path.append(DIST_PACKAGES)
        try:
            schemas = importlib.import_module("lava_common.schemas")
        except ImportError as error:
            missing_tool("lava_common", f"which is installed but does not import here: {error}")
    validate: Callable[[dict[str, Any]], None] = schemas.validate
    return validate


def jobs(project: Path, device_type: str) -> dict[str, dict[str, Any]]:
    out = project / "artifacts/lava"
    return {
        path.name.split(".")[0]: yaml.safe_load(path.read_text())
        for path in sorted(out.glob(f"*.{device_type}.yaml"))
    }


def test_a_job_per_cell_that_lavas_schema_accepts(
    project_dir: Path, lava_validate: Callable[[dict[str, Any]], None]
) -> None:
    (project_dir / "site.yaml").write_text(SITE)
    outcome = run_doit(project_dir, "lava-job")
    assert outcome.rc == 0, outcome.output
    rendered = jobs(project_dir, "ssh")
    assert set(rendered) == {
        "ubuntu26-npu4",
        "ubuntu26-npu4-upstream-main",
        "zimaos17-npu5",
        "ubuntu24-npu4-ryzen-ai",
        "debian-forky-npu4-archive",
        "ubuntu26-npu4-archive",
        "ubuntu24-npu1-ryzen-ai",
        "ubuntu24-npu6-ryzen-ai",
        "zimaos17-npu5-xdna-1-7",
        "ubuntu26-npu4-xdna-1-8",
        "ubuntu26-npu4-xdna-1-9",
    }
    assert rendered["debian-forky-npu4-archive"]["tags"] == ["npu4", "debian-forky"]
    for job in rendered.values():
        lava_validate(job)
        assert job["device_type"] == "ssh"
        assert [next(iter(a)) for a in job["actions"]] == ["deploy", "boot", "test"]
    assert rendered["ubuntu26-npu4"]["tags"] == ["npu4", "ubuntu-26.04"]
    assert rendered["zimaos17-npu5"]["tags"] == ["npu5", "zimaos-1.7"]
    assert rendered["ubuntu24-npu1-ryzen-ai"]["tags"] == ["npu1", "ubuntu-24.04"]
    assert rendered["ubuntu24-npu6-ryzen-ai"]["tags"] == ["npu6", "ubuntu-24.04"]
    # tags never name the kernel: it changes under the device and gate 1 checks it
    assert not any("7.0" in tag for job in rendered.values() for tag in job["tags"])
    steps = rendered["ubuntu26-npu4"]["actions"][2]["test"]["definitions"][0]["repository"]
    text = "\n".join(steps["run"]["steps"])
    assert (
        "https://lab.example/xdnaforge/apt/ubuntu26-compat/xdnaforge-ubuntu26-compat.pref" in text
    )
    assert "doit validate --target ubuntu26-compat" in text
    assert (
        "https://lab.example/xdnaforge/results/$(hostname)/ubuntu26-compat/validation.json" in text
    )
    assert steps["run"]["steps"][-1].startswith("(apt-get purge -y -q xrt-base xrt-npu")
    # the validator bites: a job LAVA would reject is rejected here too
    broken = dict(rendered["ubuntu26-npu4"], tags="npu4")
    with pytest.raises(Exception, match="tags"):
        lava_validate(broken)


def test_docker_jobs_and_the_device_dictionary(
    project_dir: Path, lava_validate: Callable[[dict[str, Any]], None]
) -> None:
    (project_dir / "site.yaml").write_text(SITE)
    outcome = run_doit(
        project_dir, "lava-job", "--target", "xdna-2.21.75", "--device-type", "docker"
    )
    assert outcome.rc == 0, outcome.output
    rendered = jobs(project_dir, "docker")
    assert set(rendered) == {"zimaos17-npu5"}
    job = rendered["zimaos17-npu5"]
    lava_validate(job)
    assert job["actions"][0]["deploy"]["image"] == "ghcr.io/lab/zimaos-userspace:1.7"
    device = (project_dir / "artifacts/lava/devices/zimaos17-npu5.jinja2").read_text()
    assert "{% extends 'docker.jinja2' %}" in device
    assert '{% set docker_devices = ["/dev/accel/accel0"] %}' in device
    assert '"--ulimit=memlock=-1:-1"' in device


def test_a_job_without_the_lab_settings_names_them(project_dir: Path) -> None:
    outcome = run_doit(project_dir, "lava-job", "--device-type", "docker")
    assert outcome.rc == 3  # site.yaml lacks what the job needs: bad configuration
    assert "fleet.apt_url, fleet.results_url, fleet.xdnaforge_url, fleet.docker_image" in (
        outcome.output
    )
    assert not (project_dir / "artifacts/lava").exists()


def test_test_shell_reports_each_gate_and_figure(tmp_path: Path) -> None:
    """The lines the job runs, run by sh against a lava-test-case that records its argv."""
    record = {
        "gates": [
            {"name": "host", "status": "pass", "metrics": []},
            {
                "name": "validate",
                "status": "fail",
                "metrics": [
                    {
                        "name": "gemm_tops",
                        "value": 40.5,
                        "unit": "TOPS",
                        "verdict": "below threshold",
                    },
                    {"name": "throughput_ops", "value": 80547.0, "unit": "op/s", "verdict": "ok"},
                ],
            },
            {"name": "pyxrt", "status": "skip", "metrics": []},
        ]
    }
    (tmp_path / "validation.json").write_text(json.dumps(record))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "lava-test-case"
    fake.write_text(f'#!/bin/sh\nprintf "%s|" "$@" >> {tmp_path}/calls\necho >> {tmp_path}/calls\n')
    fake.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHONPATH": str(REPO / "src")}
    cases = subprocess.run(
        [sys.executable, "-m", "xdnaforge.fleet.lava_cases", str(tmp_path / "validation.json")],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    subprocess.run(["sh", "-c", cases], env=env, check=True)
    assert (tmp_path / "calls").read_text().splitlines() == [
        "host|--result|pass|",
        "validate|--result|fail|",
        "gemm_tops|--result|fail|--measurement|40.5|--units|TOPS|",
        "throughput_ops|--result|pass|--measurement|80547.0|--units|op/s|",
        "pyxrt|--result|skip|",
    ]


def test_results_export_becomes_the_cells_validation_record(project_dir: Path) -> None:
    outcome = run_doit(
        project_dir, "lava-results", "--host", "lab-a", str(FIXTURES / "results-ubuntu26-npu4.yaml")
    )
    assert outcome.rc == 0, outcome.output
    records = project_dir / "artifacts/fleet/lab-a/ubuntu26-compat"
    validation = json.loads((records / "validation.json").read_text())
    assert validation["kind"] == "validation"
    assert validation["verdict"] == "pass"
    assert validation["host"]["cell"] == "ubuntu26-npu4"
    assert {g["name"]: g["status"] for g in validation["gates"]} == {
        "host": "pass",
        "memlock": "pass",
        "device": "pass",
        "runtime": "pass",
        "examine": "pass",
        "validate": "pass",
        "pyxrt": "skip",
    }
    figures = {
        m["name"]: (m["value"], m["verdict"]) for g in validation["gates"] for m in g["metrics"]
    }
    assert figures == {
        "gemm_tops": (51.0, "ok"),
        "latency_us": (46.0, "ok"),
        "throughput_ops": (80547.0, "ok"),
    }
    assert validation["lava"]["steps"]["rollback"] == "pass"
    history = (records / "bench/history.jsonl").read_text().splitlines()
    assert json.loads(history[0])["metrics"]["gemm_tops"] == 51.0
    assert json.loads(history[0])["source"] == "LAVA job 4711"


def test_a_failed_gate_in_lava_fails_the_record(project_dir: Path, tmp_path: Path) -> None:
    cases = yaml.safe_load((FIXTURES / "results-ubuntu26-npu4.yaml").read_text())
    for case in cases:
        if case["name"] == "validate":
            case["result"] = "fail"
        if case["name"] == "gemm_tops":
            case["measurement"] = "30.1000000000"
    export = tmp_path / "results.yaml"
    export.write_text(yaml.safe_dump(cases))
    assert run_doit(project_dir, "lava-results", str(export)).rc == 0
    validation = json.loads(
        (project_dir / "artifacts/fleet/lava-job-4711/ubuntu26-compat/validation.json").read_text()
    )
    assert validation["verdict"] == "fail"
    assert validation["lava"]["failed"] == ["validate"]
    gemm = next(m for g in validation["gates"] for m in g["metrics"] if m["name"] == "gemm_tops")
    assert gemm["verdict"] == "below threshold"


def test_a_file_that_is_not_a_results_export_is_refused(project_dir: Path, tmp_path: Path) -> None:
    export = tmp_path / "results.yaml"
    export.write_text("- name: host\n  suite: 1_xdnaforge-ubuntu26-npu4\n  result: maybe\n")
    outcome = run_doit(project_dir, "lava-results", str(export))
    assert outcome.rc == 1
    assert f"{export}:1: entry 0 (host): result 'maybe' is not one of pass, fail" in outcome.output


def test_every_failure_is_reported_and_the_rollback_still_runs(tmp_path: Path) -> None:
    """LAVA runs the steps as one `set -e` script: with every tool failing, each step still
    reports its case and the last one, the rollback, is reached."""
    steps = lava.definition_steps(
        load_project(REPO, {}).recipes["ubuntu26-compat"],
        FleetSettings(
            signing_key=None,
            gnupg_home=None,
            apt_url="http://127.0.0.1:9/apt",
            results_url="http://127.0.0.1:9/results",
            xdnaforge_url="file:///nowhere",
            docker_image=None,
        ),
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # every program the steps name fails (and touches nothing); lava-test-case records
    for tool in (
        "mkdir",
        "rm",
        "dpkg-query",
        "dpkg-repack",
        "dpkg",
        "curl",
        "apt-get",
        "git",
        "python3",
        "ls",
        "hostname",
    ):
        (bin_dir / tool).write_text("#!/bin/sh\nexit 1\n")
        (bin_dir / tool).chmod(0o755)
    (bin_dir / "lava-test-case").write_text(f'#!/bin/sh\necho "$1 $3" >> {tmp_path}/cases\n')
    (bin_dir / "lava-test-case").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        ["/bin/sh", "-e", "-c", "\n".join(steps)],
        cwd=work,
        env={"PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "cases").read_text().splitlines() == [
        "install fail",
        "setup fail",
        "validation-record fail",
        "push-records fail",
        "rollback fail",
    ]


def test_a_figure_below_its_threshold_fails_the_gate_lava_passed(
    project_dir: Path, tmp_path: Path
) -> None:
    # LAVA says validate passed; the figure it measured is below the recipe's floor
    cases = yaml.safe_load((FIXTURES / "results-ubuntu26-npu4.yaml").read_text())
    for case in cases:
        if case["name"] == "gemm_tops":
            case["measurement"] = "38.5000000000"
    export = tmp_path / "results.yaml"
    export.write_text(yaml.safe_dump(cases))
    assert run_doit(project_dir, "lava-results", str(export)).rc == 0
    validation = json.loads(
        (project_dir / "artifacts/fleet/lava-job-4711/ubuntu26-compat/validation.json").read_text()
    )
    gate = next(g for g in validation["gates"] if g["name"] == "validate")
    assert gate["status"] == "fail"
    assert "gemm_tops 38.5 TOPS below threshold 45" in gate["summary"]
    assert validation["verdict"] == "fail"
