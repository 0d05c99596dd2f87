"""doit build end to end against the synthetic upstream: real git, real build scripts that
make real .deb files with dpkg-deb, fake dpkg-query/apt-get, a fake Ubuntu 26.04 sysroot."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, require_tool
from tests.fakes.fixture import FakeTools
from tests.integration.conftest import DEPENDS, build
from tests.integration.upstream import BOOST_PATCH, Upstream, write_recipe
from tests.unit.test_host import make_sysroot


def record(project: Path, name: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((project / f"artifacts/synthetic/{name}.json").read_text())
    return data


def compiles(project: Path, tree: str) -> int:
    counter = project / "build/synthetic/src" / tree / "Release/compile-count"
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def test_build_end_to_end(setup: Path, fake_tools: FakeTools) -> None:
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    assert "cannot run" not in outcome.stdout  # nothing known against this host: no warning
    packages = record(setup, "packages")["packages"]
    assert {p["package"] for p in packages} == {"xrt-base", "xrt-npu", "xrt_plugin-amdxdna"}  # type: ignore[attr-defined]
    for entry in packages:  # type: ignore[attr-defined]
        deb = setup / "artifacts/synthetic" / entry["file"]
        assert hashlib.sha256(deb.read_bytes()).hexdigest() == entry["sha256"]
    assert record(setup, "audit")["verdict"] == "pass"
    steps = record(setup, "build")["steps"]
    xrt = steps["xrt"]  # type: ignore[index]
    assert xrt["ctest"] == {
        "passed": 2,
        "failed": 0,
        "skipped": 1,
        "total": 3,
        "failed_tests": [],
        "skipped_tests": ["aie2_basic_txn"],
        "expected": {"total": 3, "skipped": 1},
        "as_expected": True,
    }
    assert xrt["command"][:4] == ["./build.sh", "-npu", "-opt", "-noinit"]
    assert xrt["environment"]["LC_ALL"] == "C.UTF-8"
    assert xrt["environment"]["SOURCE_DATE_EPOCH"].isdigit()
    report = (setup / "artifacts/synthetic/BUILD_REPORT.md").read_text()
    assert "## Audit: pass" in report
    assert "ctest: 2 passed, 0 failed, 1 skipped, 3 total" in report
    assert (setup / "artifacts/BUILD_REPORT.md").read_text() == report
    # the patched file went into the package: the tool built the patched tree
    assert (
        "filesystem program_options)"
        in (
            setup / "build/synthetic/src/xrt/build/Release/pkg-base/opt/xilinx/xrt/lib/"
            "build-config-base.txt"
        ).read_text()
    )


def test_build_home_is_private(setup: Path, fake_tools: FakeTools) -> None:
    user_config = setup / "home/.gitconfig"
    user_config.write_text("[user]\n\tname = Someone\n")
    before = user_config.read_text()
    assert build(setup, fake_tools).rc == 0
    assert user_config.read_text() == before
    private = setup / "build/synthetic/home/.gitconfig"
    assert "directory = *" in private.read_text()


def test_second_build_compiles_nothing_and_says_so(setup: Path, fake_tools: FakeTools) -> None:
    assert build(setup, fake_tools).rc == 0
    counts = (compiles(setup, "xrt/build"), compiles(setup, "build"))
    packages = record(setup, "packages")
    # the host's amdxdna (DRM 0.7.0) finds no firmware: said up front, and the build goes on
    root = setup / "sysroot"
    (root / "lib/firmware/amdnpu/17f0_10").mkdir(parents=True)
    (root / "var/log").mkdir(parents=True)
    (root / "var/log/kern.log").write_text(
        "[drm] Initialized amdxdna_accel_driver 0.7.0 for 0000:c5:00.1 on minor 0\n"
    )
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    assert outcome.stdout.startswith(".  build\nwarning: this host cannot run synthetic as it is: ")
    assert "the driver rejects the firmware" in outcome.stdout
    assert (compiles(setup, "xrt/build"), compiles(setup, "build")) == counts
    assert "build-xrt synthetic: up to date" in outcome.stdout
    assert "nothing was compiled; every build stage was up to date" in outcome.stdout
    assert record(setup, "packages") == packages


def test_changed_patch_rebuilds_xrt_and_shim_only(setup: Path, fake_tools: FakeTools) -> None:
    assert build(setup, fake_tools).rc == 0
    fetch_fingerprint = record(setup, "lock")["fingerprints"]["fetch"]  # type: ignore[index]
    counts = (compiles(setup, "xrt/build"), compiles(setup, "build"))
    patch = setup / "patches/synthetic/0001-boost.patch"
    patch.write_text(BOOST_PATCH.replace("Subject: cmake:", "Subject: cmake (reworded):"))
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    assert "fetch synthetic: up to date" in outcome.stdout
    assert "patch synthetic: inputs changed: patches" in outcome.stdout
    assert "build-xrt synthetic: inputs changed: upstream.patch" in outcome.stdout
    assert (compiles(setup, "xrt/build"), compiles(setup, "build")) == (
        counts[0] + 1,
        counts[1] + 1,
    )
    assert record(setup, "lock")["fingerprints"]["fetch"] == fetch_fingerprint  # type: ignore[index]


def test_new_kernel_rebuilds_nothing(setup: Path, fake_tools: FakeTools) -> None:
    assert build(setup, fake_tools).rc == 0
    counts = (compiles(setup, "xrt/build"), compiles(setup, "build"))
    (setup / "sysroot/proc/sys/kernel/osrelease").write_text("7.0.5-31-generic\n")
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    assert (compiles(setup, "xrt/build"), compiles(setup, "build")) == counts


def test_missing_dependencies_are_listed_with_the_install_command(
    setup: Path, fake_tools: FakeTools
) -> None:
    fake_tools.installed({"cmake": "4.2.3-1"})
    outcome = build(setup, fake_tools)
    assert outcome.rc == 1
    assert "missing build dependencies for ubuntu 26.04: g++, libboost-dev" in outcome.output
    assert "sudo apt-get install -y --no-install-recommends g++ libboost-dev" in outcome.output
    assert compiles(setup, "xrt/build") == 0
    # deps without --yes only shows the command; with --yes it runs it
    shown = build(setup, fake_tools, "deps", "--target", "synthetic")
    assert shown.rc == 0  # a preview: the command shown, nothing run
    assert "missing build dependencies for ubuntu 26.04: g++, libboost-dev" in shown.stdout
    assert "+ apt-get install -y --no-install-recommends g++ libboost-dev" in shown.stdout
    assert fake_tools.calls("apt-get") == []
    ran = build(setup, fake_tools, "deps", "--target", "synthetic", "--yes")
    assert ran.rc == 0, ran.output
    assert fake_tools.calls("apt-get") == [
        ["install", "-y", "--no-install-recommends", "g++", "libboost-dev"]
    ]
    # what apt did (the recording: it upgraded systemd and 31 more), not what was asked of it
    assert (
        "apt: 67 newly installed for the 2 asked for, 32 upgraded (curl, libcurl3-gnutls, "
        "libcurl3-nss, libcurl4, libglib2.0-0, libglib2.0-bin, libglib2.0-data, "
        "libnss-systemd, ...), 0 removed; log "
    ) in ran.stdout
    assert str(setup / "build/synthetic/logs/deps.log") in ran.stdout


def test_an_option_the_pinned_script_lacks_stops_before_building(
    setup: Path, upstream: Upstream, fake_tools: FakeTools
) -> None:
    script = (upstream.root / "xdna-driver/build/build.sh").read_text()
    # xdna-driver 1.4's build.sh: no -nokmod at all
    upstream.commit(
        "xdna-driver",
        {"build/build.sh": script.replace("    -nokmod) nokmod=1 ;;\n", "")},
        "1.4-like script",
    )
    write_recipe(setup, upstream)
    outcome = build(setup, fake_tools)
    assert outcome.rc == 1
    assert "build step shim: build/build.sh at the pinned commit does not accept -nokmod" in (
        outcome.output
    )
    assert "never falls back to a build with the kernel module" in outcome.output
    assert compiles(setup, "xrt/build") == 0


def test_failing_ctest_names_the_tests_and_makes_no_packages(
    setup: Path, fake_tools: FakeTools
) -> None:
    assert build(setup, fake_tools, "patch", "--target", "synthetic").rc == 0
    (setup / "build/synthetic/src/xrt/FAIL_TEST").write_text("")
    outcome = build(setup, fake_tools)
    assert outcome.rc == 1
    assert "build-xrt: ctest failed (1 of 3): [xclbinutil]:xclbintest" in outcome.output
    assert "no packages were made" in outcome.output
    assert not (setup / "artifacts/synthetic/packages.json").exists()


def test_a_test_failure_is_connected_to_files_missing_from_the_mirror(
    setup: Path, fake_tools: FakeTools
) -> None:
    """The fetch of a partial mirror named the test data file that xclbintest then lacks."""
    assert build(setup, fake_tools, "patch", "--target", "synthetic").rc == 0
    lock_path = setup / "artifacts/synthetic/lock.json"
    lock = json.loads(lock_path.read_text())
    data = "src/runtime_src/tools/xclbinutil/unittests/test_data/sample_1_2018.2.xclbin"
    lock["missing_files"] = {"xrt": [data], ".": ["tools/bins/1640_00/validate.xclbin"]}
    lock_path.write_text(json.dumps(lock))
    (setup / "build/synthetic/src/xrt/FAIL_TEST").write_text("")
    outcome = build(setup, fake_tools)
    assert outcome.rc == 1
    assert (
        "no packages were made; the fetch reported 1 file(s) missing from the mirror that the "
        f"failed test may need (xrt/{data}; lock.json missing_files)"
    ) in outcome.output
    assert "fetch from a complete mirror, or, if a failure is known" in outcome.output


def test_known_test_failure_is_packaged_and_reported(setup: Path, fake_tools: FakeTools) -> None:
    recipe = setup / "recipes/synthetic.yaml"
    recipe.write_text(
        recipe.read_text().replace(
            "  depends:",
            '  known_test_failures:\n    - test: "[xclbinutil]:xclbintest"\n'
            "      justification: test data missing from a partial mirror\n  depends:",
        )
    )
    assert build(setup, fake_tools, "patch", "--target", "synthetic").rc == 0
    (setup / "build/synthetic/src/xrt/FAIL_TEST").write_text("")
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    xrt = record(setup, "build")["steps"]["xrt"]  # type: ignore[index]
    assert xrt["known_test_failures"] == [
        {
            "test": "[xclbinutil]:xclbintest",
            "justification": "test data missing from a partial mirror",
        }
    ]
    assert "-noctest" in xrt["command"]
    report = (setup / "artifacts/synthetic/BUILD_REPORT.md").read_text()
    assert "known test failure `[xclbinutil]:xclbintest`" in report


def test_unexpected_package_set_is_named(setup: Path, fake_tools: FakeTools) -> None:
    recipe = setup / "recipes/synthetic.yaml"
    recipe.write_text(
        recipe.read_text().replace(
            "produces: [xrt-base, xrt-npu]", "produces: [xrt-base, xrt-base-dev, xrt-npu]"
        )
    )
    outcome = build(setup, fake_tools)
    assert outcome.rc == 1
    assert "the built packages are not the set the recipe expects: missing xrt-base-dev" in (
        outcome.output
    )
    assert "file names are not a contract" in outcome.output


def test_plugin_built_without_nokmod_is_blocked_by_the_audit(
    project_dir: Path, upstream: Upstream, fake_tools: FakeTools
) -> None:
    write_recipe(project_dir, upstream, nokmod=False)
    make_sysroot(project_dir / "sysroot")
    fake_tools.installed(DEPENDS)
    outcome = build(project_dir, fake_tools)
    assert outcome.rc == 1
    assert "kernel payload found in xrt_plugin-amdxdna" in outcome.output
    audit = record(project_dir, "audit")
    assert audit["verdict"] == "block"
    assert audit["fingerprints"] == {}  # a blocked audit is never "up to date"


def test_a_second_build_in_the_same_directory_is_refused(
    setup: Path, fake_tools: FakeTools
) -> None:
    lock = setup / "build/.lock"
    lock.parent.mkdir(parents=True)
    with lock.open("w") as handle:
        handle.write("4242")
        handle.flush()
        fcntl.flock(handle, fcntl.LOCK_EX)
        outcome = build(setup, fake_tools)
    assert outcome.rc == 1
    assert f"the build directory {setup / 'build'} is in use by pid 4242" in outcome.output


@pytest.mark.parametrize("pid_namespace", ["bwrap", "refused"])
def test_killed_build_keeps_the_previous_packages_and_the_next_run_completes(
    setup: Path, fake_tools: FakeTools, tmp_path: Path, pid_namespace: str
) -> None:
    path = fake_tools.env["PATH"]
    if pid_namespace == "refused":
        # a fresh machine without bubblewrap, or one whose user namespaces are refused (as
        # Ubuntu's AppArmor does): bwrap fails the way it fails there
        refused = tmp_path / "no-userns"
        refused.mkdir()
        (refused / "bwrap").write_text(
            "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
        )
        (refused / "bwrap").chmod(0o755)
        path = f"{refused}:{path}"
    else:
        require_tool("bwrap")
    assert build(setup, fake_tools).rc == 0
    artifacts = setup / "artifacts/synthetic"
    # what the build produced; lock.json may move on (the patch stage completes before the kill)
    kept = ("build.json", "packages.json", "audit.json", "BUILD_REPORT.json")
    before = {p.name: p.read_bytes() for p in artifacts.glob("debs/*")}
    before.update({name: (artifacts / name).read_bytes() for name in kept})
    patch = setup / "patches/synthetic/0001-boost.patch"
    patch.write_text(BOOST_PATCH.replace("Subject: cmake:", "Subject: cmake (v2):"))
    (setup / "build/synthetic/src/xrt/SLOW_BUILD").write_text("")
    env = {
        "PATH": path,
        "HOME": str(setup / "home"),
        "LC_ALL": "C.UTF-8",
        "XDNAFORGE_PROJECT_DIR": str(setup),
        "XDNAFORGE_SYSROOT": str(setup / "sysroot"),
        "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS",
        "FAKE_SCENARIO": fake_tools.env["FAKE_SCENARIO"],
        "FAKE_CALLS": fake_tools.env["FAKE_CALLS"],
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "doit",
            "-f",
            str(REPO / "dodo.py"),
            "build",
            "--target",
            "synthetic",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    log = setup / "build/synthetic/logs/build-xrt.log"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if log.exists() and "slow compile unit" in log.read_text():
            break
        time.sleep(0.1)
    else:
        process.kill()
        pytest.fail("the build never reached its slow step")
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    # nothing of the killed run's compile is left running (its processes carry the run id)
    deadline = time.monotonic() + 10
    while _compiles_left(setup) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _compiles_left(setup) == []
    after = {p.name: p.read_bytes() for p in artifacts.glob("debs/*")}
    after.update({name: (artifacts / name).read_bytes() for name in kept})
    assert after == before
    (setup / "build/synthetic/src/xrt/SLOW_BUILD").unlink()
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    assert "build-xrt synthetic: inputs changed" in outcome.stdout


def _compiles_left(setup: Path) -> list[str]:
    """Living processes working in the project's build tree (the killed run's compile)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = str((entry / "cwd").readlink())
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if cwd.startswith(str(setup / "build")):
            found.append(f"{entry.name} {command}")
    return found


