"""doit install / rollback for real, with dpkg --root into temporary trees."""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_tool
from tests.debs import Spec, build_deb, plugin
from tests.fakes.fixture import FakeTools
from tests.integration.conftest import Outcome, build, run_doit
from tests.integration.upstream import BOOST_PATCH, Upstream, write_recipe
from tests.unit.hardware.test_host_checks import LIMITS_8M

# dpkg refuses to install, even into another root, without superuser privileges
pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="dpkg --root needs root"),
    pytest.mark.tools("dpkg", "dpkg-query"),
]


@pytest.fixture
def built(setup: Path, fake_tools: FakeTools) -> Path:
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    return setup


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A minimal dpkg root (no /bin/sh: maintainer scripts cannot run there)."""
    path = tmp_path / "root"
    for folder in ("var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers", "var/log"):
        (path / folder).mkdir(parents=True)
    (path / "var/lib/dpkg/status").write_text("")
    return path


def doit(project: Path, *args: str, env: dict[str, str] | None = None) -> Outcome:
    # the real dpkg-query, not the fake: installs run against a real dpkg database
    return run_doit(project, *args, env=env)


def dpkg_versions(root: Path) -> dict[str, str]:
    done = subprocess.run(
        [
            "dpkg-query",
            f"--admindir={root}/var/lib/dpkg",
            "-W",
            "-f",
            "${Package} ${db:Status-Abbrev} ${Version}\n",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    versions = {}
    for line in done.stdout.splitlines():
        parts = line.split()
        name, status, version = parts[0], parts[1], parts[-1]
        if status == "ii":
            versions[name] = version
    return versions


def install(project: Path, root: Path, *extra: str) -> Outcome:
    return doit(project, "install", "--target", "synthetic", "--root", str(root), *extra)


def test_without_yes_only_the_commands_are_shown(built: Path, root: Path) -> None:
    status = (root / "var/lib/dpkg/status").read_text()
    outcome = install(built, root)
    assert outcome.rc == 0  # a preview: the commands shown, nothing changed
    assert f"+ dpkg --root={root} --log={root}/var/log/dpkg.log --force-depends -i " in (
        outcome.stdout
    )
    assert "-base.deb" in outcome.stdout
    assert "-amdxdna.deb" in outcome.stdout
    assert "not run: installing changes the system" in outcome.output
    assert (root / "var/lib/dpkg/status").read_text() == status
    assert not (built / "artifacts/synthetic/install.json").exists()


def test_install_verify_upgrade_and_rollback(
    built: Path, root: Path, upstream: Upstream, fake_tools: FakeTools
) -> None:
    first = install(built, root, "--yes")
    assert first.rc == 0, first.output
    assert dpkg_versions(root) == {
        "xrt-base": "2.20.0",
        "xrt-npu": "2.20.0",
        "xrt_plugin-amdxdna": "2.20.1",
    }
    assert (root / "opt/xilinx/xrt/lib/libxrt_driver_xdna.so.2.20.0").is_file()
    # whoever installed is the NPU's user validation speaks for, unless site.yaml names one
    recorded = json.loads((built / "artifacts/synthetic/install.json").read_text())
    assert recorded["user"] == pwd.getpwuid(os.getuid()).pw_name

    # upstream moves to 2.21; a new build upgrades the installed set
    upstream.commit("xrt", {"src/CMake/settings.cmake": "VERSION 2.21\n"}, "xrt 2.21")
    upstream.link("xdna-driver", "xrt", "xrt")
    write_recipe(built, upstream)
    assert build(built, fake_tools).rc == 0
    second = install(built, root, "--yes")
    assert second.rc == 0, second.output
    assert "installed xrt-base 2.21.0 (replaced 2.20.0)" in second.stdout
    assert dpkg_versions(root) == {
        "xrt-base": "2.21.0",
        "xrt-npu": "2.21.0",
        "xrt_plugin-amdxdna": "2.20.1",
    }

    shown = doit(built, "rollback", "--target", "synthetic", "--root", str(root))
    assert shown.rc == 0  # a preview
    assert dpkg_versions(root)["xrt-base"] == "2.21.0"
    back = doit(built, "rollback", "--target", "synthetic", "--root", str(root), "--yes")
    assert back.rc == 0, back.output
    assert dpkg_versions(root) == {
        "xrt-base": "2.20.0",
        "xrt-npu": "2.20.0",
        "xrt_plugin-amdxdna": "2.20.1",
    }


def test_tampered_package_is_refused_with_both_digests(built: Path, root: Path) -> None:
    deb = next((built / "artifacts/synthetic/debs").glob("*-base.deb"))
    deb.write_bytes(deb.read_bytes() + b"\0")
    outcome = install(built, root, "--yes")
    assert outcome.rc == 1
    assert f"refusing {deb.name}: its sha256 is " in outcome.output
    assert ", the audit passed " in outcome.output
    assert dpkg_versions(root) == {}


def test_a_package_that_fails_to_install_is_rolled_back(
    built: Path, root: Path, fake_tools: FakeTools
) -> None:
    assert install(built, root, "--yes").rc == 0
    before = dpkg_versions(root)
    # the next shim gets a postinst; the test root has no /bin/sh to run it
    (built / "build/synthetic/src/WITH_POSTINST").write_text("")
    patch = built / "patches/synthetic/0001-boost.patch"
    patch.write_text(BOOST_PATCH.replace("Subject: cmake:", "Subject: cmake (v2):"))
    assert build(built, fake_tools).rc == 0
    outcome = install(built, root, "--yes")
    assert outcome.rc == 1
    # one line says what failed and the root's state, whole; dpkg's output is in the log only
    said = next(line for line in outcome.output.splitlines() if "install failed" in line)
    assert said.startswith("install failed and was rolled back: a maintainer script failed (")
    assert "post-installation script" in said
    assert said.endswith(f"; {root} has the packages it had before")
    assert "Errors were encountered while processing" not in outcome.output
    assert "dpkg's output is in the full log: " in outcome.output
    assert dpkg_versions(root) == before


def test_busy_dpkg_lock_stops_with_a_clear_message(built: Path, root: Path) -> None:
    # another package manager: a process holding dpkg's frontend lock (a POSIX lock)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time; f = open(sys.argv[1], 'w'); fcntl.lockf(f, fcntl.LOCK_EX); "
            "print('locked', flush=True); time.sleep(60)",
            str(root / "var/lib/dpkg/lock-frontend"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        outcome = install(built, root, "--yes")
    finally:
        holder.kill()
        holder.wait()
    assert outcome.rc == 1
    assert "dpkg is busy: another package manager" in outcome.output
    assert dpkg_versions(root) == {}


def test_distro_xrt_stops_the_install_before_anything_changes(
    built: Path, root: Path, tmp_path: Path
) -> None:
    distro = build_deb(
        tmp_path,
        Spec(package="libxrt2", version="2.19.0-1", files={"usr/lib/libxrt_core.so.2": b"\x7fELF"}),
    )
    subprocess.run(
        ["dpkg", f"--root={root}", "--force-depends", "-i", str(distro)],
        check=True,
        capture_output=True,
    )
    outcome = install(built, root, "--yes")
    assert outcome.rc == 1
    assert "BLOCKING [distro-xrt]" in outcome.stdout
    assert "sudo apt-get remove libxrt2" in outcome.output
    assert dpkg_versions(root) == {"libxrt2": "2.19.0-1"}


def test_low_memlock_is_reported_and_the_drop_ins_written_on_request(
    built: Path, root: Path
) -> None:
    (built / "sysroot/proc/self").mkdir(parents=True)
    (built / "sysroot/proc/self/limits").write_text(LIMITS_8M)
    outcome = install(built, root)
    assert "warning [memlock] memlock limit is soft 8192 KiB, hard 8192 KiB" in outcome.stdout
    assert "DefaultLimitMEMLOCK=infinity" in outcome.stdout
    shown = doit(built, "memlock", "--root", str(root))
    assert shown.rc == 0  # a preview
    assert not (root / "etc/security/limits.d").exists()
    written = doit(built, "memlock", "--root", str(root), "--yes")
    assert written.rc == 0, written.output
    limits = (root / "etc/security/limits.d/99-xdnaforge-memlock.conf").read_text()
    assert "*    hard    memlock    unlimited" in limits


@pytest.mark.tools("dpkg-repack")
def test_a_package_we_did_not_build_is_repacked_and_restored(
    built: Path, root: Path, tmp_path: Path
) -> None:
    # an xrt-base installed by hand earlier: no .deb of it anywhere but in the dpkg database
    old = build_deb(
        tmp_path,
        Spec(
            package="xrt-base",
            version="2.19.0",
            files={"opt/xilinx/xrt/lib/libxrt_coreutil.so.2.19.0": b"old"},
        ),
    )
    subprocess.run(
        ["dpkg", f"--root={root}", "--force-depends", "-i", str(old)],
        check=True,
        capture_output=True,
    )
    outcome = install(built, root, "--yes")
    assert outcome.rc == 0, outcome.output
    assert f"+ dpkg-repack --root={root} xrt-base" in outcome.stdout
    assert "installed xrt-base 2.20.0 (replaced 2.19.0)" in outcome.stdout
    back = doit(built, "rollback", "--target", "synthetic", "--root", str(root), "--yes")
    assert back.rc == 0, back.output
    assert dpkg_versions(root) == {"xrt-base": "2.19.0"}
    assert (root / "opt/xilinx/xrt/lib/libxrt_coreutil.so.2.19.0").read_bytes() == b"old"


def test_install_and_rollback_refresh_the_report(built: Path, root: Path) -> None:
    report = built / "artifacts/synthetic/BUILD_REPORT.md"
    assert "## Install: not installed" in report.read_text()
    assert install(built, root, "--yes").rc == 0
    assert f"## Install: installed into {root}" in report.read_text()
    assert f"installed: not installed -> installed into {root}" in report.read_text()
    plan = doit(built, "plan", "--target", "synthetic")
    assert f"install (on request): up to date (installed into {root})" in plan.stdout
    back = doit(built, "rollback", "--target", "synthetic", "--root", str(root), "--yes")
    assert back.rc == 0, back.output
    # nothing was installed before: a purge, not a restore
    assert "purged xrt-base (was new)" in back.stdout
    assert "restored" not in back.stdout
    assert f"## Install: rolled back from {root}" in report.read_text()
    assert f"installed: installed into {root} -> rolled back from {root}" in report.read_text()
    assert f"| install | rolled back from {root} |" in report.read_text()
    # a rolled-back install is not current: plan says so, with the root
    plan = doit(built, "plan", "--target", "synthetic")
    assert f"install (on request): rolled back from {root}" in plan.stdout


def test_a_package_swapped_after_the_check_is_not_what_dpkg_installs(
    built: Path, root: Path, tmp_path: Path
) -> None:
    # the builder can write artifacts/ while root installs: it swaps the audited xrt-base for
    # a package with a kernel module at the worst moment, right before dpkg opens it
    deb = next((built / "artifacts/synthetic/debs").glob("*-base.deb"))
    hostile = build_deb(
        tmp_path,
        Spec(
            package="xrt-base",
            version="2.20.0",
            files={"lib/modules/7.0.0/extra/amdxdna.ko": b"\x7fELF module"},
        ),
    )
    real_dpkg = require_tool("dpkg")
    wrappers = tmp_path / "attacker"
    wrappers.mkdir()
    swap = wrappers / "dpkg"
    swap.write_text(
        f'#!/bin/sh\ncase " $* " in *" -i "*) cp {hostile} {deb} ;; esac\nexec {real_dpkg} "$@"\n'
    )
    swap.chmod(0o755)
    outcome = doit(
        built,
        "install",
        "--target",
        "synthetic",
        "--root",
        str(root),
        "--yes",
        env={"PATH": f"{wrappers}:{os.environ['PATH']}"},
    )
    assert outcome.rc == 0, outcome.output
    assert deb.read_bytes() == hostile.read_bytes()  # the swap happened
    assert not (root / "lib/modules").exists()
    assert "xrt-base" in dpkg_versions(root)
    commands = json.loads((built / "artifacts/synthetic/install.json").read_text())["commands"]
    assert str(deb) not in commands[-1]  # dpkg was given the private copies


# What the builder (whoever can write build/ and artifacts/) can do while root installs.


def mark_passed(project: Path, package: str, deb: Path) -> None:
    """audit.json rewritten as the builder can: `package` passed, with `deb`'s digest."""
    record = project / "artifacts/synthetic/audit.json"
    audit = json.loads(record.read_text())
    for entry in audit["packages"]:
        if entry["package"] == package:
            entry.update(sha256=hashlib.sha256(deb.read_bytes()).hexdigest(), verdict="pass")
            entry["findings"] = []
    audit["verdict"] = "pass"
    record.write_text(json.dumps(audit))


