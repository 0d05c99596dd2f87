"""Which firmware file a host's amdxdna loads and whether it accepts the blob's protocol
(pure): the driver generation by DRM version, the device's firmware directory, the request
order (names, `updates/` first, compressed suffixes), the protocol rules."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from xdnaforge.compat.facts import FirmwareFile, HostCompat, version_tuple
from xdnaforge.config.kernel import parse_range


@dataclass(frozen=True, slots=True, kw_only=True)
class FirmwareVerdict:
    driver: str | None  # the driver generation or out-of-tree line judged
    tried: tuple[str, ...]  # paths the driver requests, in order
    loads: str | None
    version: str | None
    protocol: str | None
    accepted: bool | None
    why: tuple[str, ...]


def major_minor(text: str | None) -> tuple[int, int] | None:
    parsed = version_tuple(text)
    if parsed is None:
        return None
    return parsed[0], parsed[1] if len(parsed) > 1 else 0


def find_driver(
    host: HostCompat, upstream: dict[str, Any], by_release: bool = False
) -> tuple[dict[str, Any] | None, str]:
    """The driver the host runs: an in-tree generation by the DRM version it reports, or an
    out-of-tree xdna-driver line. The kernel release alone decides only when asked
    (`by_release`: what another kernel would do); otherwise it is named, not judged, since
    vendor kernels backport (Ubuntu's 6.17 OEM kernel reports 0.6)."""
    if host.driver_source == "dkms":
        for line in upstream["xdna_driver"]:
            driver = line.get("out_of_tree_driver")
            label = str(line["label"])
            if driver and host.driver_version and label.split(" ")[0] == host.driver_version:
                return {**driver, "id": f"out-of-tree {label}", "source": "dkms"}, ""
        return None, (
            f"out-of-tree amdxdna {host.driver_version or '(version unknown)'}: no "
            "xdna-driver line in the facts matches it"
        )
    wanted = major_minor(host.drm_version)
    if wanted is not None:
        same = [g for g in upstream["drivers"] if major_minor(g["drm_version"]) == wanted]
        if len(same) == 1:
            return same[0], f"DRM driver version {host.drm_version}"
        if not same:
            return None, f"no in-tree driver generation reports DRM version {host.drm_version}"
        # one DRM version, several drivers (mainline 7.0 still said 0.6): the release decides
        inside = [
            g for g in same if host.kernel and parse_range(g["kernels"]).contains(host.kernel)
        ]
        if len(inside) == 1:
            return inside[0], f"DRM driver version {host.drm_version} on kernel {host.kernel}"
        names = " or ".join(f"{g['id']} (Linux {g['kernels']})" for g in same)
        return None, (
            f"DRM driver version {host.drm_version} is {names}; kernel "
            f"{host.kernel or '(unknown)'} does not say which"
        )
    if host.kernel:
        for generation in upstream["drivers"]:
            if parse_range(generation["kernels"]).contains(host.kernel):
                if by_release:
                    return generation, f"kernel {host.kernel}, by release"
                return None, (
                    f"the DRM driver version is unknown; by its release, kernel {host.kernel} "
                    f"would carry {generation['id']}, but vendor kernels backport, so that is "
                    "not judged (give driver.drm_version)"
                )
    return None, "neither the DRM driver version nor a known kernel release is given"


def device_of(driver: dict[str, Any], host: HostCompat) -> tuple[str | None, str | None, str]:
    """(npu name, firmware directory) the driver uses for the host's NPU."""
    if host.pci is None or host.revision is None:
        return None, None, "the NPU's PCI id and revision are unknown"
    revision = int(host.revision, 16)
    for device in driver.get("devices", []):
        if device["pci"] == host.pci and int(device["revision"], 16) == revision:
            npu = str(device["npu"])
            rule = driver.get("protocol", {}).get(npu, {})
            directory = rule.get("firmware_dir") or f"{host.pci[5:]}_{revision:02x}"
            return npu, directory, ""
    if "devices" not in driver:  # out-of-tree lines do not record their id table here
        directory = f"{host.pci[5:]}_{revision:02x}"
        for npu, rule in driver.get("protocol", {}).items():
            if rule.get("firmware_dir") == directory:
                return str(npu), directory, ""
        return None, directory, f"no npu*_regs.c of this driver names {directory}"
    return None, None, f"the driver binds no device {host.pci} revision {host.revision}"


def search_order(names: list[str], directory: str, upstream: dict[str, Any]) -> list[str]:
    order = upstream["search_order"]
    return [
        f"{prefix}amdnpu/{directory}/{name}{suffix}"
        for name in names
        for suffix in order["compressed"]
        for prefix in order["prefixes"]
    ]


def _blob(host: HostCompat, path: str) -> FirmwareFile | None:
    return next((f for f in host.firmware if f.path == path), None)


def _resolve_version(host: HostCompat, found: FirmwareFile) -> tuple[str | None, FirmwareFile]:
    """The version of the blob a path leads to (following its link)."""
    if found.version:
        return found.version, found
    if found.target:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(found.path), found.target))
        linked = _blob(host, target)
        if linked is not None and linked.version:
            return linked.version, linked
    return None, found


