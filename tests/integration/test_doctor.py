"""doit doctor: a saved log, or this (fake) host without any build."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import REPO
from tests.fakes.fixture import FakeTools
from tests.integration.conftest import run_doit
from tests.integration.npu import npu_host, replay

FIELD = REPO / "tests/fixtures/field"


def test_doctor_log_names_cause_and_fix(project_dir: Path) -> None:
    log = next(FIELD.glob("006-*")) / "input.txt"
    outcome = run_doit(project_dir, "doctor", f"--log={log}")
    assert outcome.rc == 1
    assert "[error] fw-protocol-mismatch: firmware protocol not accepted by the driver" in (
        outcome.stdout
    )
    assert "fix:" in outcome.stdout
    assert "Traceback" not in outcome.output


def test_doctor_log_healthy_and_unknown(project_dir: Path, tmp_path: Path) -> None:
    healthy = next(FIELD.glob("018-*")) / "input.txt"
    outcome = run_doit(project_dir, "doctor", f"--log={healthy}")
    assert outcome.rc == 0, outcome.output
    assert "healthy: xrt-smi validate: 1 test(s) passed" in outcome.stdout
    strange = tmp_path / "strange.log"
    strange.write_text("amdxdna 0000:c5:00.1: [drm] *ERROR* aie2_frob: new failure, ret -5\n")
    outcome = run_doit(project_dir, "doctor", f"--log={strange}")
    assert outcome.rc == 1
    assert "[unknown] no known signature explains:" in outcome.stdout


def test_doctor_on_a_host_with_a_protocol_mismatch(
    project_dir: Path, fake_tools: FakeTools
) -> None:
    npu_host(project_dir / "sysroot", driver=None, accel=False)
    replay(fake_tools, "fw-protocol-mismatch")
    outcome = run_doit(
        project_dir,
        "doctor",
        env={**fake_tools.env, "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS"},
    )
    assert outcome.rc == 1
    assert "PASS host" in outcome.stdout
    assert "FAIL device: NPU 1022:17f0 at 0000:c5:00.1 is not bound to any driver" in (
        outcome.stdout
    )
    assert "[error] fw-protocol-mismatch" in outcome.stdout
    assert fake_tools.calls("xrt-smi") == []  # doctor needs no installed stack


def test_doctor_log_templated_driver_message_gets_its_sources_family_and_releases(
    project_dir: Path, tmp_path: Path
) -> None:
    log = tmp_path / "journal.log"
    log.write_text(
        "Nov 30 05:00:01 host kernel: amdxdna 0000:c5:00.1: enabling device (0000 -> 0002)\n"
        "Nov 30 05:00:01 host kernel: amdxdna 0000:c5:00.1: [drm] *ERROR* aie2_init: "
        "pcim enable device failed, ret -5\n"
    )
    outcome = run_doit(project_dir, "doctor", f"--log={log}")
    assert outcome.rc == 1
    # no entry names this message, the catalogue does: its family from where it is thrown
    assert "[error] firmware-load-failed" in outcome.stdout
    assert "aie2_pci.c:aie2_init: pcim enable device failed, ret %d" in outcome.stdout
    assert "[unknown]" not in outcome.stdout
    assert "no known failure explains" not in outcome.stdout


def test_doctor_log_error_line_no_template_knows_is_an_unknown_failure(
    project_dir: Path, tmp_path: Path
) -> None:
    log = tmp_path / "journal.log"
    log.write_text(
        "Nov 30 05:00:01 host kernel: amdxdna 0000:c5:00.1: [drm] *ERROR* aie2_frobnicate: "
        "widget rebalance failed, ret -5\n"
    )
    outcome = run_doit(project_dir, "doctor", f"--log={log}")
    assert outcome.rc == 1
    assert "unknown failure: error-level lines that no known failure explains" in outcome.stdout
    assert "healthy" not in outcome.stdout.replace("unknown failure", "")


def test_doctor_log_healthy_block_with_a_failure_elsewhere_is_not_healthy(
    project_dir: Path, tmp_path: Path
) -> None:
    healthy = (next(FIELD.glob("036-*")) / "input.txt").read_text()
    log = tmp_path / "mixed.log"
    log.write_text(
        healthy + "amdxdna 0000:67:00.1: [drm] *ERROR* amdxdna_drm_open: "
        "SVA bind device failed, ret -19\n"
    )
    outcome = run_doit(project_dir, "doctor", f"--log={log}")
    assert outcome.rc == 1
    assert "[error] iommu-failure: IOMMU / PASID / SVA failure (iommu)" in outcome.stdout
    assert "errno: ENODEV (19: No such device)" in outcome.stdout
    assert "healthy:" not in outcome.stdout


def test_doctor_on_a_host_no_matrix_cell_matches_warns_and_uses_no_recipe_limits(
    project_dir: Path, fake_tools: FakeTools
) -> None:
    sysroot = npu_host(project_dir / "sysroot")
    (sysroot / "etc/os-release").write_text(
        'ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n'
    )
    replay(fake_tools, "healthy-npu4")
    outcome = run_doit(
        project_dir,
        "doctor",
        env={**fake_tools.env, "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS"},
    )
    assert "PASS host" not in outcome.stdout
    assert "WARN host: debian 12" in outcome.stdout
    assert "no matrix cell matches this host (unverified combination)" in outcome.stdout
    assert "general requirements (memlock unlimited), no recipe's limits" in outcome.stdout
    assert "checking with ryzen-ai-ubuntu24's limits" not in outcome.stdout
    assert "Traceback" not in outcome.output


CORPUS = REPO / "tests/fixtures/corpus"


def test_doctor_json_writes_findings_and_verdict_and_keeps_the_text(
    project_dir: Path, tmp_path: Path
) -> None:
    # a real FastFlowLM failure in Docker (corpus c010, its thread in the file's header)
    failing = tmp_path / "flm.log"
    failing.write_text(next(CORPUS.glob("c010-*")).read_text().split("\n---\n", 1)[1])
    healthy = tmp_path / "validate.log"
    healthy.write_text(next(CORPUS.glob("c063-*")).read_text().split("\n---\n", 1)[1])
    out = tmp_path / "doctor.json"
    outcome = run_doit(
        project_dir, "doctor", f"--log={failing}", f"--log={healthy}", f"--json={out}"
    )
    assert outcome.rc == 1
    # the text keeps its form: headers, then healthy: for the healthy log
    assert "[error] hwctx-create-failed: " in outcome.stdout
    assert "  ioctl: DRM_IOCTL_AMDXDNA_CREATE_HWCTX (create a hardware context" in outcome.stdout
    assert "healthy: xrt-smi validate: 2 test(s) passed" in outcome.stdout
    record = json.loads(out.read_text())
    assert (record["schema"], record["kind"], record["verdict"]) == (1, "doctor", "failures")
    first, second = record["logs"]
    assert (first["file"], first["verdict"], first["status"]) == (
        str(failing),
        "failures",
        "failure",
    )
    finding = first["findings"][0]
    assert finding["code"] == "hwctx-create-failed"
    assert finding["family"] == "hwctx"
    assert finding["errno"] == "EINVAL (22: Invalid argument)"
    assert finding["ioctl"].startswith("DRM_IOCTL_AMDXDNA_CREATE_HWCTX (")
    assert finding["line"] == 12  # 1-based, in the file given
    assert "CREATE_HWCTX IOCTL failed (err=-22)" in finding["evidence"]
    assert finding["cause"]
    assert finding["fix"]
    assert (second["verdict"], second["evidence"]) == (
        "healthy",
        "xrt-smi validate: 2 test(s) passed",
    )
    assert second["findings"] == []


def test_doctor_json_on_an_unwritable_path_is_a_clear_error(
    project_dir: Path, tmp_path: Path
) -> None:
    log = tmp_path / "x.log"
    log.write_text("[xrt-smi] ERROR: No devices found.\n")
    outcome = run_doit(project_dir, "doctor", f"--log={log}", f"--json={log}/x.json")
    assert outcome.rc == 1
    assert f"refusing to write through {log}: it is not a directory" in outcome.output
    assert "move that file aside" in outcome.output  # never "remove it": it is the user's log
    assert "Traceback" not in outcome.output


def test_doctor_with_an_unknown_target_exits_3_naming_the_targets(
    project_dir: Path, fake_tools: FakeTools
) -> None:
    npu_host(project_dir / "sysroot")
    replay(fake_tools, "healthy-npu4")
    outcome = run_doit(
        project_dir,
        "doctor",
        "--target",
        "nope",
        env={**fake_tools.env, "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS"},
    )
    assert outcome.rc == 3, outcome.output
    assert "unknown target 'nope'" in outcome.output
    assert "targets: " in outcome.output
    assert "PASS host" not in outcome.stdout
    assert "Traceback" not in outcome.output
