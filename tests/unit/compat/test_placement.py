"""Which cell a host is in: its DRM driver version decides where the compat facts know the
driver a cell's kernel range carries; the release decides only where they do not."""

from __future__ import annotations

import dataclasses

from tests.conftest import REPO
from xdnaforge.compat import facts
from xdnaforge.compat.facts import HostCompat
from xdnaforge.compat.placement import cell_drivers, host_cells, host_drivers, overlaps
from xdnaforge.config.kernel import parse_range
from xdnaforge.config.project import load_project
from xdnaforge.host import HostFacts, PciFunction

UPSTREAM = facts.load_upstream()
CELLS = load_project(REPO, {}).cells()
SEED = HostCompat(
    kernel="7.0.0-27-generic",
    distro_id="ubuntu",
    distro_version="26.04",
    pci="1022:17f0",
    revision="0x10",
    driver_source="in-tree",
    drm_version="0.7.0",
)


def ubuntu(kernel: str) -> HostFacts:
    npu = PciFunction(
        slot="0000:c5:00.1", vendor="1022", device="17f0", revision="0x10", driver="amdxdna"
    )
    return HostFacts(
        sysroot="/",
        distro_id="ubuntu",
        distro_version="26.04",
        distro_name="Ubuntu 26.04",
        kernel=kernel,
        npus=(npu,),
    )


def test_ranges_overlap_at_their_bounds_and_not_past_them() -> None:
    assert overlaps(parse_range(">=7.0, <7.1"), parse_range(">=7.0"))
    assert overlaps(parse_range(">=6.19, <7.0"), parse_range(">=6.14, <6.20"))
    assert not overlaps(parse_range(">=7.0, <7.1"), parse_range(">=7.1, <7.2"))
    assert not overlaps(parse_range(">=6.14, <6.18"), parse_range(">=6.18, <6.19"))
    # a bound compares as many parts as it names: ">7.0" starts at 7.1, "==7.0.3" is in ">=7.0"
    assert not overlaps(parse_range("==7.0.3"), parse_range(">7.0"))
    assert overlaps(parse_range("==7.0.3"), parse_range(">=7.0, <7.1"))


def test_a_cells_range_carries_the_drivers_the_facts_date_to_it() -> None:
    assert cell_drivers(parse_range(">=7.0, <7.1"), UPSTREAM) == ["in-tree-0.6-7.0", "in-tree-0.7"]
    # 6.14 to 6.17 carry the driver that reports no version (DRM 0.0)
    assert cell_drivers(parse_range(">=6.14, <6.18"), UPSTREAM) == ["in-tree-0.0"]
    assert cell_drivers(parse_range(">=6.10, <6.14"), UPSTREAM) == []


def test_one_drm_version_of_two_drivers_is_told_apart_by_the_release() -> None:
    assert host_drivers(SEED, UPSTREAM) == ["in-tree-0.7"]
    fedora = dataclasses.replace(SEED, kernel="7.0.9-200.fc44.x86_64", drm_version="0.6.0")
    assert host_drivers(fedora, UPSTREAM) == ["in-tree-0.6-7.0"]
    # 0.6 on a 6.17 vendor kernel: 6.19's or mainline 7.0's, the release does not say which
    oem = dataclasses.replace(SEED, kernel="6.17.0-1010-oem", drm_version="0.6.0")
    assert host_drivers(oem, UPSTREAM) == ["in-tree-0.6", "in-tree-0.6-7.0"]
    assert host_drivers(dataclasses.replace(SEED, driver_source="dkms"), UPSTREAM) == []


def test_the_seed_host_is_in_its_cells_by_driver_and_release_alike() -> None:
    inside, moved = host_cells(CELLS, ubuntu("7.0.0-27-generic"), SEED)
    assert {c.name for c in inside} >= {"ubuntu26-npu4", "ubuntu26-npu4-upstream-main"}
    assert moved == {}


def test_a_backported_driver_puts_a_host_in_the_cell_its_release_is_outside() -> None:
    host = ubuntu("6.17.0-1010-oem")
    backport = dataclasses.replace(SEED, kernel=host.kernel)
    inside, moved = host_cells(CELLS, host, backport)
    assert "ubuntu26-npu4" in {c.name for c in inside}
    assert moved["ubuntu26-npu4"] == (
        "by driver: its amdxdna reports DRM 0.7.0 (in-tree-0.7), a backport, which Linux "
        ">=7.0, <7.1 carries (kernel 6.17.0-1010-oem is outside that range)"
    )
    # without the driver's word the release decides: no cell
    assert host_cells(CELLS, host, None)[0] == []


def test_a_newer_driver_takes_a_host_out_of_the_cell_its_release_is_in() -> None:
    host = ubuntu("7.0.5-31-generic")
    newer = dataclasses.replace(SEED, kernel=host.kernel, drm_version="0.10.0")
    inside, moved = host_cells(CELLS, host, newer)
    assert "ubuntu26-npu4" not in {c.name for c in inside}
    assert moved["ubuntu26-npu4"] == (
        "by driver: its amdxdna reports DRM 0.10.0 (in-tree-0.10); Linux >=7.0, <7.1 carries "
        "in-tree-0.6-7.0, in-tree-0.7 (kernel 7.0.5-31-generic is in that range)"
    )


def test_an_unknown_or_out_of_tree_driver_leaves_the_release_to_decide() -> None:
    host = ubuntu("7.0.5-31-generic")
    for compat in (
        dataclasses.replace(SEED, drm_version=None),
        dataclasses.replace(SEED, driver_source="dkms", driver_version="2.21.0"),
    ):
        inside, moved = host_cells(CELLS, host, compat)
        assert "ubuntu26-npu4" in {c.name for c in inside}
        assert moved == {}


def test_a_later_release_with_the_cells_driver_is_not_called_a_backport() -> None:
    # a 7.1 release still reporting 0.7.0 (a distro that held the driver back)
    host = ubuntu("7.1.2-3-generic")
    held = dataclasses.replace(SEED, kernel=host.kernel)
    inside, moved = host_cells(CELLS, host, held)
    assert "ubuntu26-npu4" in {c.name for c in inside}
    assert "the same driver on a later release" in moved["ubuntu26-npu4"]
