"""Judging a matrix cell: each expectation against each kind of outcome."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from xdnaforge.config.kernel import parse_range
from xdnaforge.config.matrix import Breakage, Cell, GateFailure, PartialSupport
from xdnaforge.config.project import load_project, stage_names
from xdnaforge.config.recipe import Npu
from xdnaforge.host import HostFacts
from xdnaforge.planning.cell_verdict import (
    AS_EXPECTED,
    FAILS_DIFFERENTLY,
    NOT_ATTEMPTED,
    NOT_JUDGED,
    PASSES_UNEXPECTEDLY,
    UNVERIFIED,
    GateSeen,
    Outcome,
    judge,
)
from xdnaforge.planning.plan import plan_target
from xdnaforge.state.paths import Workspace

BO_LIMIT = Breakage(stage="validate", gate="validate", codes=("exec-cmd-cmd-bo-limit",))
ZIMA = PartialSupport(
    passing=("examine", "pyxrt"),
    failing=(GateFailure(gate="validate", codes=("hwctx-not-ready",)),),
)


def make_cell(
    expect: str, breaks: Breakage | None = None, partial: PartialSupport | None = None
) -> Cell:
    return Cell(
        name="c",
        recipe="r",
        distro_id="ubuntu",
        distro_version="26.04",
        kernel=parse_range(">=7.0, <7.1"),
        npu=Npu(pci="1022:17f0", revision="0x10", name=None),
        expect=expect,
        reason="test",
        evidence="test",
        breaks=breaks,
        partial=partial,
        origin="m.yaml:1",
        key_path="cells[0]",
        positions=(),
    )


def gates(**statuses: str | tuple[str, ...]) -> tuple[GateSeen, ...]:
    """gates(host="pass", validate=("fail", "code"), ...) in the order given."""
    seen = []
    for name, value in statuses.items():
        status, *codes = (value,) if isinstance(value, str) else value
        seen.append(GateSeen(name=name, status=status, codes=tuple(codes)))
    return tuple(seen)


def ran(**statuses: str | tuple[str, ...]) -> Outcome:
    return Outcome(failed_stage=None, stage_codes=(), gates=gates(**statuses), not_validated="")


FETCH = Outcome(failed_stage="fetch", stage_codes=(), gates=None, not_validated="")
NOT_HERE = Outcome(
    failed_stage=None, stage_codes=(), gates=None, not_validated="this host is not in the cell"
)
BO_FAILS = ran(examine="pass", validate=("fail", "exec-cmd-cmd-bo-limit"))


@pytest.mark.parametrize(
    ("cell", "outcome", "kind", "why"),
    [
        (make_cell("known-broken", BO_LIMIT), FETCH, FAILS_DIFFERENTLY, "fails at fetch"),
        (make_cell("known-broken", BO_LIMIT), BO_FAILS, AS_EXPECTED, "gate validate fails"),
        (
            make_cell("known-broken", BO_LIMIT),
            ran(examine="pass", validate=("fail", "cma-heap-bo")),
            FAILS_DIFFERENTLY,
            "fails with cma-heap-bo; expected exec-cmd-cmd-bo-limit",
        ),
        (
            make_cell("known-broken", BO_LIMIT),
            ran(examine="pass", validate="pass"),
            PASSES_UNEXPECTEDLY,
            "gate validate passed",
        ),
        (
            make_cell("known-broken", BO_LIMIT),
            ran(examine=("fail", "no-devices-found"), validate="skip"),
            FAILS_DIFFERENTLY,
            "gate examine fails with no-devices-found, so validate did not run",
        ),
        (make_cell("known-broken", BO_LIMIT), NOT_HERE, NOT_JUDGED, "not in the cell"),
        (
            make_cell("known-broken", Breakage(stage="build-xrt", gate=None, codes=())),
            NOT_HERE,
            PASSES_UNEXPECTEDLY,
            "build-xrt passed",
        ),
        (
            make_cell(
                "known-broken",
                Breakage(stage="build-xrt", gate=None, codes=("build-boost-system",)),
            ),
            Outcome(
                failed_stage="build-xrt",
                stage_codes=("build-boost-system",),
                gates=None,
                not_validated="",
            ),
            AS_EXPECTED,
            "fails at build-xrt (build-boost-system)",
        ),
        (make_cell("supported"), ran(examine="pass", validate="pass"), AS_EXPECTED, "every gate"),
        (make_cell("supported"), BO_FAILS, FAILS_DIFFERENTLY, "expected every gate to pass"),
        (make_cell("supported"), NOT_HERE, NOT_JUDGED, "built and audited"),
        (make_cell("supported"), FETCH, FAILS_DIFFERENTLY, "expected supported"),
        (
            make_cell("partial", partial=ZIMA),
            ran(examine="pass", validate=("fail", "hwctx-not-ready"), pyxrt="pass"),
            AS_EXPECTED,
            "examine, pyxrt pass; validate fails with hwctx-not-ready",
        ),
        (
            make_cell("partial", partial=ZIMA),
            ran(examine="pass", validate="pass", pyxrt="pass"),
            PASSES_UNEXPECTEDLY,
            "gate validate passed",
        ),
        (
            make_cell("partial", partial=ZIMA),
            ran(examine="pass", validate=("fail", "hwctx-not-ready"), pyxrt=("fail",)),
            FAILS_DIFFERENTLY,
            "gate pyxrt did not pass (pyxrt fails with no known diagnosis)",
        ),
        (
            make_cell("partial", partial=ZIMA),
            ran(examine="pass", validate=("fail", "exec-cmd-eio"), pyxrt="pass"),
            FAILS_DIFFERENTLY,
            "gate validate fails with exec-cmd-eio, not hwctx-not-ready",
        ),
        (make_cell("unverified"), FETCH, UNVERIFIED, "fails at fetch"),
    ],
)
def test_verdict(cell: Cell, outcome: Outcome, kind: str, why: str) -> None:
    verdict = judge(cell, outcome)
    assert verdict.kind == kind
    assert why in verdict.why
    assert verdict.news == (kind in (FAILS_DIFFERENTLY, PASSES_UNEXPECTEDLY))
    assert verdict.text.startswith("NEWS: " if verdict.news else kind)


def test_stage_names_are_the_plans_build_pipeline_and_validate() -> None:
    project = load_project(REPO, {})
    for recipe in project.recipes.values():
        space = Workspace(recipe.name, REPO / "build", REPO / "artifacts")
        host = HostFacts(
            sysroot="/",
            distro_id="ubuntu",
            distro_version="26.04",
            distro_name=None,
            kernel=None,
            npus=(),
        )
        plan = plan_target(recipe, (), space, distro=("ubuntu", "26.04"), toolchain={}, host=host)
        planned = [s.name for s in plan.stages if s.name not in ("report", "install")]
        assert list(stage_names(recipe)) == planned


def test_a_cell_whose_sources_could_not_be_fetched_is_not_attempted_never_news() -> None:
    outcome = Outcome(
        failed_stage="fetch",
        stage_codes=(),
        gates=None,
        not_validated="",
        sources="fetch failed: xrt: commit abc is not in mirror /m",
    )
    verdict = judge(make_cell("supported"), outcome)
    assert verdict.kind == NOT_ATTEMPTED
    assert not verdict.news
    assert verdict.text.startswith("not attempted (sources): fetch failed: xrt: commit abc")
    # a known-broken cell that is expected to fail at fetch still fails as expected
    expected = judge(
        make_cell("known-broken", Breakage(stage="fetch", gate=None, codes=())), outcome
    )
    assert expected.kind == AS_EXPECTED
