"""Validation speaks for the NPU's user: run by root, the user-level gates (memlock, device,
examine, pyxrt) run as that user through runuser (PAM limits, supplementary groups), xrt-smi
validate as root; each gate records as whom it ran. Fake root, fake runuser and xrt-smi."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fixture import FakeTools
from tests.integration.conftest import Outcome, run_doit
from tests.integration.npu import LIMITS, RENDER_GID, installed_xrt, npu_host, replay

ALL_GATES = ("host", "memlock", "device", "runtime", "examine", "validate", "pyxrt")
VIA_RUNUSER = "me (uid 1000, via runuser)"


def doit(project: Path, fakes: FakeTools, *args: str) -> Outcome:
    env = {**fakes.env, "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS"}
    return run_doit(project, *args, env=env)


def gates(project: Path) -> dict[str, Any]:
    record = json.loads((project / "artifacts/ubuntu26-compat/validation.json").read_text())
    return {g["name"]: g for g in record["gates"]}


def as_root(host: Path) -> None:
    """The fake host as root sees it: uid 0, root's unlimited memlock, user `me` in passwd."""
    (host / "proc/self/status").write_text(
        "Name:\tdoit\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t0\n"
    )
    (host / "proc/self/limits").write_text(LIMITS["unlimited"])
    (host / "etc/passwd").write_text(
        "root:x:0:0:root:/root:/bin/bash\nme:x:1000:1000::/home/me:/bin/bash\n"
    )


def user_session(fakes: FakeTools, *, memlock: str, groups: tuple[int, ...]) -> None:
    """What /proc/self shows in a login session of `me` (fake runuser replays it)."""
    fakes.write("runuser/me/limits", memlock)
    fakes.write(
        "runuser/me/status",
        "Name:\tcat\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\n"
        f"Groups:\t{' '.join(str(g) for g in groups)}\n",
    )


@pytest.fixture
def root_host(project_dir: Path, fake_tools: FakeTools) -> Path:
    host = npu_host(project_dir / "sysroot")
    as_root(host)
    replay(fake_tools, "healthy-npu4")
    installed_xrt(fake_tools)
    return host


def test_root_validates_for_the_user_and_sees_their_limits_and_groups(
    project_dir: Path, root_host: Path, fake_tools: FakeTools
) -> None:
    # the field's common failure: memlock 8 MiB and not in the render group; root would pass
    (project_dir / "site.yaml").write_text("npu_user: me\n")
    user_session(fake_tools, memlock=LIMITS["8mib"], groups=(1000,))
    outcome = doit(project_dir, fake_tools, "validate", "--target", "ubuntu26-compat")
    assert outcome.rc == 1, outcome.output
    assert "validating for the NPU's user me (uid 1000, from site.yaml npu_user)" in outcome.stdout
    seen = gates(project_dir)
    assert {n: g["status"] for n, g in seen.items()} == {
        "host": "pass",
        "memlock": "fail",
        "device": "fail",
        "runtime": "pass",
        "examine": "skip",
        "validate": "skip",
        "pyxrt": "skip",
    }
    assert seen["memlock"]["ran_as"] == VIA_RUNUSER
    assert seen["device"]["ran_as"] == VIA_RUNUSER
    assert "checked for uid 1000" in " ".join(seen["device"]["evidence"])
    assert seen["host"]["ran_as"] == "root"
    assert [d["code"] for d in seen["device"]["diagnoses"]] == ["render-group"]
    status = root_host / "proc/self/status"
    limits = root_host / "proc/self/limits"
    assert fake_tools.calls("runuser") == [
        ["-u", "me", "--", "cat", str(limits)],
        ["-u", "me", "--", "cat", str(status)],
    ]