def test_a_blocked_package_that_audit_json_says_passed_is_refused(
    built: Path, root: Path, tmp_path: Path
) -> None:
    deb = next((built / "artifacts/synthetic/debs").glob("*-base.deb"))
    hostile = build_deb(
        tmp_path,
        Spec(
            package="xrt-base",
            version="2.20.0",
            files={
                "opt/xilinx/xrt/lib/libxrt_coreutil.so.2.20.0": b"\x7fELF core",
                "lib/modules/7.0.0/extra/amdxdna.ko": b"\x7fELF module",
            },
        ),
    )
    shutil.copyfile(hostile, deb)
    mark_passed(built, "xrt-base", deb)
    outcome = install(built, root, "--yes")
    assert outcome.rc == 1, outcome.output
    assert "BLOCK xrt-base 2.20.0" in outcome.stdout
    assert "not installing: the copies dpkg would install fail the audit (xrt-base)" in (
        outcome.output
    )
    assert "+ dpkg --root=" not in (built / "build/synthetic/logs/install.log").read_text()
    assert dpkg_versions(root) == {}
    assert not (root / "lib/modules").exists()


@pytest.mark.tools("bwrap")
def test_what_a_waived_script_does_is_seen_before_dpkg_runs_it(
    built: Path, root: Path, tmp_path: Path
) -> None:
    # a postinst the recipe waives by its digest, which loads a module the audit cannot see
    script = '#!/bin/sh\nset -e\ntool=mod\n"${tool}probe" amdxdna\n'
    digest = hashlib.sha256(script.encode()).hexdigest()
    recipe = built / "recipes/synthetic.yaml"
    recipe.write_text(
        recipe.read_text()
        + "audit:\n  scripts:\n    - {package: xrt_plugin-amdxdna, script: postinst, "
        + f"sha256: {digest}, justification: a test}}\n"
    )
    spec = plugin()
    spec.scripts = {"postinst": script}
    deb = next((built / "artifacts/synthetic/debs").glob("*-amdxdna.deb"))
    shutil.copyfile(build_deb(tmp_path, spec), deb)
    mark_passed(built, "xrt_plugin-amdxdna", deb)
    outcome = install(built, root, "--yes")
    assert outcome.rc == 1, outcome.output
    assert "OBSERVE-001 block: DEBIAN/postinst: ran: modprobe amdxdna" in outcome.stdout
    assert "fail the audit (xrt_plugin-amdxdna)" in outcome.output
    assert "+ dpkg --root=" not in (built / "build/synthetic/logs/install.log").read_text()
    assert dpkg_versions(root) == {}


