"""Reading a process tree from a /proc-like directory: the tree below a pid, the processes
that carry a run's marker in their environment."""

from __future__ import annotations

from pathlib import Path

from xdnaforge.process.containment import (
    RUN_VARIABLE,
    STEP_VARIABLE,
    descendants,
    marked,
    read_process,
)


def fake_proc(
    root: Path, pid: int, parent: int, comm: str, state: str = "S", env: str = ""
) -> None:
    folder = root / str(pid)
    folder.mkdir(parents=True)
    # comm may hold spaces and parentheses: the kernel does not escape them
    (folder / "stat").write_text(f"{pid} ({comm}) {state} {parent} 1 1 0 -1\n")
    (folder / "cmdline").write_text(comm.replace(" ", "\0") + "\0")
    (folder / "environ").write_text(env.replace(" ", "\0"))


def test_the_tree_below_a_pid_includes_what_left_the_group(tmp_path: Path) -> None:
    fake_proc(tmp_path, 10, 1, "bwrap")
    fake_proc(tmp_path, 11, 10, "bwrap")
    fake_proc(tmp_path, 12, 11, "build.sh")
    fake_proc(tmp_path, 13, 11, "cc1plus (x)")  # an orphan adopted by the namespace's init
    fake_proc(tmp_path, 14, 12, "make", state="Z")  # exited: nothing to stop
    fake_proc(tmp_path, 20, 1, "unrelated")
    found = descendants(10, tmp_path)
    assert [(p.pid, p.name) for p in found] == [
        (11, "bwrap"),
        (12, "build.sh"),
        (13, "cc1plus (x)"),
    ]


def test_a_vanished_process_is_none(tmp_path: Path) -> None:
    assert read_process(99, tmp_path) is None


def test_processes_carrying_the_run_marker_name_their_step(tmp_path: Path) -> None:
    fake_proc(
        tmp_path, 30, 1, "sh", env=f"PATH=/bin {RUN_VARIABLE}=abc {STEP_VARIABLE}=build-xrt@t"
    )
    fake_proc(tmp_path, 31, 1, "sh", env=f"{RUN_VARIABLE}=other {STEP_VARIABLE}=build-shim@t")
    fake_proc(tmp_path, 32, 1, "sh", env=f"{RUN_VARIABLE}=abcd")
    assert [(p.pid, step) for p, step in marked("abc", tmp_path)] == [(30, "build-xrt@t")]