@pytest.mark.usefixtures("root_host")
def test_a_healthy_user_passes_and_only_validate_runs_as_root(
    project_dir: Path, fake_tools: FakeTools
) -> None:
    (project_dir / "site.yaml").write_text("npu_user: me\n")
    user_session(fake_tools, memlock=LIMITS["unlimited"], groups=(1000, RENDER_GID))
    outcome = doit(project_dir, fake_tools, "validate", "--target", "ubuntu26-compat")
    assert outcome.rc == 0, outcome.output
    seen = gates(project_dir)
    assert {n: g["status"] for n, g in seen.items()} == dict.fromkeys(ALL_GATES, "pass")
    assert {n: g["ran_as"] for n, g in seen.items()} == {
        "host": "root",
        "memlock": VIA_RUNUSER,
        "device": VIA_RUNUSER,
        "runtime": "root",
        "examine": VIA_RUNUSER,
        "validate": "root",
        "pyxrt": VIA_RUNUSER,
    }
    switched = [call[3:5] for call in fake_tools.calls("runuser")]
    assert ["xrt-smi", "examine"] in switched
    assert ["xrt-smi", "validate"] not in switched
    assert [c[0] for c in fake_tools.calls("xrt-smi")] == ["examine", "validate"]
    record = json.loads((project_dir / "artifacts/ubuntu26-compat/validation.json").read_text())
    assert record["npu_user"] == "me"


@pytest.mark.usefixtures("root_host")
def test_root_without_a_named_user_warns_that_user_gates_prove_nothing(
    project_dir: Path, fake_tools: FakeTools
) -> None:
    outcome = doit(project_dir, fake_tools, "validate", "--target", "ubuntu26-compat")
    assert outcome.rc == 0, outcome.output
    assert (
        "warning: validating as root: the memlock and device gates then prove nothing for "
        "the NPU's user" in outcome.stdout
    )
    assert {g["ran_as"] for g in gates(project_dir).values()} == {"root"}
    assert fake_tools.calls("runuser") == []


def test_the_installer_is_the_npu_user_by_default(
    project_dir: Path, root_host: Path, fake_tools: FakeTools
) -> None:
    record = project_dir / "artifacts/ubuntu26-compat/install.json"
    record.parent.mkdir(parents=True)
    record.write_text(
        json.dumps(
            {
                "schema": 1,
                "kind": "install",
                "xdnaforge": "0.1.0",
                "target": "ubuntu26-compat",
                "root": str(root_host.resolve()),
                "user": "me",
                "state": "installed",
                "installed": [],
            }
        )
    )
    user_session(fake_tools, memlock=LIMITS["8mib"], groups=(1000, RENDER_GID))
    outcome = doit(project_dir, fake_tools, "validate", "--target", "ubuntu26-compat")
    assert outcome.rc == 1
    assert "me (uid 1000, from ubuntu26-compat/install.json)" in outcome.stdout
    assert gates(project_dir)["memlock"]["status"] == "fail"


def test_first_boot_uses_the_validate_report_made_as_root(
    project_dir: Path, fake_tools: FakeTools, tmp_path: Path
) -> None:
    # the boot unit: xdnaforge as the user (User=, PAMName=login), xrt-smi validate as root
    # beforehand (ExecStartPre=+), its report handed over
    npu_host(project_dir / "sysroot")
    replay(fake_tools, "healthy-npu4")
    installed_xrt(fake_tools)
    report = tmp_path / "validate-7.0.0-27-generic.json"
    report.write_text((fake_tools.scenario / "xrt-smi/validate.json").read_text())
    record = project_dir / "artifacts/ubuntu26-compat/install.json"
    record.parent.mkdir(parents=True)
    record.write_text(
        json.dumps(
            {
                "schema": 1,
                "kind": "install",
                "xdnaforge": "0.1.0",
                "target": "ubuntu26-compat",
                "root": str((project_dir / "sysroot").resolve()),
                "user": "me",
                "state": "installed",
                "installed": [],
            }
        )
    )
    outcome = doit(project_dir, fake_tools, "revalidate", "--root-validate", str(report))
    assert outcome.rc == 0, outcome.output
    seen = gates(project_dir)
    assert seen["validate"]["status"] == "pass"
    assert seen["validate"]["ran_as"].startswith("root (the boot unit")
    assert seen["memlock"]["ran_as"] == "uid 1000"
    assert [c[0] for c in fake_tools.calls("xrt-smi")] == ["examine"]
