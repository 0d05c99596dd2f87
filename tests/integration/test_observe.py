"""Observing an install for real: packages built with dpkg-deb are installed with the host's
dpkg into a throw-away root of this host inside bubblewrap, and what their scripts did (module
tools run, files left, host files removed, triggers run) is seen, while the host is not
touched; without bubblewrap the observation is "not run", with the reason."""

from __future__ import annotations

import hashlib
import os
import platform
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from tests.conftest import FIGURES
from tests.debs import Spec, build_deb
from xdnaforge.debs.observed import Change, Observation, describe, outside
from xdnaforge.install.observe import LOG_NAME, observe

Test = TypeVar("Test", bound=Callable[..., None])
needs_root = pytest.mark.skipif(
    os.geteuid() != 0,
    reason="observing needs root (unprivileged, the overlay cannot change root's files)",
)


def observing(test: Test) -> Test:
    """The marks of a test that observes: bubblewrap and dpkg, and root."""
    marked: Test = pytest.mark.tools("bwrap", "dpkg", "dpkg-deb")(needs_root(test))
    return marked


# what dh_makeshlibs writes into a library package's postinst
DEBHELPER_POSTINST = """#!/bin/sh
set -e
# Automatically added by dh_makeshlibs/13.11.4
if [ "$1" = "configure" ]; then
	ldconfig
fi
# End automatically added section
"""
# host paths the hostile scripts below aim at; none may exist before or after
HOST_TARGETS = (
    "/etc/modprobe.d/xdnaforge-observe.conf",
    "/etc/modules-load.d/xdnaforge-observe.conf",
    "/usr/xdnaforge-observe-probe",
    "/xdnaforge-observe-probe",
    "/tmp/xdnaforge-observe-path",
)
# host files whose bytes and metadata must survive every observation
HOST_WITNESSES = (
    "/etc/passwd",
    "/etc/ld.so.cache",
    "/var/lib/dpkg/status",
    "/usr/sbin/modprobe",
    "/usr/bin/kmod",
    "/etc/debian_version",
    "/usr/share/doc/dpkg",
)


def package(tmp_path: Path, name: str, **scripts: str) -> Path:
    spec = Spec(
        package=name,
        architecture="all",
        files={f"opt/xilinx/xrt/lib/lib{name}.so.2": b"\x7fELF probe"},
        scripts=dict(scripts),
    )
    return build_deb(tmp_path / "debs", spec)


def own_files(observation: Observation) -> set[str]:
    return {c.path for c in observation.changes if c.kind == "file"}


def witness() -> dict[str, tuple[object, ...]]:
    seen: dict[str, tuple[object, ...]] = {}
    for name in (*HOST_WITNESSES, *HOST_TARGETS):
        path = Path(name)
        if not (path.exists() or path.is_symlink()):
            seen[name] = ("absent",)
            continue
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        seen[name] = (info.st_mode, info.st_uid, info.st_size, info.st_mtime_ns, digest)
    return seen


@pytest.fixture
def host_untouched() -> Iterator[None]:
    before = witness()
    yield
    assert witness() == before


