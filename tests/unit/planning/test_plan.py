"""Planning: stage order, fingerprints that change exactly downstream of a change, matching."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tests.conftest import REPO
from xdnaforge.config.matrix import matching_cells
from xdnaforge.config.project import Project, load_project
from xdnaforge.config.recipe import Justified
from xdnaforge.host import HostFacts, PciFunction
from xdnaforge.planning.plan import Plan, plan_target, stage_status
from xdnaforge.state.paths import Workspace

PROJECT: Project = load_project(REPO, {})
SPACE = Workspace("ubuntu26-compat", Path("/b"), Path("/a"))
DISTRO = ("ubuntu", "26.04")
HOST = HostFacts(
    sysroot="/", distro_id="ubuntu", distro_version="26.04", distro_name=None, kernel=None, npus=()
)


def make_plan(**changes: object) -> Plan:
    recipe = PROJECT.recipes["ubuntu26-compat"]
    patches = PROJECT.patches_for(recipe)
    if "patches" in changes:
        patches = changes.pop("patches")  # type: ignore[assignment]
    distro = changes.pop("distro", DISTRO)
    toolchain = changes.pop("toolchain", {"gcc": "15.2"})
    recipe = dataclasses.replace(recipe, **changes)  # type: ignore[arg-type]
    return plan_target(recipe, patches, SPACE, distro=distro, toolchain=toolchain, host=HOST)  # type: ignore[arg-type]


def fingerprints(plan: Plan) -> dict[str, str]:
    return {s.name: s.fingerprint for s in plan.stages}


def changed(a: Plan, b: Plan) -> set[str]:
    fa, fb = fingerprints(a), fingerprints(b)
    return {name for name in fa if fa[name] != fb[name]}


def test_stage_order() -> None:
    names = [s.name for s in make_plan().stages]
    assert names == [
        "fetch",
        "patch",
        "deps",
        "build-xrt",
        "build-shim",
        "package",
        "audit",
        "report",
        "install",
        "validate",
    ]


def test_plan_is_deterministic() -> None:
    assert fingerprints(make_plan()) == fingerprints(make_plan())


def test_a_changed_patch_invalidates_patch_and_everything_built_from_it() -> None:
    base = make_plan()
    patches = list(PROJECT.patches_for(PROJECT.recipes["ubuntu26-compat"]))
    patches[0] = dataclasses.replace(patches[0], sha256="0" * 64)
    assert changed(base, make_plan(patches=tuple(patches))) == {
        "patch",
        "build-xrt",
        "build-shim",
        "package",
        "audit",
        "report",
        "install",
    }


def test_a_new_toolchain_rebuilds_but_does_not_refetch() -> None:
    assert changed(make_plan(), make_plan(toolchain={"gcc": "15.3"})) == {
        "build-xrt",
        "build-shim",
        "package",
        "audit",
        "report",
        "install",
    }


def test_the_running_kernel_is_not_an_input() -> None:
    # the plan API has no kernel parameter at all; a distro change, by contrast, rebuilds
    assert "deps" in changed(make_plan(), make_plan(distro=("ubuntu", "26.10")))
    assert "fetch" not in changed(make_plan(), make_plan(distro=("ubuntu", "26.10")))


def test_stage_status_explains_why() -> None:
    stage = make_plan().stage("build-xrt")
    assert stage_status(stage, None) == (False, "never run (no record)")
    fresh = {"fingerprints": {"build-xrt": stage.fingerprint}}
    assert stage_status(stage, fresh) == (True, "up to date")
    before = dict(stage.inputs)
    before["argv"] = ["./build.sh", "-npu"]
    stale = {"fingerprints": {"build-xrt": "x"}, "inputs": {"build-xrt": before}}
    assert stage_status(stage, stale) == (False, "inputs changed: argv")


def test_deps_stage_always_runs() -> None:
    assert stage_status(make_plan().stage("deps"), None) == (False, "runs every time")


def host(kernel: str, revision: str, distro: tuple[str, str] = DISTRO) -> HostFacts:
    npu = PciFunction(
        slot="0000:c5:00.1", vendor="1022", device="17f0", revision=revision, driver="amdxdna"
    )
    return HostFacts(
        sysroot="/",
        distro_id=distro[0],
        distro_version=distro[1],
        distro_name=None,
        kernel=kernel,
        npus=(npu,),
    )


def test_matching_cells_for_the_seed_hosts() -> None:
    cells = PROJECT.cells()
    names = {c.name for c in matching_cells(cells, host("7.0.0-27-generic", "0x10"))}
    assert names == {
        "ubuntu26-npu4",
        "ubuntu26-npu4-upstream-main",
        "ubuntu26-npu4-archive",
        "ubuntu26-npu4-xdna-1-8",  # unverified candidates of doit track
        "ubuntu26-npu4-xdna-1-9",
    }
    zima = matching_cells(cells, host("6.18.9", "0x11", ("zimaos", "1.7")))
    assert [c.recipe for c in zima] == ["xdna-2.21.75", "xdna-1.7"]
    assert matching_cells(cells, host("7.1.0-3-generic", "0x10")) == []
    assert matching_cells(cells, host("7.0.0-27-generic", "0x11")) == []


def test_a_container_runtime_is_an_input_of_the_audit_alone() -> None:
    base = make_plan()
    hosts = base.recipe.hosts
    container = dataclasses.replace(hosts, runtime="container", runtime_image="ubuntu:26.04")
    in_container = make_plan(hosts=container)
    assert changed(base, in_container) == {"audit", "report", "install"}
    audit = in_container.stage("audit")
    assert "/a/ubuntu26-compat/container/Containerfile" in audit.produces
    other_image = dataclasses.replace(container, runtime_image="ubuntu:26.10")
    assert changed(in_container, make_plan(hosts=other_image)) == {"audit", "report", "install"}


COLLECTED = {"package", "audit", "report", "install"}


def test_what_to_collect_reruns_the_package_stage_not_the_compile() -> None:
    steps = PROJECT.recipes["ubuntu26-compat"].steps
    for change in (
        {"packages": ("Release/*.deb",)},
        {"produces": (*steps[0].produces, "xrt-runtime")},
        {"choose": (("xrt-runtime", "Release/xrt_*-Runtime.deb"),)},
    ):
        edited = (dataclasses.replace(steps[0], **change), *steps[1:])
        assert changed(make_plan(), make_plan(steps=edited)) == COLLECTED, change


def test_what_does_not_change_the_compile_reruns_nothing_built() -> None:
    steps = PROJECT.recipes["ubuntu26-compat"].steps
    edited = (dataclasses.replace(steps[0], timeout_minutes=5, ctest=None), *steps[1:])
    assert changed(make_plan(), make_plan(steps=edited)) == set()
    assert changed(make_plan(), make_plan(description="edited")) == set()


def test_an_argv_change_rebuilds_that_step_and_the_later_ones() -> None:
    steps = PROJECT.recipes["ubuntu26-compat"].steps
    edited = (steps[0], dataclasses.replace(steps[1], argv=(*steps[1].argv, "-verbose")))
    assert changed(make_plan(), make_plan(steps=edited)) == {"build-shim"} | COLLECTED


def test_a_reworded_waiver_reaudits_without_recollecting() -> None:
    recipe = PROJECT.recipes["ubuntu26-compat"]
    waiver = Justified(name="udev-mode-0666", package="xrt-npu", justification="because")
    assert changed(make_plan(), make_plan(waivers=(*recipe.waivers, waiver))) == {
        "audit",
        "report",
        "install",
    }
    reworded = dataclasses.replace(waiver, justification="a better reason")
    assert changed(
        make_plan(waivers=(*recipe.waivers, waiver)),
        make_plan(waivers=(*recipe.waivers, reworded)),
    ) == {"audit", "report", "install"}
