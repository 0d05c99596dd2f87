"""Which change a repository missing from the local snapshots leaves unprovable: one whose
repository lies in it, and a whole-tree configure (cmake) above it; a compile of one file
elsewhere stays provable."""

from __future__ import annotations

from xdnaforge.environments.snapshot_tree import Missing, blocking

AIEBU = Missing("xrt/src/runtime_src/core/common/aiebu", "447f55f9", "https://x/aiebu.git")


def test_a_change_inside_the_missing_repository_is_blocked() -> None:
    where = "xrt/src/runtime_src/core/common/aiebu/lib/aie-rt"
    assert blocking(where, ["gcc", "-c", "x.c"], [AIEBU]) == AIEBU
    assert blocking(AIEBU.path, [], [AIEBU]) == AIEBU


def test_configuring_the_tree_above_it_needs_it_compiling_one_file_does_not() -> None:
    assert blocking("xrt", ["cmake", "-S", "src", "-B", "b"], [AIEBU]) == AIEBU
    assert blocking("xrt", ["g++", "-fsyntax-only", "src/utils.h"], [AIEBU]) is None
    assert blocking("xdna-driver-other", ["cmake", "-S", "."], [AIEBU]) is None


def test_the_missing_commit_is_said() -> None:
    assert AIEBU.describe() == (
        "xrt/src/runtime_src/core/common/aiebu at 447f55f9 (https://x/aiebu.git) is not in the "
        "local snapshots"
    )