def test_resuming_after_a_packaging_failure_does_not_reconfigure(
    setup: Path, fake_tools: FakeTools
) -> None:
    assert build(setup, fake_tools, "patch", "--target", "synthetic").rc == 0
    marker = setup / "build/synthetic/src/xrt/FAIL_PACKAGE"
    marker.write_text("")
    failed = build(setup, fake_tools)
    assert failed.rc == 1
    assert "CPack Error: packaging failed" in failed.output
    configured = setup / "build/synthetic/src/xrt/build/Release/configure-count"
    assert len(configured.read_text().splitlines()) == 1
    marker.unlink()
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    assert "resuming the previous attempt without reconfiguring (-nocmake)" in outcome.stdout
    assert len(configured.read_text().splitlines()) == 1
    assert "-nocmake" in record(setup, "build")["steps"]["xrt"]["command"]  # type: ignore[index]


def test_plan_after_a_build_says_what_is_up_to_date(setup: Path, fake_tools: FakeTools) -> None:
    assert build(setup, fake_tools).rc == 0
    outcome = build(setup, fake_tools, "plan", "--target", "synthetic")
    assert outcome.rc == 0, outcome.output
    for stage in ("fetch", "patch", "build-xrt", "build-shim", "package", "audit"):
        assert f". {stage}: up to date" in outcome.stdout
    assert "deps: runs every time" in outcome.stdout