def test_a_link_planted_at_install_log_is_not_appended_to(
    built: Path, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "shadow"
    outside.write_text("root:x:0:\n")
    log = built / "build/synthetic/logs/install.log"
    log.unlink(missing_ok=True)
    log.symlink_to(outside)
    outcome = install(built, root, "--yes")
    assert outcome.rc == 1
    assert f"refusing to append to {log}: it is a symbolic link" in outcome.output
    log.unlink()
    os.link(outside, log)  # a hard link: the same file under a second name
    again = install(built, root, "--yes")
    assert again.rc == 1
    assert f"refusing to append to {log}: it has 2 names" in again.output
    assert outside.read_text() == "root:x:0:\n"
    assert dpkg_versions(root) == {}


def test_a_link_planted_for_the_logs_directory_is_not_followed(
    built: Path, root: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "etc-logrotate.d"
    elsewhere.mkdir()
    logs = built / "build/synthetic/logs"
    shutil.rmtree(logs)
    logs.symlink_to(elsewhere)
    outcome = install(built, root, "--yes")
    assert outcome.rc == 1
    assert f"refusing to write through {logs}: it is a symbolic link" in outcome.output
    assert list(elsewhere.iterdir()) == []
    assert dpkg_versions(root) == {}


def test_a_link_planted_at_kept_is_not_written_through(
    built: Path, root: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    kept = built / "artifacts/synthetic/kept"
    kept.symlink_to(elsewhere)
    outcome = install(built, root, "--yes")
    assert outcome.rc == 1
    assert f"refusing to write through {kept}: it is a symbolic link" in outcome.output
    assert list(elsewhere.iterdir()) == []
    assert dpkg_versions(root) == {}


def test_a_link_planted_at_a_kept_package_name_is_replaced_not_followed(
    built: Path, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "passwd"
    outside.write_text("root:x:0:0::/root:/bin/sh\n")
    kept = built / "artifacts/synthetic/kept"
    kept.mkdir()
    debs = built / "artifacts/synthetic/debs"
    names = [p.name for p in debs.glob("*.deb")]
    for name in names:
        (kept / name).symlink_to(outside)
    outcome = install(built, root, "--yes")
    assert outcome.rc == 0, outcome.output
    assert outside.read_bytes() == b"root:x:0:0::/root:/bin/sh\n"
    for name in names:
        assert not (kept / name).is_symlink()
        assert (kept / name).read_bytes() == (debs / name).read_bytes()


def test_a_record_the_builder_replaced_is_not_rolled_back(built: Path, root: Path) -> None:
    assert install(built, root, "--yes").rc == 0
    record = built / "artifacts/synthetic/install.json"
    forged = json.loads(record.read_text())
    forged["installed"].append({"package": "openssh-server", "replaced": None})
    record.unlink()
    record.write_text(json.dumps(forged))
    os.chown(record, 65534, 65534)  # written by the builder, not by root
    back = doit(built, "rollback", "--target", "synthetic", "--root", str(root), "--yes")
    assert back.rc == 1
    assert f"refusing {record}: it is owned by uid 65534" in back.output
    assert "xrt-base" in dpkg_versions(root)


def test_a_build_by_another_user_is_installed_and_rolled_back_by_root(
    built: Path, root: Path
) -> None:
    # the usual flow: a user builds, root installs what is in the user's directories
    log = built / "build/synthetic/logs/install.log"
    log.write_text("")
    for tree in (built / "build", built / "artifacts"):
        for path in [tree, *tree.rglob("*")]:
            os.chown(path, 65534, 65534, follow_symlinks=False)
    first = install(built, root, "--yes")
    assert first.rc == 0, first.output
    assert "audit of the copies to install: 3 package(s), no kernel payload" in first.stdout
    assert "xrt-base" in dpkg_versions(root)
    assert "+ dpkg --root=" in log.read_text()
    back = doit(built, "rollback", "--target", "synthetic", "--root", str(root), "--yes")
    assert back.rc == 0, back.output
    assert dpkg_versions(root) == {}
    assert json.loads((built / "artifacts/synthetic/install.json").read_text())["state"] == (
        "rolled back"
    )
