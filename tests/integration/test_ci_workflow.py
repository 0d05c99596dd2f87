"""`doit ci-workflow` checked offline against GitHub's workflow JSON schema (the copy
check-jsonschema vendors), and read for the jobs the fleet needs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.conftest import run_doit

CHECKER = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent)) or shutil.which(
    "check-jsonschema"
)
pytestmark = pytest.mark.skipif(
    CHECKER is None, reason="needs check-jsonschema (pip install -e '.[test]')"
)


def schema_check(path: Path) -> subprocess.CompletedProcess[str]:
    assert CHECKER is not None
    return subprocess.run(
        [CHECKER, "--builtin-schema", "vendor.github-workflows", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_workflow_is_valid_and_has_the_fleets_jobs(project_dir: Path, tmp_path: Path) -> None:
    (project_dir / "site.yaml").write_text("fleet:\n  apt_url: https://lab.example/apt\n")
    outcome = run_doit(project_dir, "ci-workflow")
    assert outcome.rc == 0, outcome.output
    path = project_dir / "artifacts/ci/xdnaforge-fleet.yml"
    checked = schema_check(path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    jobs = data["jobs"]
    # a build per source recipe on hosted runners, in the distro it builds in
    assert jobs["build-ubuntu26-compat"]["runs-on"] == "ubuntu-latest"
    assert jobs["build-ubuntu26-compat"]["container"] == {"image": "ubuntu:26.04"}
    assert jobs["build-xdna-2-21-75"]["container"] == {"image": "ubuntu:24.04"}
    assert "build-ryzen-ai-ubuntu24" not in jobs  # a vendor's files: nothing to build
    assert jobs["publish"]["runs-on"] == ["self-hosted", "xdnaforge-publisher"]
    assert set(jobs["publish"]["needs"]) == {
        "build-ubuntu26-compat",
        "build-upstream-main",
        "build-xdna-2-21-75",
        "build-xdna-1-7",
        "build-xdna-1-8",
        "build-xdna-1-9",
    }
    validate = jobs["validate-ubuntu26-npu4"]
    assert validate["runs-on"] == ["self-hosted", "linux", "npu4", "ubuntu-26.04"]
    assert validate["continue-on-error"] is False
    assert jobs["validate-ubuntu26-npu4-upstream-main"]["continue-on-error"] is True
    runs = "\n".join(step.get("run", "") for step in validate["steps"])
    assert "https://lab.example/apt/ubuntu26-compat/xdnaforge-ubuntu26-compat.pref" in runs
    assert 'BUILD_REPORT.md >> "$GITHUB_STEP_SUMMARY"' in runs
    assert validate["steps"][-1]["if"] == "always()"  # the rollback runs even after a failure
    report = jobs["fleet-report"]
    assert set(report["needs"]) == {k for k in jobs if k.startswith("validate-")}
    # the schema check bites: a job without runs-on is not a workflow GitHub would run
    del jobs["publish"]["runs-on"]
    broken = tmp_path / "broken.yml"
    broken.write_text(yaml.safe_dump(data))
    assert schema_check(broken).returncode != 0


def test_track_workflow_is_scheduled_and_opens_a_pull_request_per_line(project_dir: Path) -> None:
    (project_dir / "site.yaml").write_text("fleet:\n  apt_url: https://lab.example/apt\n")
    outcome = run_doit(project_dir, "ci-workflow")
    assert outcome.rc == 0, outcome.output
    path = project_dir / "artifacts/ci/xdnaforge-track.yml"
    checked = schema_check(path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    # PyYAML reads the bare key `on` as YAML 1.1's true
    triggers = data.get("on") or data[True]  # type: ignore[index]
    assert triggers["schedule"] == [{"cron": "17 5 * * 1"}]
    assert data["permissions"] == {"contents": "write", "pull-requests": "write"}
    # the recipes that name source.track: the candidates doit track wrote
    assert set(data["jobs"]) == {"track-xdna-1-7", "track-xdna-1-8", "track-xdna-1-9"}
    steps = data["jobs"]["track-xdna-1-9"]["steps"]
    check, write, pull = steps[2], steps[3], steps[4]
    assert ".venv/bin/doit track --line xdna-1.9 --check" in check["run"]
    assert write["if"] == pull["if"] == "steps.check.outputs.moved == 'true'"
    assert write["shell"] == "bash"  # pipefail: a failing track fails the step despite tee
    assert "doit track --line xdna-1.9 | tee artifacts/ci/track-xdna-1.9.txt" in write["run"]
    assert pull["uses"] == "peter-evans/create-pull-request@v7"
    assert pull["with"]["body-path"] == "artifacts/ci/track-xdna-1.9.txt"
    assert "recipes/xdna-1.9.yaml" in pull["with"]["add-paths"]


def test_workflow_without_a_repository_url_says_what_to_add(project_dir: Path) -> None:
    outcome = run_doit(project_dir, "ci-workflow")
    assert outcome.rc == 3  # site.yaml lacks fleet.apt_url: bad configuration
    assert "apt_url: ..." in outcome.output
