"""A set judged together, and what installing it in a throw-away root adds to its verdicts."""

from __future__ import annotations

import io

from tests.debs import Spec, deb_bytes, plugin, xrt_npu
from xdnaforge.debs import judge
from xdnaforge.debs.debfile import DebContents, read_deb_stream
from xdnaforge.debs.observed import Change, Observation, not_run
from xdnaforge.debs.rules import wants_text

FRAME = "#!/bin/sh\nset -e\n"  # debhelper's frame alone: a known script that runs nothing


def contents(spec: Spec) -> DebContents:
    return read_deb_stream(io.BytesIO(deb_bytes(spec)), f"{spec.package}.deb", wants_text)


def scripted_set() -> list[DebContents]:
    shim = plugin()
    shim.scripts["postinst"] = FRAME
    return [contents(xrt_npu()), contents(shim)]


def observation(**fields: object) -> Observation:
    base: dict[str, object] = {
        "status": "observed",
        "reason": "",
        "dpkg_status": 0,
        "dpkg_tail": "Setting up xrt_plugin-amdxdna (2.20.1) ...",
        "tool_calls": (),
        "changes": (
            Change("opt/xilinx/xrt/lib/libxrt_driver_xdna.so.2.20.0", "file"),
            Change("opt/xilinx/xrt/lib/xrt/module/libxdp_core.so.2.20.0", "file"),
        ),
    }
    base.update(fields)
    return Observation(**base)  # type: ignore[arg-type]


def test_a_clean_observation_passes_and_says_so_on_the_scripted_package() -> None:
    debs = scripted_set()
    verdicts = judge.observed(judge.judge_all(debs), debs, observation())
    assert [v.verdict for v in verdicts] == ["pass", "pass"]
    assert verdicts[0].observation == "not needed"  # no scripts: dpkg only unpacks it
    assert verdicts[1].observation.startswith("observed: no module tool ran")


def test_a_module_tool_run_or_a_file_left_outside_blocks() -> None:
    debs = scripted_set()
    seen = observation(
        tool_calls=("modprobe amdxdna",),
        changes=(Change("etc/modprobe.d/amdxdna.conf", "file"), Change("etc/hostname", "removed")),
    )
    shim = judge.observed(judge.judge_all(debs), debs, seen)[1]
    assert shim.verdict == "block"
    found = {(f.rule, f.evidence) for f in shim.findings}
    assert ("OBSERVE-001", "ran: modprobe amdxdna") in found
    assert any(
        rule == "OBSERVE-002"
        and "etc/modprobe.d/amdxdna.conf (file)" in evidence
        and "etc/hostname (removed)" in evidence
        for rule, evidence in found
    )


def test_an_install_that_fails_there_blocks_with_dpkgs_last_line() -> None:
    debs = scripted_set()
    failed = observation(dpkg_status=1, dpkg_tail="...\nErrors were encountered while processing:")
    [finding] = judge.observed(judge.judge_all(debs), debs, failed)[1].findings
    assert finding.rule == "OBSERVE-003"
    assert finding.evidence == "dpkg: exit status 1: Errors were encountered while processing:"


def test_not_run_is_never_a_pass_of_the_observation() -> None:
    debs = scripted_set()
    shim = judge.observed(judge.judge_all(debs), debs, not_run("bwrap is not installed"))[1]
    # the static verdict stands, and the record says the scripts were not observed
    assert shim.verdict == "pass"
    assert shim.observation == "not run: bwrap is not installed"
