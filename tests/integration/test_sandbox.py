"""The bubblewrap backend for real: a root made from the test's files (the host's /usr bound
read-only) proves the namespaces, the read-only root, the binds, no network, hidden host files
and that a killed step leaves nothing behind and reruns."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from tests.integration.envroot import BWRAP, make_root, needs_bwrap
from xdnaforge.environments.local import root_entries
from xdnaforge.process.run import CommandFailed, run, run_streaming
from xdnaforge.process.sandbox import Binds, SandboxError, rootfs_argv

pytestmark = needs_bwrap


def wrapper(tmp_path: Path, *, readonly: tuple[Path, ...] = ()) -> list[str]:
    root = tmp_path / "root"
    if not root.exists():
        make_root(root, {"cmake": "4.3.0-1"})
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    assert BWRAP is not None
    return rootfs_argv(
        BWRAP, root_entries(root), Binds(writable=(work,), readonly=readonly), cwd=work
    )


def inside(tmp_path: Path, script: str, **kwargs: object) -> str:
    result = run(
        ["sh", "-c", script],
        cwd=tmp_path,
        timeout=60,
        wrapper=wrapper(tmp_path, **kwargs),  # type: ignore[arg-type]
        ok_codes=range(256),
    )
    return result.stdout + result.stderr


def test_step_sees_the_environment_not_the_host(tmp_path: Path) -> None:
    out = inside(tmp_path, "cat /etc/os-release; dpkg-query -W -f '${Package} ${Version}\\n'")
    assert "ID=testdistro" in out
    assert "cmake 4.3.0-1" in out  # the environment's dpkg database, read inside


def test_pid_namespace_and_cwd(tmp_path: Path) -> None:
    out = inside(tmp_path, "echo pid=$$; pwd; ls /proc | grep -c '^[0-9]'")
    lines = out.split()
    assert int(lines[0].removeprefix("pid=")) < 10  # a fresh PID namespace
    assert lines[1] == str(tmp_path / "work")
    assert int(lines[2]) < 10  # host processes are not visible


def test_root_is_read_only_and_binds_are_writable(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "objects").write_text("pack")
    out = inside(
        tmp_path,
        f"touch /usr/x 2>/dev/null && echo usr-writable; "
        f"touch /etc/x 2>/dev/null && echo etc-writable; "
        f"touch /newfile 2>/dev/null && echo root-writable; "
        f"touch {cache}/x 2>/dev/null && echo cache-writable; "
        f"cat {cache}/objects; echo; "
        f"echo made > {tmp_path}/work/out; echo tmp > /tmp/t && echo tmp-ok",
        readonly=(cache,),
    )
    assert "writable" not in out, out
    assert "pack" in out  # read-only binds are visible at their host paths
    assert "tmp-ok" in out
    assert (tmp_path / "work/out").read_text() == "made\n"
    assert not (tmp_path / "root/etc/x").exists()


def test_host_files_outside_the_binds_are_invisible(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host only")
    out = inside(
        tmp_path, f"test -e {secret} && echo visible; test -e {Path.cwd()} && echo cwd-visible"
    )
    assert "visible" not in out, out


def test_step_cannot_reach_the_network(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        # the test closes the socket when nothing came in
        with contextlib.suppress(OSError):
            accepted.append(server.accept())

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        out = inside(
            tmp_path,
            "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; "
            f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)' "
            "2>/dev/null && echo connected",
        )
    finally:
        server.close()
    assert out.split()[0] == "lo"  # loopback only
    assert "eth" not in out
    assert "connected" not in out
    assert not accepted


def test_killed_step_leaves_nothing_and_reruns(tmp_path: Path) -> None:
    marker = tmp_path / "work/marker"
    log = tmp_path / "step.log"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "work")}
    started = time.monotonic()
    with pytest.raises(CommandFailed, match="still running"):
        run_streaming(
            ["sh", "-c", "echo $$ > marker; sleep 313.37"],
            cwd=tmp_path / "work",
            timeout=2,
            env=env,
            log_file=log,
            wrapper=wrapper(tmp_path),
        )
    assert time.monotonic() - started < 30
    time.sleep(0.5)
    alive = [
        p
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and _cmdline(p).startswith("sleep\x00313.37")
    ]
    assert not alive, "the sandboxed sleep outlived its step"
    assert marker.exists()
    result = run_streaming(
        ["sh", "-c", "echo again"],
        cwd=tmp_path / "work",
        timeout=30,
        env=env,
        log_file=log,
        wrapper=wrapper(tmp_path),
    )
    assert result.returncode == 0
    assert "again" in log.read_text()


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_text()
    except OSError:
        return ""


def test_a_work_path_under_usr_is_refused(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root", {})
    with pytest.raises(SandboxError, match="under /usr"):
        rootfs_argv(
            "bwrap",
            root_entries(root),
            Binds(writable=(Path("/usr/src/build"),), readonly=()),
            cwd=Path("/usr/src/build"),
        )
    assert os.fspath(root)


def test_an_environment_step_is_not_wrapped_twice(tmp_path: Path) -> None:
    # a stand-in wrapper that reports who started it: xdnaforge itself, not a second bwrap
    wrapper = tmp_path / "wrapper"
    wrapper.write_text('#!/bin/sh\ntr "\\0" " " < /proc/$PPID/cmdline; echo; exec "$@"\n')
    wrapper.chmod(0o755)
    log = tmp_path / "step.log"
    run_streaming(
        ["echo", "inside"],
        cwd=tmp_path,
        timeout=30,
        env={"PATH": "/usr/bin:/bin"},
        log_file=log,
        contain=True,
        wrapper=[str(wrapper)],
    )
    lines = log.read_text().splitlines()
    assert "inside" in lines
    assert "bwrap" not in lines[1], lines[1]
    assert "python" in lines[1] or "pytest" in lines[1]
