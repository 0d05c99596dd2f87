"""The wrapper argv that runs a command inside a build environment, and bubblewrap's faults."""

from __future__ import annotations

from pathlib import Path

from xdnaforge.process.sandbox import (
    WORK_INSIDE,
    Binds,
    RootEntry,
    bwrap_fault,
    container_argv,
    host_argv,
    rootfs_argv,
)


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


def test_the_build_tree_is_bound_at_one_canonical_path() -> None:
    """build/T and build/rebuild/T are both seen at /xdnaforge/work, in every wrapper."""
    entries = [
        RootEntry("usr", None, Path("/env/root/usr")),
        RootEntry("xdnaforge", None, Path("/env/root/xdnaforge")),
    ]
    for tree in (Path("/srv/build/t"), Path("/srv/build/rebuild/t")):
        binds = Binds(writable=(), readonly=(), moved=((tree, WORK_INSIDE),))
        assert binds.inside(tree / "src/xrt") == WORK_INSIDE / "src/xrt"
        assert binds.inside(Path("/srv/cache")) == Path("/srv/cache")
        text = " ".join(rootfs_argv("bwrap", entries, binds, cwd=WORK_INSIDE / "src"))
        assert f"--bind {tree} /xdnaforge/work" in text
        assert "/env/root/xdnaforge" not in text  # the environment's own entry is hidden
        assert text.endswith("--chdir /xdnaforge/work/src --")
        argv = container_argv("podman", "i", binds, cwd=WORK_INSIDE, environment=())
        assert f"{tree}:/xdnaforge/work:rw" in argv


def test_host_argv_shows_the_host_with_the_tree_at_its_canonical_path() -> None:
    entries = [
        RootEntry("bin", "usr/bin", Path("/bin")),
        RootEntry("usr", None, Path("/usr")),
        RootEntry("proc", None, Path("/proc")),
        RootEntry("work", None, Path("/work")),
        RootEntry("xdnaforge", None, Path("/xdnaforge")),
    ]
    binds = Binds(writable=(), readonly=(), moved=((Path("/work/build/t"), WORK_INSIDE),))
    argv = host_argv("bwrap", entries, binds, cwd=WORK_INSIDE / "src")
    text = " ".join(argv)
    assert "--symlink usr/bin /bin" in text
    assert "--dev-bind /usr /usr" in text  # as `--dev-bind / /` showed it: writable, devices
    assert "--dev-bind /work /work" in text
    assert "--dev-bind /xdnaforge" not in text  # a host directory of that name is covered
    assert "--dev-bind /proc" not in text
    assert "--bind /work/build/t /xdnaforge/work" in text
    assert "--unshare-net" not in argv  # a host build keeps the host's network
    assert argv[-5:] == [
        "--unshare-pid",
        "--die-with-parent",
        "--chdir",
        "/xdnaforge/work/src",
        "--",
    ]
