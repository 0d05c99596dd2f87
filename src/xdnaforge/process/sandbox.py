"""The wrapper argv that runs a command inside a build environment; pure.

For a rootfs: bubblewrap on a fresh tmpfs root, the environment's top-level directories bound
read-only, the work paths bound at their host paths (read-write or read-only), a private /tmp,
new network, PID, IPC and UTS namespaces (loopback only), and `--die-with-parent`; the root
itself is remounted read-only at the end. For podman/docker: `run --rm --network none` with the
same binds. For the host: the host's own top-level directories bound as they are, in a PID
namespace. In all three the target's build tree is bound at one canonical path, WORK_INSIDE,
whichever directory it lies in on the host (as sbuild and Nix do): two builds of the same inputs
see the same paths, so nothing path-dependent (RUNPATH lengths, `__FILE__`, CMake's caches)
tells them apart. Starting the command is process/run.py's job; this module only builds argv.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# Kernel file systems bwrap makes itself, and what must stay private to the sandbox.
_SKIPPED = frozenset({"proc", "dev", "sys", "tmp", "run", "lost+found"})
# An environment without these is not a root file system: a bind below them would hide it.
_SYSTEM = frozenset({"usr", "etc", "var", "bin", "sbin", "lib", "lib64"})
PATH_INSIDE = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Where a build step sees its target's build tree (build/<target>), in every environment.
WORK_INSIDE = Path("/xdnaforge/work")


@dataclass(frozen=True, slots=True, kw_only=True)
class Binds:
    """Host paths visible inside, at the same path."""

    writable: tuple[Path, ...]  # source tree, build tree, ccache, logs
    readonly: tuple[Path, ...]  # object caches, path mirrors lent through git alternates
    # (host path, path inside): writable, bound elsewhere (the build tree at WORK_INSIDE)
    moved: tuple[tuple[Path, Path], ...] = ()

    def inside(self, path: Path) -> Path:
        """Where a host path is seen inside (a moved tree's files move with it)."""
        for host, inside in self.moved:
            if path == host or path.is_relative_to(host):
                return inside / path.relative_to(host)
        return path


class SandboxError(ValueError):
    """A bind that would hide part of the environment (e.g. a build dir under /usr)."""


@dataclass(frozen=True, slots=True)
class RootEntry:
    """One top-level entry of the environment's root: a directory or a symlink."""

    name: str
    symlink: str | None  # the link's text for a relative symlink
    source: Path  # the host directory to bind for a directory (or an absolute symlink's target)


def _tops(binds: Binds) -> set[str]:
    paths = (*binds.writable, *binds.readonly, *(inside for _, inside in binds.moved))
    return {p.parts[1] for p in paths if len(p.parts) > 1}


def _moved_tops(binds: Binds) -> set[str]:
    return {inside.parts[1] for _, inside in binds.moved if len(inside.parts) > 1}


def rootfs_argv(
    bwrap: str, entries: Sequence[RootEntry], binds: Binds, *, cwd: Path, network: bool = False
) -> list[str]:
    """`bwrap ... --chdir CWD --` for a root made of `entries` (see `root_entries`)."""
    below = _tops(binds)
    clash = sorted(below & _SYSTEM)
    if clash:
        raise SandboxError(
            f"a work path lies under /{clash[0]}, which the environment provides; "
            "move build_dir, cache_dir and ccache_dir elsewhere (e.g. under /work or /srv)"
        )
    argv = [bwrap]
    for entry in entries:
        if entry.name in _SKIPPED or entry.name in below:
            # the host path is bound below it: that part of the environment is not shown
            continue
        if entry.symlink is not None:
            argv += ["--symlink", entry.symlink, f"/{entry.name}"]
        else:
            argv += ["--ro-bind", str(entry.source), f"/{entry.name}"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run"]
    for path in binds.writable:
        argv += ["--bind", str(path), str(path)]
    for path in binds.readonly:
        argv += ["--ro-bind", str(path), str(path)]
    for host, inside in binds.moved:
        argv += ["--bind", str(host), str(inside)]
    # no network: a new network namespace holds loopback only. PID namespace and
    # --die-with-parent: nothing a build starts outlives the step or sees host processes.
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent"]
    if not network:
        argv += ["--unshare-net"]
    argv += ["--remount-ro", "/", "--chdir", str(cwd), "--"]
    return argv


def host_argv(bwrap: str, entries: Sequence[RootEntry], binds: Binds, *, cwd: Path) -> list[str]:
    """`bwrap ... --chdir CWD --` for a step on the host: the host's top-level entries bound
    as they are (read-write, devices included, the network kept: what `--dev-bind / /` gives),
    the moved trees at their canonical paths, a PID namespace that dies with xdnaforge.
    A fresh root rather than `/` itself, so the canonical path needs no directory on the host."""
    hidden = _moved_tops(binds)
    argv = [bwrap]
    for entry in entries:
        if entry.name in hidden or entry.name == "proc":
            continue
        if entry.symlink is not None:
            argv += ["--symlink", entry.symlink, f"/{entry.name}"]
        else:
            argv += ["--dev-bind", str(entry.source), f"/{entry.name}"]
    argv += ["--proc", "/proc"]
    for host, inside in binds.moved:
        argv += ["--bind", str(host), str(inside)]
    argv += ["--unshare-pid", "--die-with-parent", "--chdir", str(cwd), "--"]
    return argv


def admin_argv(bwrap: str, root: Path) -> list[str]:
    """bwrap for `doit env` running apt inside a root as root: writable, with the network."""
    return [
        bwrap,
        "--bind",
        str(root),
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--ro-bind",
        "/etc/resolv.conf",
        "/etc/resolv.conf",
        "--unshare-pid",
        "--die-with-parent",
        "--chdir",
        "/",
        "--",
    ]


def container_argv(
    engine: str, image: str, binds: Binds, *, cwd: Path, environment: Sequence[str]
) -> list[str]:
    """`podman|docker run --rm --network none -v ... IMAGE` (the command follows)."""
    argv = [engine, "run", "--rm", "--network", "none", "--init", "-w", str(cwd)]
    for path in binds.writable:
        argv += ["-v", f"{path}:{path}:rw"]
    for path in binds.readonly:
        argv += ["-v", f"{path}:{path}:ro"]
    for host, inside in binds.moved:
        argv += ["-v", f"{host}:{inside}:rw"]
    for name in environment:
        argv += ["-e", name]  # the value comes from the engine's own environment
    argv += ["--read-only", "--tmpfs", "/tmp", image]
    return argv


def bwrap_fault(output: str) -> str | None:
    """A one-line cause for bubblewrap's own failures (not the command's)."""
    text = output.lower()
    if "creating new namespace failed" in text or "no permissions to creat" in text:
        return (
            "the kernel refused a user namespace (bwrap: creating new namespace failed); "
            "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 "
            "or user.max_user_namespaces > 0) or run as root"
        )
    if "setting up uid map" in text or ("uid map" in text and "permission denied" in text):
        return "the kernel refused the user namespace's uid map; run as root or allow userns"
    if text.startswith("bwrap:") and "execvp" in text:
        return f"the command does not exist inside the environment ({output.strip()})"
    return None
