"""The records real flows write (a build, a failed build, validate, doctor --json) pass the
published schemas/records/<kind>.schema.json: the shapes write_record checks are the ones
editors and check-jsonschema get."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from tests.conftest import REPO
from tests.fakes.fixture import FakeTools
from tests.integration.conftest import build, run_doit
from tests.integration.npu import installed_xrt, npu_host, replay

FIELD = REPO / "tests/fixtures/field"


def _invalid(path: Path) -> list[str]:
    record = json.loads(path.read_text())
    schema = json.loads((REPO / f"schemas/records/{record['kind']}.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{path.name}: {e.message}" for e in validator.iter_errors(record)]


def _records(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*.json") if not p.stem.isupper() and p.is_file())


def test_a_build_and_a_failed_build_write_records_their_schemas_accept(
    setup: Path, fake_tools: FakeTools
) -> None:
    assert build(setup, fake_tools, "patch", "--target", "synthetic").rc == 0
    marker = setup / "build/synthetic/src/xrt/FAIL_PACKAGE"
    marker.write_text("")
    assert build(setup, fake_tools).rc == 1
    failure = setup / "artifacts/synthetic/failure.json"
    assert json.loads(failure.read_text())["stage"] == "build-xrt"
    assert _invalid(failure) == []
    marker.unlink()
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    written = _records(setup / "artifacts/synthetic")
    kinds = {json.loads(p.read_text())["kind"] for p in written}
    assert {"lock", "build", "packages", "audit", "hostcompat"} <= kinds
    assert [e for p in written for e in _invalid(p)] == []


def test_validate_and_doctor_json_write_records_their_schemas_accept(
    project_dir: Path, fake_tools: FakeTools, tmp_path: Path
) -> None:
    npu_host(project_dir / "sysroot")
    replay(fake_tools, "healthy-npu4")
    installed_xrt(fake_tools)
    env = {**fake_tools.env, "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS"}
    outcome = run_doit(project_dir, "validate", "--target", "ubuntu26-compat", env=env)
    assert outcome.rc == 0, outcome.output
    gates = tmp_path / "doctor-gates.json"
    assert run_doit(project_dir, "doctor", f"--json={gates}", env=env).rc == 0
    logs = tmp_path / "doctor-logs.json"
    log = next(FIELD.glob("006-*")) / "input.txt"
    assert run_doit(project_dir, "doctor", f"--log={log}", f"--json={logs}").rc == 1
    written = [*_records(project_dir / "artifacts/ubuntu26-compat"), gates, logs]
    kinds = {json.loads(p.read_text())["kind"] for p in written}
    assert {"validation", "bench", "doctor"} <= kinds
    assert [e for p in written for e in _invalid(p)] == []
