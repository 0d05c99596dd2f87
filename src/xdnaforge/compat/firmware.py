"""Which firmware file a host's amdxdna loads and whether it accepts the blob's protocol
(pure): the driver generation by DRM version, the device's firmware directory, the request
order (names, `updates/` first, compressed suffixes), the protocol rules."""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, replace
from typing import Any

from xdnaforge.compat.evidence import LogEvidence, read_log
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
    wanted = major_minor(host.drm_version)
    in_tree = wanted is not None and wanted[0] == 0
    if (host.driver_source == "dkms" and not in_tree) or (wanted is not None and wanted[0] >= 1):
        # xdna-driver's own amdxdna reports DRM 1.0; a DKMS build of the in-tree driver
        # reports its generation's 0.x and is judged as that generation below
        backport = major_minor(host.driver_version)
        if host.driver_source == "dkms" and backport is not None and backport[0] >= 5:
            # a DKMS package of the in-tree driver carries the kernel release it is from
            for generation in upstream["drivers"]:
                if parse_range(generation["kernels"]).contains(host.driver_version or ""):
                    return generation, (
                        f"a DKMS backport of Linux {host.driver_version}'s in-tree amdxdna "
                        "(its version is a kernel release), judged as that release's driver"
                    )
        return out_of_tree_era(host.driver_version, upstream)
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


_DKMS_VERSION_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")


def _triple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def out_of_tree_era(
    version: str | None, upstream: dict[str, Any]
) -> tuple[dict[str, Any] | None, str]:
    """The out-of-tree driver's era by the version its module and DKMS package carry (the XRT
    version of its commit: `2.21.75`, `2.23.0_20260407,<hash>`). A patch of 0 is a build
    from source, which any commit of that major.minor makes: when the eras in that span
    request or accept differently, the version does not decide."""
    eras = upstream.get("out_of_tree", [])
    deciding = (
        "the firmware name the module requests (`modinfo -F firmware amdxdna`, or the "
        "kernel log's request_firmware line: npu.sbin or npu.dev.sbin)"
    )
    match = _DKMS_VERSION_RE.match(version or "")
    if not eras:
        return None, "the facts hold no out-of-tree driver"
    if match is None:
        return None, (
            f"out-of-tree amdxdna, version {version or 'unknown'}: not a version; "
            f"what decides is {deciding}"
        )
    major, minor = int(match.group(1)), int(match.group(2))
    patch = int(match.group(3) or 0)
    low, high = (major, minor, patch), (major, minor, patch)
    if patch == 0:
        high = (major, minor, 1 << 30)
    spans = [
        (_triple(e["first_seen"]["xrt_version"]), _triple(e["last_seen"]["xrt_version"]), e)
        for e in eras
    ]
    # an era holds from its first version up to the next era's first, and at least to its
    # last (the rename's parent and the rename carry one version: both hold it)
    candidates = []
    for index, (first, last, era) in enumerate(spans):
        upto = spans[index + 1][0] if index + 1 < len(spans) else (1 << 30,) * 3
        starts = first if index else (0, 0, 0)
        if starts <= high and (low < upto or low <= last):
            candidates.append(era)
    label = f"out-of-tree amdxdna {version}"
    shapes = {json.dumps([c["firmware_names"], c["protocol"]], sort_keys=True) for c in candidates}
    if candidates and len(shapes) == 1:
        era = candidates[-1]
        how = (
            f"{label}: {era['id']} (xdna-driver {era['first_seen']['xrt_version']} to "
            f"{era['last_seen']['xrt_version']}: {', '.join(era['from'])})"
        )
        if low < spans[0][0]:
            how += "; older than every line read, judged as the oldest"
        return {**era, "source": "dkms"}, how
    names = sorted({n for c in candidates for n in c["firmware_names"]})
    return None, (
        f"{label} falls where xdna-driver changed what it requests or accepts "
        f"({' / '.join(c['id'] for c in candidates)}; names {', '.join(names)}): what decides "
        f"is {deciding}"
    )


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
    """What the facts predict, then what the host showed (a running firmware, the kernel
    log's lines) where it has: an observation decides over a prediction. `by_release`
    asks about another kernel, which nothing has observed."""
    log = read_log(host.kernel_log)
    if host.drm_version is None and log.drm_version and not by_release:
        host = replace(host, drm_version=log.drm_version)
    predicted = _predict(host, upstream, by_release)
    return predicted if by_release else _observed(host, predicted, log)


def _observed(host: HostCompat, fw: FirmwareVerdict, log: LogEvidence) -> FirmwareVerdict:
    why = list(fw.why)
    running = host.running_firmware
    if running:
        if fw.version == running:
            why.append(f"firmware {running} is running (observed): the driver accepted it")
        else:
            why.append(
                f"firmware {running} is running (observed): the driver accepted what it "
                f"loaded{'' if fw.accepted else ', whatever the facts predicted'}"
            )
        return replace(fw, accepted=True, version=fw.version or running, why=tuple(why))
    if log.smu_failed:
        # the stock probe stops at the SMU power-off check, before any protocol check
        why = [w for w in why if " rejects protocol " not in w and " may accept " not in w]
        why.append(
            "the kernel log shows the probe failing at the SMU power-off check before any "
            f"protocol check (observed: {log.smu_failed})"
        )
        return replace(fw, accepted=False, why=tuple(why))
    if log.incompatible_protocol:
        why.append(
            "the kernel log shows aie2_check_protocol refusing it (observed: Incompatible "
            f"firmware protocol {log.incompatible_protocol})"
        )
        return replace(fw, accepted=False, protocol=log.incompatible_protocol, why=tuple(why))
    if log.missing_file and fw.accepted is not True:
        why.append(
            f"the kernel log shows request_firmware failing for {log.missing_file} (observed)"
        )
        return replace(fw, accepted=False, why=tuple(why))
    if fw.accepted is None and fw.driver is not None:
        why.append(
            "what would decide: the running firmware (sysfs fw_version, or flm validate) or "
            "the kernel log of a boot with it (an 'Incompatible firmware protocol' line, or "
            "'Initialized amdxdna_accel_driver' with no error)"
        )
        return replace(fw, why=tuple(why))
    return fw


def _predict(
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
        if accepted is False and protocol[0] >= 7 and all(r["major"] < 7 for r in rules):
            # a pre-7.0 driver with protocol-7 firmware: the power-off change that made 7.0
            # ask for npu_7.sbin first can stop the probe before the protocol check
            why[-1] += (
                "; the probe may stop earlier, at the SMU power-off check (aie2_smu_init: "
                "Access power failed), as on 6.19 cold boots (amd/xdna-driver issue 1257): "
                "the kernel log says which"
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