@observing
@observing
@pytest.mark.usefixtures("host_untouched")
def test_a_clean_package_is_observed_with_only_its_own_files(
    tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    deb = package(tmp_path, "xdnaforge-clean", postinst=DEBHELPER_POSTINST)
    started = time.monotonic()
    observation = observe([deb], scratch=tmp_path / "scratch")
    took = time.monotonic() - started
    record_property(FIGURES, f"one observation (a package, ldconfig in its postinst): {took:.2f} s")
    assert observation.status == "observed", observation.reason
    assert observation.dpkg_status == 0, observation.dpkg_tail
    assert observation.tool_calls == ()
    assert own_files(observation) == {"opt/xilinx/xrt/lib/libxdnaforge-clean.so.2"}
    assert {c.kind for c in observation.changes} <= {"file", "dir"}
    assert outside(observation, lambda path: path.startswith("opt/xilinx/xrt/lib/")) == ()
    assert describe(observation).startswith("observed: dpkg exit status 0, 0 module tool calls")
    # only the log is written, and only under scratch
    assert [p.name for p in (tmp_path / "scratch").iterdir()] == [LOG_NAME]


@observing
@pytest.mark.usefixtures("host_untouched")
def test_module_tools_a_script_runs_are_recorded(tmp_path: Path) -> None:
    deb = package(
        tmp_path,
        "xdnaforge-modprobe",
        postinst="#!/bin/sh\nset -e\nmodprobe amdxdna\n/sbin/modprobe -r amdxdna\n"
        "command -v update-initramfs >/dev/null && update-initramfs -u -k all\n",
    )
    observation = observe([deb], scratch=tmp_path / "scratch")
    assert observation.status == "observed", observation.reason
    assert observation.dpkg_status == 0, observation.dpkg_tail
    assert observation.tool_calls == (
        "modprobe amdxdna",
        "modprobe -r amdxdna",
        "update-initramfs -u -k all",
    )
    # the stand-ins themselves are not changes of the package
    assert not [c for c in observation.changes if c.path.endswith(("bin/modprobe", "bin/kmod"))]


@observing
@pytest.mark.usefixtures("host_untouched")
def test_a_file_written_outside_the_package_through_a_path_trick_is_seen(tmp_path: Path) -> None:
    postinst = (
        "#!/bin/sh\nset -e\n"
        "mkdir -p /tmp/xdnaforge-observe-path\n"
        "printf '#!/bin/sh\\nmkdir -p /etc/modprobe.d\\n"
        "echo options amdxdna x=1 > /etc/modprobe.d/xdnaforge-observe.conf\\n'"
        " > /tmp/xdnaforge-observe-path/ldconfig\n"
        "chmod 755 /tmp/xdnaforge-observe-path/ldconfig\n"
        "PATH=/tmp/xdnaforge-observe-path:$PATH ldconfig\n"
    )
    observation = observe(
        [package(tmp_path, "xdnaforge-path", postinst=postinst)], scratch=tmp_path / "scratch"
    )
    assert observation.status == "observed", observation.reason
    assert observation.dpkg_status == 0, observation.dpkg_tail
    left = outside(observation, lambda path: path.startswith("opt/xilinx/xrt/"))
    assert Change("etc/modprobe.d/xdnaforge-observe.conf", "file") in left
    assert Change("tmp/xdnaforge-observe-path/ldconfig", "file") in left
    assert Change("tmp/xdnaforge-observe-path", "dir") in left


@observing
@pytest.mark.usefixtures("host_untouched")
def test_a_tree_copied_onto_the_root_is_seen(tmp_path: Path) -> None:
    spec = Spec(
        package="xdnaforge-copy",
        architecture="all",
        files={
            "opt/xilinx/xrt/share/tree/etc/modules-load.d/xdnaforge-observe.conf": "amdxdna\n",
        },
        scripts={"postinst": "#!/bin/sh\nset -e\ncp -a /opt/xilinx/xrt/share/tree/. /\n"},
    )
    observation = observe([build_deb(tmp_path / "debs", spec)], scratch=tmp_path / "scratch")
    assert observation.status == "observed", observation.reason
    left = outside(observation, lambda path: path.startswith("opt/xilinx/xrt/"))
    assert Change("etc/modules-load.d/xdnaforge-observe.conf", "file") in left


@observing
@pytest.mark.usefixtures("host_untouched")
def test_a_host_file_a_script_removes_is_a_removal_and_stays_on_the_host(tmp_path: Path) -> None:
    victim = Path("/etc/debian_version")
    if not victim.is_file():
        pytest.skip("this host has no /etc/debian_version to remove")
    postinst = (
        "#!/bin/sh\nset -e\nrm /etc/debian_version\n"
        # a host directory replaced by an empty one hides what was in it
        "rm -rf /usr/share/doc/dpkg\nmkdir /usr/share/doc/dpkg\n"
    )
    observation = observe(
        [package(tmp_path, "xdnaforge-remove", postinst=postinst)], scratch=tmp_path / "scratch"
    )
    assert observation.status == "observed", observation.reason
    assert observation.dpkg_status == 0, observation.dpkg_tail
    removed = {c.path for c in observation.changes if c.kind == "removed"}
    assert "etc/debian_version" in removed
    hidden = {p.relative_to("/").as_posix() for p in Path("/usr/share/doc/dpkg").iterdir()}
    assert hidden
    assert hidden <= removed
    # a removal counts even where the path would be admitted
    assert Change("etc/debian_version", "removed") in outside(observation, lambda _: True)
    assert victim.is_file()


@observing
@pytest.mark.usefixtures("host_untouched")
def test_a_trigger_of_an_interest_the_host_has_runs(tmp_path: Path) -> None:
    interest = Path("/var/lib/dpkg/triggers/ldconfig")
    if "libc-bin" not in (interest.read_text() if interest.is_file() else ""):
        pytest.skip("libc-bin has no ldconfig trigger interest on this host")
    spec = Spec(
        package="xdnaforge-trigger",
        architecture="all",
        files={"opt/xilinx/xrt/lib/libxdnaforge_trigger.so.2": b"\x7fELF"},
        scripts={"triggers": "activate-noawait ldconfig\n"},
    )
    spec_path = build_deb(tmp_path / "debs", spec)
    observation = observe([spec_path], scratch=tmp_path / "scratch")
    assert observation.status == "observed", observation.reason
    assert observation.dpkg_status == 0, observation.dpkg_tail
    assert "Processing triggers for libc-bin" in observation.dpkg_tail
    # what ldconfig rebuilt is dpkg's bookkeeping, not the package's
    assert "etc/ld.so.cache" not in {c.path for c in observation.changes}


@observing
@pytest.mark.usefixtures("host_untouched")
def test_a_hostile_script_cannot_reach_the_host(tmp_path: Path) -> None:
    finit_module = {"x86_64": 313, "aarch64": 273}.get(platform.machine())
    postinst = (
        "#!/bin/sh\n"
        "echo probe > /usr/xdnaforge-observe-probe\n"
        "echo probe > /xdnaforge-observe-probe\n"
        "echo probe > /proc/1/root/xdnaforge-observe-probe 2>/dev/null\n"
        "mount -o remount,rw / 2>/dev/null; mount -o remount,bind,rw / 2>/dev/null\n"
        "echo probe > /usr/xdnaforge-observe-probe\n"
        "echo finit_module=$(perl -e "
        f"'my $s = q(); syscall({finit_module or 0}, -1, $s, 0); print $!+0')\n"
        # access(2) only: on a writable /proc, uid 0 here (the host's root) could write them
        "test -w /proc/sys/kernel/core_pattern && echo core_pattern=writable"
        " || echo core_pattern=refused\n"
        "test -w /proc/sysrq-trigger && echo sysrq=writable || echo sysrq=refused\n"
        "mount -t tmpfs none /tmp 2>/dev/null && echo mount=done || echo mount=refused\n"
        "unshare -U true 2>/dev/null && echo userns=made || echo userns=refused\n"
        "echo CapBnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)\n"
        "umount -l /usr 2>/dev/null && echo umount=done || echo umount=refused\n"
        "exit 0\n"
    )
    observation = observe(
        [package(tmp_path, "xdnaforge-hostile", postinst=postinst)], scratch=tmp_path / "scratch"
    )
    assert observation.status == "observed", observation.reason
    said = dict(line.split("=", 1) for line in observation.dpkg_tail.splitlines() if "=" in line)
    # no mount, no namespace, no CAP_SYS_ADMIN (bit 21) even in the scripts' own namespace
    assert said["umount"] == said["mount"] == said["userns"] == "refused", said
    assert not int(said["CapBnd"], 16) & (1 << 21), said
    # what only file modes guard in /proc is read-only for them
    assert said["core_pattern"] == said["sysrq"] == "refused", said
    if finit_module is not None:
        # EPERM (or ENOSYS, a kernel without modules), never EBADF: the fd is looked at only
        # after CAP_SYS_MODULE in the initial namespace, which the scripts do not hold
        assert said["finit_module"] in ("1", "38"), said
    paths = {c.path for c in observation.changes}
    assert {"usr/xdnaforge-observe-probe", "xdnaforge-observe-probe"} <= paths
    for target in HOST_TARGETS:
        assert not Path(target).exists()


@observing
@pytest.mark.usefixtures("host_untouched")
def test_a_dpkg_that_does_not_finish_is_stopped_and_still_observed(tmp_path: Path) -> None:
    deb = package(
        tmp_path, "xdnaforge-hang", postinst="#!/bin/sh\nmodprobe amdxdna\nexec sleep 600\n"
    )
    started = time.monotonic()
    observation = observe([deb], scratch=tmp_path / "scratch", timeout=8)
    assert time.monotonic() - started < 60
    assert observation.status == "observed", observation.reason
    assert observation.dpkg_status is None
    assert "dpkg did not finish and was stopped after 3 s" in observation.dpkg_tail
    assert observation.tool_calls == ("modprobe amdxdna",)


@pytest.mark.tools("bwrap", "dpkg", "dpkg-deb")
@pytest.mark.skipif(os.geteuid() == 0, reason="shows the unprivileged case: run as a user")
def test_unprivileged_the_observation_is_not_run_and_says_it_needs_root(tmp_path: Path) -> None:
    observation = observe([package(tmp_path, "xdnaforge-user")], scratch=tmp_path / "scratch")
    assert observation.status == "not run"
    assert "root" in observation.reason or "user namespace" in observation.reason


def test_without_bubblewrap_the_observation_is_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deb = package(tmp_path, "xdnaforge-nobwrap", postinst="#!/bin/sh\nmodprobe amdxdna\n")
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    observation = observe([deb], scratch=tmp_path / "scratch")
    assert observation == Observation(
        status="not run",
        reason="bwrap is not installed (Debian package bubblewrap)",
        dpkg_status=None,
        dpkg_tail="",
        tool_calls=(),
        changes=(),
    )
    assert describe(observation).startswith("not run: bwrap is not installed")


def test_a_bubblewrap_refused_a_user_namespace_is_not_run_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deb = package(tmp_path, "xdnaforge-nouserns", postinst="#!/bin/sh\nmodprobe amdxdna\n")
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    fake = fakes / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\n"
        "exit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fakes}{os.pathsep}{os.environ['PATH']}")
    observation = observe([deb], scratch=tmp_path / "scratch")
    assert observation.status == "not run"
    assert observation.reason.startswith("needs user namespaces: the kernel refused")
    assert observation.changes == ()
