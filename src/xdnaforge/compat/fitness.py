"""Whether each recipe's `driver:` contract holds on a host, and whether each downstream
consumer's floors are met (pure; unknown stays unknown)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdnaforge.compat.facts import HostCompat, at_least, version_tuple
from xdnaforge.compat.firmware import FirmwareVerdict, find_driver
from xdnaforge.config import recipe as recipe_model


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One judged thing: True / False / None (unknown), with why."""

    ok: bool | None
    why: tuple[str, ...]


def judge_recipe(
    recipe: recipe_model.Recipe, host: HostCompat, fw: FirmwareVerdict, upstream: dict[str, Any]
) -> Finding:
    """The recipe's `driver:` contract and its NPU list held against the host."""
    contract = recipe.driver
    fails: list[str] = []
    unknown: list[str] = []
    passes: list[str] = []
    if host.pci is None:
        return Finding(ok=None, why=("no NPU is known on this host",))
    if host.pci is not None:
        wanted = [
            n
            for n in recipe.hosts.npus
            if n.pci == host.pci
            and (
                n.revision is None
                or host.revision is None
                or int(n.revision, 16) == int(host.revision, 16)
            )
        ]
        if not wanted:
            listed = ", ".join(f"{n.pci} rev {n.revision or 'any'}" for n in recipe.hosts.npus)
            fails.append(f"made for NPU {listed}, this one is {host.pci} rev {host.revision}")
    driver, _ = find_driver(host, upstream)
    if contract.drm_version:
        state = at_least(host.drm_version, contract.drm_version)
        if state is None:
            unknown.append(f"needs DRM driver >= {contract.drm_version}; the host's is unknown")
        elif state:
            passes.append(f"DRM driver {host.drm_version} >= {contract.drm_version}")
        else:
            fails.append(
                f"needs DRM driver >= {contract.drm_version}, the host has {host.drm_version}"
            )
    if contract.firmware_protocol_major is not None:
        proto = version_tuple(fw.protocol.rstrip("+")) if fw.protocol else None
        if proto is None:
            unknown.append(
                f"needs firmware protocol {contract.firmware_protocol_major}; the "
                "loaded firmware's is unknown"
            )
        elif proto[0] != contract.firmware_protocol_major:
            fails.append(
                f"needs firmware protocol {contract.firmware_protocol_major}, "
                f"{fw.loads} speaks {fw.protocol}"
            )
        else:
            passes.append(f"firmware protocol {fw.protocol}")
    if contract.cmd_bo_max_bytes is not None:
        if driver is None or not driver.get("cmd_bo_limit_known"):
            unknown.append(
                f"creates command BOs of {contract.cmd_bo_max_bytes} bytes; this "
                "driver's limit is unknown"
            )
        elif driver.get("cmd_bo_limit_bytes") is None:
            passes.append("the driver caps no command BO")
        elif contract.cmd_bo_max_bytes > driver["cmd_bo_limit_bytes"]:
            fails.append(
                f"creates command BOs of {contract.cmd_bo_max_bytes} bytes, "
                f"{driver['id']} rejects those over {driver['cmd_bo_limit_bytes']} "
                "(DRM_IOCTL_AMDXDNA_CREATE_BO / EXEC_CMD EINVAL)"
            )
        else:
            passes.append(
                f"command BOs of {contract.cmd_bo_max_bytes} bytes <= the driver's "
                f"{driver['cmd_bo_limit_bytes']}"
            )
    if contract.firmware_version and fw.version and fw.version != contract.firmware_version:
        passes.append(
            f"(proven with firmware {contract.firmware_version}; this host loads {fw.version})"
        )
    if fails:
        return Finding(ok=False, why=tuple(fails + unknown))
    if unknown or not passes:
        unstated = [f"{field} not known: {reason}" for field, reason in contract.unknown]
        return Finding(
            ok=None,
            why=tuple(
                unknown
                or unstated
                or [
                    "the recipe's driver contract states no "
                    "DRM version, protocol or command BO size"
                ]
            ),
        )
    return Finding(ok=True, why=tuple(passes))


def judge_consumers(
    host: HostCompat, fw: FirmwareVerdict, upstream: dict[str, Any]
) -> dict[str, Finding]:
    found: dict[str, Finding] = {}
    for consumer in upstream["consumers"]:
        floors = consumer["floors"]
        fails: list[str] = []
        unknown: list[str] = []
        checks = [
            ("kernel", host.kernel, floors.get("kernel")),
            ("DRM driver version", host.drm_version, floors.get("drm_version")),
        ]
        running = host.running_firmware or (fw.version if fw.accepted else None)
        for name, value, floor in checks:
            if floor is None:
                continue
            state = at_least(value.split("-")[0] if value else None, floor)
            if state is None:
                unknown.append(f"{name} unknown (needs >= {floor})")
            elif not state:
                fails.append(f"{name} {value} < {floor}")
        if "firmware" in floors:
            if fw.accepted is False:
                fails.append(
                    f"no running firmware: the driver rejects {fw.loads or 'any'} "
                    f"(needs >= {floors['firmware']})"
                )
            elif running is None:
                unknown.append(f"running firmware unknown (needs >= {floors['firmware']})")
            elif not at_least(running, floors["firmware"]):
                fails.append(f"firmware {running} < {floors['firmware']}")
        if "columns" in floors and host.columns is not None and host.columns < floors["columns"]:
            fails.append(f"{host.columns} AIE columns < {floors['columns']}")
        memlock = floors.get("memlock_bytes")
        if memlock and host.memlock_bytes is not None and 0 <= host.memlock_bytes < memlock:
            fails.append(f"memlock {host.memlock_bytes} bytes < {memlock} (it tries to raise it)")
        ok = False if fails else (None if unknown else True)
        found[str(consumer["name"])] = Finding(ok=ok, why=tuple(fails + unknown) or ("floors met",))
    return found
