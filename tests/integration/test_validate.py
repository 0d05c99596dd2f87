"""doit validate on fake NPU hosts: each scenario gives the right status per gate and the
right diagnosis code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fixture import FakeTools
from tests.integration.conftest import Outcome, run_doit
from tests.integration.npu import LIMITS, installed_xrt, npu_host, replay

ALL_GATES = ("host", "memlock", "device", "runtime", "examine", "validate", "pyxrt")


def validate(
    project: Path,
    fakes: FakeTools,
    target: str = "ubuntu26-compat",
    env: dict[str, str] | None = None,
) -> Outcome:
    return run_doit(
        project,
        "validate",
        "--target",
        target,
        env={**fakes.env, "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS", **(env or {})},
    )


def gates(project: Path, target: str = "ubuntu26-compat") -> dict[str, Any]:
    record = json.loads((project / f"artifacts/{target}/validation.json").read_text())
    return {g["name"]: g for g in record["gates"]}


def statuses(project: Path, target: str = "ubuntu26-compat") -> dict[str, str]:
    return {name: str(g["status"]) for name, g in gates(project, target).items()}


def codes(project: Path, gate: str, target: str = "ubuntu26-compat") -> list[str]:
    return [d["code"] for d in gates(project, target)[gate]["diagnoses"]]


@pytest.fixture
def host(project_dir: Path) -> Path:
    return project_dir / "sysroot"


def test_the_host_gate_finds_the_cell_by_the_driver_a_vendor_kernel_backported(
    project_dir: Path, host: Path, fake_tools: FakeTools
) -> None:
    npu_host(host)
    (host / "proc/sys/kernel/osrelease").write_text("6.17.0-1010-oem\n")
    (host / "var/log").mkdir(parents=True)
    (host / "var/log/kern.log").write_text(
        "[drm] Initialized amdxdna_accel_driver 0.7.0 for 0000:c5:00.1 on minor 0\n"
    )
    replay(fake_tools, "healthy-npu4")
    installed_xrt(fake_tools)
    validate(project_dir, fake_tools)
    assert (
        "matrix cell ubuntu26-npu4 (supported), by driver: its amdxdna reports DRM 0.7.0 "
        "(in-tree-0.7), a backport" in gates(project_dir)["host"]["summary"]
    )


def test_a_driver_contract_that_does_not_hold_fails_the_device_gate_and_the_rest_still_run(
    project_dir: Path, host: Path, fake_tools: FakeTools
) -> None:
    npu_host(host)
    replay(fake_tools, "healthy-npu4")
    # mainline 7.0 still reported DRM 0.6; ubuntu26-compat was proven on 0.7.0
    journal = fake_tools.scenario / "journalctl/kernel.out"
    journal.write_text(journal.read_text().replace("driver 0.7.0", "driver 0.6.0"))
    installed_xrt(fake_tools)
    outcome = validate(project_dir, fake_tools)
    assert outcome.rc == 1
    device = gates(project_dir)["device"]
    assert device["status"] == "fail"
    assert device["blocking"] is False
    assert (
        "the driver contract of ubuntu26-compat does not hold here: needs DRM driver >= "
        "0.7.0, the host has 0.6.0" in device["summary"]
    )
    assert [d["code"] for d in device["diagnoses"]] == ["driver-contract"]
    # a prediction, not an observation: what it predicts is still observed
    assert statuses(project_dir) == {**dict.fromkeys(ALL_GATES, "pass"), "device": "fail"}


def test_healthy_npu4_passes_every_gate_with_the_proven_figures(
    project_dir: Path, host: Path, fake_tools: FakeTools
) -> None:
    npu_host(host)
    replay(fake_tools, "healthy-npu4")
    installed_xrt(fake_tools)
    outcome = validate(project_dir, fake_tools)
    assert outcome.rc == 0, outcome.output
    assert statuses(project_dir) == dict.fromkeys(ALL_GATES, "pass")
    metrics = {
        m["name"]: (m["value"], m["verdict"]) for m in gates(project_dir)["validate"]["metrics"]
    }
    assert metrics == {
        "gemm_tops": (51.0, "ok"),
        "latency_us": (46.0, "ok"),
        "throughput_ops": (80547.0, "ok"),
    }
    assert "matrix cell ubuntu26-npu4 (supported)" in gates(project_dir)["host"]["summary"]
    history = (project_dir / "artifacts/ubuntu26-compat/bench/history.jsonl").read_text()
    assert json.loads(history)["metrics"]["gemm_tops"] == 51.0
    report = (project_dir / "artifacts/ubuntu26-compat/BUILD_REPORT.md").read_text()
    assert "## Validation: pass" in report
    assert "| gemm_tops | 51.0 TOPS | 45.0 | 51.0 |" in report
    assert fake_tools.calls("xrt-smi")[0][:4] == ["examine", "--format", "JSON", "--output"]


def test_memlock_8mib(project_dir: Path, host: Path, fake_tools: FakeTools) -> None:
    npu_host(host, memlock=LIMITS["8mib"])
    replay(fake_tools, "healthy-npu4", "memlock-8mib")
    installed_xrt(fake_tools)
    outcome = validate(project_dir, fake_tools)
    assert outcome.rc == 1
    assert statuses(project_dir) == {
        "host": "pass",
        "memlock": "fail",
        "device": "pass",
        "runtime": "pass",
        "examine": "fail",
        "validate": "skip",
        "pyxrt": "skip",
    }
    assert codes(project_dir, "memlock") == ["memlock"]
    assert codes(project_dir, "examine") == ["memlock"]
    assert gates(project_dir)["validate"]["summary"] == "skipped: examine, memlock did not pass"


def test_no_plugin_means_no_devices(project_dir: Path, host: Path, fake_tools: FakeTools) -> None:
    npu_host(host, plugin=False)
    replay(fake_tools, "healthy-npu4")
    installed_xrt(fake_tools, plugin=False)
    assert validate(project_dir, fake_tools).rc == 1
    assert statuses(project_dir)["runtime"] == "fail"
    assert codes(project_dir, "runtime") == ["no-plugin"]
    assert statuses(project_dir)["examine"] == "skip"


def test_firmware_protocol_mismatch(project_dir: Path, host: Path, fake_tools: FakeTools) -> None:
    npu_host(host, driver=None, accel=False)
    replay(fake_tools, "fw-protocol-mismatch")
    installed_xrt(fake_tools)
    assert validate(project_dir, fake_tools).rc == 1
    result = statuses(project_dir)
    assert (result["device"], result["examine"], result["validate"]) == ("fail", "skip", "skip")
    assert codes(project_dir, "device") == ["fw-protocol-mismatch"]
    evidence = gates(project_dir)["device"]["evidence"]
    assert any("Incompatible firmware protocol major 7 minor 3" in e for e in evidence)


def test_upstream_main_on_the_70_driver_fails_exec_cmd(
    project_dir: Path, host: Path, fake_tools: FakeTools
) -> None:
    npu_host(host)
    replay(fake_tools, "healthy-npu4", "exec-cmd-einval")
    (fake_tools.scenario / "xrt-smi/validate.json").unlink()
    examine = fake_tools.scenario / "xrt-smi/examine.json"
    examine.write_text(examine.read_text().replace('"version": "2.20.0"', '"version": "2.26.0"'))
    installed_xrt(fake_tools, version="2.26.0")
    outcome = validate(project_dir, fake_tools, target="upstream-main")
    assert outcome.rc == 1
    result = statuses(project_dir, "upstream-main")
    assert (result["examine"], result["validate"]) == ("pass", "fail")
    assert codes(project_dir, "validate", "upstream-main") == ["exec-cmd-cmd-bo-limit"]
    # the compat resolver saw it coming: the device gate records the contract's verdict
    device = gates(project_dir, "upstream-main")["device"]["evidence"]
    assert any(
        "driver contract of upstream-main (doit compat): does NOT hold" in e
        and "rejects those over 32768" in e
        for e in device
    ), device
    host_gate = gates(project_dir, "upstream-main")["host"]["summary"]
    assert "ubuntu26-npu4-upstream-main (known-broken" in host_gate


def test_device_node_missing(project_dir: Path, host: Path, fake_tools: FakeTools) -> None:
    npu_host(host, accel=False)
    replay(fake_tools, "healthy-npu4")
    installed_xrt(fake_tools)
    assert validate(project_dir, fake_tools).rc == 1
    assert statuses(project_dir)["device"] == "fail"
    assert codes(project_dir, "device") == ["accel-node-missing"]


def test_user_without_read_write_on_the_node(
    project_dir: Path, host: Path, fake_tools: FakeTools
) -> None:
    npu_host(host, groups=(1000,))
    replay(fake_tools, "healthy-npu4")
    installed_xrt(fake_tools)
    outcome = validate(project_dir, fake_tools)
    assert outcome.rc == 1
    assert statuses(project_dir)["device"] == "fail"
    assert codes(project_dir, "device") == ["render-group"]
    assert "usermod -aG render" in outcome.stdout


def test_hung_xrt_smi_is_stopped_and_diagnosed(
    project_dir: Path, host: Path, fake_tools: FakeTools, tmp_path: Path
) -> None:
    npu_host(host)
    replay(fake_tools, "healthy-npu4", "hung-validate")
    installed_xrt(fake_tools)
    site = tmp_path / "site.yaml"
    site.write_text("tool_timeout_s: 2\n")
    outcome = validate(project_dir, fake_tools, env={"XDNAFORGE_SITE": str(site)})
    assert outcome.rc == 1
    assert statuses(project_dir)["validate"] == "fail"
    assert codes(project_dir, "validate") == ["xrt-smi-hang"]
    assert "did not answer within 2 s" in str(gates(project_dir)["validate"]["summary"])


def test_missing_pyxrt_binding_is_named(
    project_dir: Path, host: Path, fake_tools: FakeTools
) -> None:
    npu_host(host, pyxrt=False)
    (host / "opt/xilinx/xrt/python/pyxrt.cpython-314-x86_64-linux-gnu.so").write_text("")
    replay(fake_tools, "healthy-npu4")
    installed_xrt(fake_tools)
    assert validate(project_dir, fake_tools).rc == 1
    summary = str(gates(project_dir)["pyxrt"]["summary"])
    assert "no pyxrt binding for this interpreter" in summary
    assert "built for cpython-314" in summary


def test_figures_below_threshold_fail_validate(
    project_dir: Path, host: Path, fake_tools: FakeTools
) -> None:
    npu_host(host)
    replay(fake_tools, "healthy-npu4")
    report = fake_tools.scenario / "xrt-smi/validate.json"
    report.write_text(report.read_text().replace("TOPS: 51.0", "TOPS: 38.5"))
    installed_xrt(fake_tools)
    assert validate(project_dir, fake_tools).rc == 1
    metrics = {m["name"]: m["verdict"] for m in gates(project_dir)["validate"]["metrics"]}
    assert metrics["gemm_tops"] == "below threshold"


def test_inside_a_container_the_record_says_so_and_the_gates_name_their_source(
    project_dir: Path, host: Path, fake_tools: FakeTools
) -> None:
    npu_host(host, memlock=LIMITS["8mib"])
    (host / "run").mkdir()
    (host / "run/.containerenv").write_text('engine="podman-4.9.3"\nname="npu"\n')
    replay(fake_tools, "healthy-npu4")
    installed_xrt(fake_tools)
    validate(project_dir, fake_tools)
    record = json.loads((project_dir / "artifacts/ubuntu26-compat/validation.json").read_text())
    assert record["host"]["container"] == {
        "engine": "podman",
        "name": "npu",
        "image": None,
        "evidence": ["/run/.containerenv (podman-4.9.3)"],
    }
    memlock = gates(project_dir)["memlock"]
    assert memlock["status"] == "fail"
    assert memlock["summary"].endswith(
        "(the podman container's own limits: --ulimit memlock=-1:-1)"
    )
    assert any("not the host's" in line for line in memlock["evidence"])
    device = gates(project_dir)["device"]
    assert device["status"] == "pass"
    assert "the podman container's own device nodes" in device["summary"]
    assert "inside a podman container" in gates(project_dir)["host"]["summary"]
