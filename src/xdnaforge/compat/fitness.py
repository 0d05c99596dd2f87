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
    checked: tuple[str, ...] = ()  # what the verdict covers (a consumer's contract items)
    unchecked: tuple[str, ...] = ()  # contract items no host fact could be held against


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
    """Each consumer's contract: the NPUs it runs on, the libraries it loads, its floors and
    its known failures on this NPU, each with its source; `checked` names what was held
    against the host (an item whose host fact is unknown is said as unknown, not checked)."""
    found: dict[str, Finding] = {}
    for consumer in upstream["consumers"]:
        fails: list[str] = []
        unknown: list[str] = []
        checked: list[str] = []
        unchecked: list[str] = []
        source = consumer.get("from", "?")
        _npus(consumer, host, fails, unknown, checked)
        _libraries(consumer, host, fails, unchecked, checked)
        _floors(consumer["floors"], host, fw, fails, unknown, checked)
        _known_failures(consumer, host, fails, unknown, checked, unchecked)
        ok = False if fails else (None if unknown else True)
        why = fails + unknown or [f"contract met (from {source})"]
        found[str(consumer["name"])] = Finding(
            ok=ok, why=tuple(why), checked=tuple(checked), unchecked=tuple(unchecked)
        )
    return found


def _npus(
    consumer: dict[str, Any],
    host: HostCompat,
    fails: list[str],
    unknown: list[str],
    checked: list[str],
) -> None:
    npus = consumer.get("npus")
    if not npus:
        return
    family = npus.get("name") or "its NPUs"
    if host.pci is None:
        unknown.append(
            f"runs on {family} NPUs ({', '.join(npus['pci'])}) only; this NPU is unknown"
        )
        return
    checked.append(f"NPU generation ({family}: {', '.join(npus['pci'])})")
    if host.pci not in npus["pci"]:
        fails.append(
            f"runs on {family} NPUs ({', '.join(npus['pci'])}) only; this one is {host.pci} "
            "(1022:1502 is XDNA: Phoenix / Hawk Point), whatever the driver "
            f"(from {consumer['from']})"
        )


def _libraries(
    consumer: dict[str, Any],
    host: HostCompat,
    fails: list[str],
    unchecked: list[str],
    checked: list[str],
) -> None:
    for library in consumer.get("needs_libraries", []):
        if host.plugin is None:
            unchecked.append(f"userspace plugin {library} (whether it is installed was not read)")
            continue
        checked.append(f"userspace plugin {library}")
        if host.plugin is False:
            fails.append(
                f"loads {library} (the XRT amdxdna plugin), which the installed XRT lacks "
                f"(from {consumer['from']})"
            )


def _floors(
    floors: dict[str, Any],
    host: HostCompat,
    fw: FirmwareVerdict,
    fails: list[str],
    unknown: list[str],
    checked: list[str],
) -> None:
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
            continue
        checked.append(f"{name} >= {floor}")
        if not state:
            fails.append(f"{name} {value} < {floor}")
    if "firmware" in floors:
        if fw.accepted is False:
            checked.append(f"running firmware >= {floors['firmware']}")
            fails.append(
                f"no running firmware: the driver rejects {fw.loads or 'any'} "
                f"(needs >= {floors['firmware']})"
            )
        elif running is None:
            unknown.append(f"running firmware unknown (needs >= {floors['firmware']})")
        else:
            checked.append(f"running firmware >= {floors['firmware']}")
            if not at_least(running, floors["firmware"]):
                fails.append(f"firmware {running} < {floors['firmware']}")
    if "columns" in floors and host.columns is not None:
        checked.append(f"columns >= {floors['columns']}")
        if host.columns < floors["columns"]:
            fails.append(f"{host.columns} AIE columns < {floors['columns']}")
    memlock = floors.get("memlock_bytes")
    if memlock and host.memlock_bytes is not None:
        checked.append("memlock")
        if 0 <= host.memlock_bytes < memlock:
            fails.append(f"memlock {host.memlock_bytes} bytes < {memlock} (it tries to raise it)")


def _known_failures(
    consumer: dict[str, Any],
    host: HostCompat,
    fails: list[str],
    unknown: list[str],
    checked: list[str],
    unchecked: list[str],
) -> None:
    rows = consumer.get("known_failures", [])
    if not rows:
        return
    if host.pci is None or host.revision is None:
        unchecked.append("known failures per NPU (this NPU's revision is unknown)")
        return
    checked.append("known failures on this NPU")
    version = host.userspace.get(str(consumer["name"]).lower())
    for row in rows:
        if row["pci"] != host.pci or int(row["revision"], 16) != int(host.revision, 16):
            continue
        failure = (
            f"known failure on {row['pci']} rev {row['revision']} with {consumer['name']} "
            f"{row['releases']}: {row['symptom']} ({row['source']})"
        )
        affected = _in_releases(version, row["releases"])
        if affected is False:
            continue
        if affected:
            fails.append(failure)
        else:
            unknown.append(failure + f"; the installed {consumer['name']} version decides")


def _in_releases(version: str | None, releases: str) -> bool | None:
    """`>0.9.44` / `<=1.2` / `==0.9.40` against a version; None if it is unknown."""
    if version is None:
        return None
    for op in (">=", "<=", "==", ">", "<"):
        if releases.startswith(op):
            have, bound = version_tuple(version), version_tuple(releases[len(op) :])
            if have is None or bound is None:
                return None
            return {
                ">=": have >= bound,
                "<=": have <= bound,
                "==": have == bound,
                ">": have > bound,
                "<": have < bound,
            }[op]
    return None
