"""Which matrix cell a host is in, by the driver it runs rather than by its kernel release.

A cell names a kernel range; what the userspace meets is the amdxdna driver that range
carries. Vendor kernels backport (Ubuntu's 6.17 OEM kernel reports DRM 0.6) and one release
can carry two drivers (mainline 7.0 said 0.6, Ubuntu's 7.0.0-27 says 0.7), so when the host's
DRM driver version identifies its driver generation and the compat facts know which
generations the cell's range carries, the driver decides, in both directions. Otherwise the
release decides, and the placement says so. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xdnaforge.compat.facts import HostCompat, load_upstream
from xdnaforge.compat.firmware import major_minor
from xdnaforge.config.kernel import KernelRange, parse_range
from xdnaforge.config.matrix import Cell, matching_cells
from xdnaforge.host import HostFacts


@dataclass(frozen=True, slots=True)
class Placement:
    cell: Cell
    inside: bool
    why: str  # how it was decided: by the driver, or by the release alone


def _probes(ranges: Sequence[KernelRange]) -> list[str]:
    """Releases at and just past every bound: two ranges overlap iff one of them is in both."""
    found = {"0.0.0-0"}
    for kernel_range in ranges:
        for _, bound in kernel_range.constraints:
            padded = (*bound, 0, 0, 0, 0)[:4]
            found.add("{}.{}.{}-{}".format(*padded))
            for index in range(4):
                bumped = list(padded)
                bumped[index] += 1
                bumped[index + 1 :] = [0] * (3 - index)
                found.add("{}.{}.{}-{}".format(*bumped))
    return sorted(found)


def overlaps(first: KernelRange, second: KernelRange) -> bool:
    return any(first.contains(p) and second.contains(p) for p in _probes([first, second]))


def cell_drivers(kernel: KernelRange, upstream: dict[str, Any]) -> list[str]:
    """The in-tree driver generations (ids) the kernel releases of a cell carry."""
    return [
        str(g["id"])
        for g in upstream["drivers"]
        if g.get("source", "in-tree") == "in-tree" and overlaps(kernel, parse_range(g["kernels"]))
    ]


def host_drivers(host: HostCompat, upstream: dict[str, Any]) -> list[str]:
    """The in-tree generations the host's DRM driver version names (several when one version
    was reported by more than one driver and the release does not tell them apart)."""
    wanted = major_minor(host.drm_version)
    if wanted is None or host.driver_source == "dkms":
        return []
    same = [g for g in upstream["drivers"] if major_minor(g["drm_version"]) == wanted]
    inside = [g for g in same if host.kernel and parse_range(g["kernels"]).contains(host.kernel)]
    return [str(g["id"]) for g in (inside if len(inside) == 1 else same)]


def _why_outside(kernel_range: KernelRange, release: str | None) -> str:
    """Why a host outside a range runs that range's driver: older (a vendor backport) or
    newer (the driver did not change)."""
    lower = tuple((op, bound) for op, bound in kernel_range.constraints if op in (">=", ">"))
    if release and lower and not KernelRange(text="", constraints=lower).contains(release):
        return "a backport"
    return "the same driver on a later release"


def place(
    cells: Sequence[Cell],
    by_release: Sequence[Cell],
    host: HostCompat,
    upstream: dict[str, Any],
) -> list[Placement]:
    """Every cell whose distro and NPU match the host (`cells`), in or out by its driver;
    `by_release`: the cells the kernel release alone puts the host in."""
    released = {c.name for c in by_release}
    running = host_drivers(host, upstream)
    placed = []
    for cell in cells:
        carried = cell_drivers(cell.kernel, upstream)
        in_range = cell.name in released
        release_word = "in" if in_range else "outside"
        if not running or not carried:
            unknown = (
                "the out-of-tree amdxdna"
                if host.driver_source == "dkms"
                else "the DRM driver version is unknown"
                if not running
                else f"the compat facts know no in-tree driver of Linux {cell.kernel.text}"
            )
            placed.append(
                Placement(
                    cell,
                    in_range,
                    f"by release: kernel {host.kernel} is {release_word} {cell.kernel.text} "
                    f"({unknown})",
                )
            )
            continue
        common = sorted(set(running) & set(carried))
        driver = f"its amdxdna reports DRM {host.drm_version} ({' or '.join(running)})"
        if common:
            backport = "" if in_range else f", {_why_outside(cell.kernel, host.kernel)}"
            why = f"by driver: {driver}{backport}, which Linux {cell.kernel.text} carries" + (
                "" if in_range else f" (kernel {host.kernel} is outside that range)"
            )
            placed.append(Placement(cell, True, why))
        else:
            placed.append(
                Placement(
                    cell,
                    False,
                    f"by driver: {driver}; Linux {cell.kernel.text} carries "
                    f"{', '.join(carried)}"
                    + (f" (kernel {host.kernel} is in that range)" if in_range else ""),
                )
            )
    return placed


def host_cells(
    cells: Sequence[Cell], host: HostFacts, compat: HostCompat | None
) -> tuple[list[Cell], dict[str, str]]:
    """The cells this host is in, and for each cell the driver moved in or out, why. With the
    running driver's facts (`compat`) the DRM driver version decides; without, the release."""
    by_release = matching_cells(cells, host)
    if compat is None:
        return by_release, {}
    placed = place(
        matching_cells(cells, host, any_kernel=True), by_release, compat, load_upstream()
    )
    moved = {p.cell.name: p.why for p in placed if p.inside != (p.cell in by_release)}
    return [p.cell for p in placed if p.inside], moved
