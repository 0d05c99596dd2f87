"""The wrapper argv that runs a command inside a build environment, and bubblewrap's faults."""

from __future__ import annotations

from pathlib import Path

from xdnaforge.process.sandbox import Binds, RootEntry, bwrap_fault, container_argv, rootfs_argv


def test_rootfs_argv_binds_and_namespaces() -> None:
    entries = [
        RootEntry("bin", "usr/bin", Path("/env/root/bin")),
        RootEntry("usr", None, Path("/env/root/usr")),
        RootEntry("proc", None, Path("/env/root/proc")),
        RootEntry("srv", None, Path("/env/root/srv")),
    ]
    binds = Binds(writable=(Path("/srv/build/t"),), readonly=(Path("/srv/cache"),))
    argv = rootfs_argv("bwrap", entries, binds, cwd=Path("/srv/build/t/src"))
    text = " ".join(argv)
    assert "--symlink usr/bin /bin" in text
    assert "--ro-bind /env/root/usr /usr" in text
    assert "/env/root/proc" not in text  # bwrap mounts its own /proc
    assert "/env/root/srv" not in text  # the host's /srv/... is bound there instead
    assert "--bind /srv/build/t /srv/build/t" in text
    assert "--ro-bind /srv/cache /srv/cache" in text
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent"):
        assert flag in argv
    assert argv[-4:] == ["/", "--chdir", "/srv/build/t/src", "--"]
    assert argv.index("--remount-ro") > argv.index("--bind")


def test_container_argv_has_no_network_and_the_same_binds() -> None:
    binds = Binds(writable=(Path("/w"),), readonly=(Path("/c"),))
    argv = container_argv("podman", "ubuntu:24.04", binds, cwd=Path("/w"), environment=("HOME",))
    assert argv[:5] == ["podman", "run", "--rm", "--network", "none"]
    assert "/w:/w:rw" in argv
    assert "/c:/c:ro" in argv
    assert argv[-1] == "ubuntu:24.04"


def test_bwrap_faults() -> None:
    refused = (
        "bwrap: No permissions to creating new namespace, likely because the kernel does "
        "not allow non-privileged user namespaces."
    )
    assert "refused a user namespace" in (bwrap_fault(refused) or "")
    assert bwrap_fault("make: *** [all] Error 2") is None