def protocol_of(
    version: str | None, directory: str, upstream: dict[str, Any], given: str | None = None
) -> tuple[int, int | None, bool] | None:
    """(major, minor, minor is a lower bound) of a firmware version, from the facts."""
    if given:
        parsed = version_tuple(given.rstrip("+"))
        if parsed:
            return parsed[0], parsed[1] if len(parsed) > 1 else None, given.endswith("+")
    for blob in upstream["firmware"]:
        if blob["version"] == version and blob["dir"] == directory:
            return int(blob["protocol_major"]), blob["protocol_minor"], bool(blob["minor_at_least"])
    return None


def accepts(rules: list[dict[str, Any]], protocol: tuple[int, int | None, bool]) -> bool | None:
    major, minor, lower_bound = protocol
    for rule in rules:
        if rule["kind"] == "at-least":
            if major != rule["major"]:
                if major > rule["major"]:
                    return True
                continue
        elif major != rule["major"]:
            continue
        if rule["min_minor"] == 0:
            return True
        if minor is None:
            return None
        if minor >= rule["min_minor"]:
            return True
        return None if lower_bound else False
    return False


def protocol_text(protocol: tuple[int, int | None, bool] | None) -> str | None:
    if protocol is None:
        return None
    major, minor, lower = protocol
    return f"{major}" if minor is None else f"{major}.{minor}{'+' if lower else ''}"


def judge_firmware(
    host: HostCompat, upstream: dict[str, Any], by_release: bool = False
) -> FirmwareVerdict:
    driver, how = find_driver(host, upstream, by_release)
    if driver is None:
        return FirmwareVerdict(
            driver=None,
            tried=(),
            loads=None,
            version=None,
            protocol=None,
            accepted=None,
            why=(how,),
        )
    npu, directory, problem = device_of(driver, host)
    if directory is None:
        accepted = False if "binds no device" in problem else None
        return FirmwareVerdict(
            driver=driver["id"],
            tried=(),
            loads=None,
            version=None,
            protocol=None,
            accepted=accepted,
            why=(how, problem),
        )
    tried = search_order(list(driver["firmware_names"]), directory, upstream)
    loads = next((path for path in tried if _blob(host, path) is not None), None)
    why = [f"driver: {driver['id']} (from {how})"]
    if loads is None:
        listed = "nothing" if not host.firmware else ", ".join(f.path for f in host.firmware)
        why.append(
            f"none of {', '.join(tried[:2])} ... exists (found: {listed}); the probe "
            "fails with request_firmware -2"
        )
        accepted = False if host.firmware_listed else None  # not listed: unknown, not absent
        return FirmwareVerdict(
            driver=driver["id"],
            tried=tuple(tried),
            loads=None,
            version=None,
            protocol=None,
            accepted=accepted,
            why=tuple(why),
        )
    found = _blob(host, loads)
    assert found is not None
    version, blob = _resolve_version(host, found)
    protocol = protocol_of(version, directory, upstream, blob.protocol or found.protocol)
    link = f" -> {found.target}" if found.target else ""
    why.append(f"it requests {loads} first among those present{link}")
    rules = driver.get("protocol", {}).get(npu or "", {}).get("rules")
    if version is None and protocol is None:
        why.append("the blob's version is unknown (no `Release x.y.z.w` read, no version given)")
        accepted = None
    elif protocol is None:
        why.append(f"firmware {version}: its protocol is not in the facts")
        accepted = None
    elif not rules:
        why.append(f"the driver's protocol rule for {npu} is not in the facts")
        accepted = None
    else:
        accepted = accepts(rules, protocol)
        wanted = " or ".join(
            f"{r['major']}.{r['min_minor']}{'+' if r['kind'] != 'exact-major' else ''}"
            for r in rules
        )
        verb = {True: "accepts", False: "rejects", None: "may accept"}[accepted]
        why.append(
            f"{driver['id']} {verb} protocol {protocol_text(protocol)} of firmware "
            f"{version or '(version unknown)'} (it takes {wanted} for {npu})"
        )
    return FirmwareVerdict(
        driver=driver["id"],
        tried=tuple(tried),
        loads=loads,
        version=version,
        protocol=protocol_text(protocol),
        accepted=accepted,
        why=tuple(why),
    )
