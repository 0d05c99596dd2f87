"""`doit matrix` on a host where a distro cell and a source cell both apply says which of them
passed: the comparison is the validation records', not advice."""

from __future__ import annotations

from xdnaforge.planning.cell_verdict import Verdict
from xdnaforge.stages.matrix import Row, compare_stacks

KINDS = {"ubuntu26-archive": "distro", "ubuntu26-compat": "source", "upstream-main": "source"}
HERE = {"ubuntu26-npu4-archive", "ubuntu26-npu4"}
FAILED = {
    "gates": [
        {"name": "runtime", "status": "pass", "summary": "ok"},
        {"name": "validate", "status": "fail", "summary": "tests failed: gemm"},
    ]
}


def row(cell: str, recipe: str, validated: str) -> Row:
    return Row(
        cell=cell,
        recipe=recipe,
        expect="unverified",
        expected="unverified",
        built="yes",
        audited="pass",
        installed="yes",
        validated=validated,
        verdict=Verdict(kind="as expected", why="", news=False),
    )


def test_the_archives_stack_passing_makes_the_source_build_unneeded() -> None:
    rows = [row("ubuntu26-npu4-archive", "ubuntu26-archive", "pass")]
    rows.append(row("ubuntu26-npu4", "ubuntu26-compat", "pass"))
    assert compare_stacks(rows, KINDS, HERE, {}) == [
        "the archive's stack passes here (ubuntu26-archive); a source build is not needed. "
        "Source builds: ubuntu26-compat passes here"
    ]


def test_a_skipped_validate_gate_decides_nothing() -> None:
    rows = [
        row("ubuntu26-npu4-archive", "ubuntu26-archive", "pass"),
        row("ubuntu26-npu4", "ubuntu26-compat", "pass"),
    ]
    skipped = {
        "gates": [
            {"name": "runtime", "status": "pass", "summary": "ok"},
            {"name": "validate", "status": "skip", "summary": "skipped: no test data"},
            {"name": "bench", "status": "skip", "summary": "not in the recipe's gates"},
        ]
    }
    [line] = compare_stacks(rows, KINDS, HERE, {"ubuntu26-archive": skipped})
    assert line.startswith(
        "not decided: the archive's stack (ubuntu26-archive) passes the gates that ran here, "
        "but validate did not run (a skip is not a pass)"
    )


def test_a_failing_archive_stack_says_what_it_fails_with() -> None:
    rows = [
        row("ubuntu26-npu4-archive", "ubuntu26-archive", "fail"),
        row("ubuntu26-npu4", "ubuntu26-compat", "pass"),
    ]
    [line] = compare_stacks(rows, KINDS, HERE, {"ubuntu26-archive": FAILED})
    assert line == (
        "the archive's stack fails here (ubuntu26-archive: validate: tests failed: gemm). "
        "Source builds: ubuntu26-compat passes here"
    )


def test_nothing_to_compare_without_both_kinds_on_this_host() -> None:
    rows = [
        row("ubuntu26-npu4-archive", "ubuntu26-archive", "pass"),
        row("elsewhere", "upstream-main", "pass"),
    ]
    assert compare_stacks(rows, KINDS, {"ubuntu26-npu4-archive"}, {}) == []
    not_installed = [
        row("ubuntu26-npu4-archive", "ubuntu26-archive", "not installed here"),
        row("ubuntu26-npu4", "ubuntu26-compat", "fail"),
    ]
    [line] = compare_stacks(not_installed, KINDS, HERE, {"ubuntu26-compat": FAILED})
    assert line.startswith("not compared: the archive's stack ubuntu26-archive is not validated")
    assert line.endswith("ubuntu26-compat fails here (validate: tests failed: gemm)")
