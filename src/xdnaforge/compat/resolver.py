"""The verdict: host facts + upstream facts -> which firmware loads, whether the driver accepts
it, which recipes fit, which consumers are ready, and the one fix.

Pure: data in, a Verdict out. Unknown facts stay unknown (None): a verdict is never guessed.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from xdnaforge import recipe as recipe_model
from xdnaforge.kernel import parse_range

from .facts import FirmwareFile, HostCompat, at_least, version_tuple


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One judged thing: True / False / None (unknown), with why."""

    ok: bool | None
    why: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FirmwareVerdict:
    driver: str | None  # the driver generation or out-of-tree line judged
    tried: tuple[str, ...]  # paths the driver requests, in order
    loads: str | None
    version: str | None
    protocol: str | None
    accepted: bool | None
    why: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    facts: HostCompat
    firmware: FirmwareVerdict
    recipes: dict[str, Finding]
    consumers: dict[str, Finding]
    fix: str | None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return self.firmware.accepted is True and any(f.ok for f in self.recipes.values())

    def as_record(self) -> dict[str, Any]:
        fw = self.firmware
        return {
            "facts": self.facts.as_record(),
            "firmware": {
                "driver": fw.driver,
                "tried": list(fw.tried),
                "loads": fw.loads,
                "version": fw.version,
                "protocol": fw.protocol,
                "accepted": fw.accepted,
                "why": list(fw.why),
            },
            "recipes": {n: {"fits": f.ok, "why": list(f.why)} for n, f in self.recipes.items()},
            "consumers": {
                n: {"ready": f.ok, "why": list(f.why)} for n, f in self.consumers.items()
            },
            "fix": self.fix,
            "notes": list(self.notes),
            "ok": self.ok,
        }


def _major_minor(text: str | None) -> tuple[int, int] | None:
    parsed = version_tuple(text)
    if parsed is None:
        return None
    return parsed[0], parsed[1] if len(parsed) > 1 else 0


def find_driver(host: HostCompat, upstream: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The driver the host runs: an in-tree generation by DRM version (vendor kernels
    backport, so the release alone is a weaker guess), or an out-of-tree xdna-driver line."""
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
    wanted = _major_minor(host.drm_version)
    if wanted is not None:
        for generation in upstream["drivers"]:
            if _major_minor(generation["drm_version"]) == wanted:
                return generation, f"DRM driver version {host.drm_version}"
        return None, f"no in-tree driver generation reports DRM version {host.drm_version}"
    if host.kernel:
        for generation in upstream["drivers"]:
            if parse_range(generation["kernels"]).contains(host.kernel):
                return generation, (
                    f"kernel {host.kernel} (DRM version unknown: a vendor kernel "
                    "with backports can carry another generation)"
                )
    return None, "neither the DRM driver version nor a known kernel release is given"


def _device(driver: dict[str, Any], host: HostCompat) -> tuple[str | None, str | None, str]:
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


def _protocol_text(protocol: tuple[int, int | None, bool] | None) -> str | None:
    if protocol is None:
        return None
    major, minor, lower = protocol
    return f"{major}" if minor is None else f"{major}.{minor}{'+' if lower else ''}"


def judge_firmware(host: HostCompat, upstream: dict[str, Any]) -> FirmwareVerdict:
    driver, how = find_driver(host, upstream)
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
    npu, directory, problem = _device(driver, host)
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
        accepted = False if host.firmware else None  # no file listed: unknown, not absent
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
    if version is None:
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
            f"{driver['id']} {verb} protocol {_protocol_text(protocol)} of firmware "
            f"{version} (it takes {wanted} for {npu})"
        )
    return FirmwareVerdict(
        driver=driver["id"],
        tried=tuple(tried),
        loads=loads,
        version=version,
        protocol=_protocol_text(protocol),
        accepted=accepted,
        why=tuple(why),
    )


def judge_recipe(
    recipe: recipe_model.Recipe, host: HostCompat, fw: FirmwareVerdict, upstream: dict[str, Any]
) -> Finding:
    """The recipe's `driver:` contract and its NPU list held against the host."""
    contract = recipe.driver
    fails: list[str] = []
    unknown: list[str] = []
    passes: list[str] = []
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
        return Finding(
            ok=None,
            why=tuple(
                unknown
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


def choose_fix(
    host: HostCompat, fw: FirmwareVerdict, recipes: dict[str, Finding], upstream: dict[str, Any]
) -> str | None:
    """The one change that makes it work, most specific first."""
    if fw.accepted is False and fw.loads is not None and fw.driver is not None:
        driver = next((d for d in upstream["drivers"] if d["id"] == fw.driver), None)
        directory = fw.loads.split("/")[-2]
        npu, _, _ = _device(driver, host) if driver else (None, None, "")
        rules = (driver or {}).get("protocol", {}).get(npu or "", {}).get("rules", [])
        # 1. a blob on disk that this driver accepts: point the requested name at it
        for blob in host.firmware:
            if blob.target or not blob.version or blob.path.split("/")[-2] != directory:
                continue
            proto = protocol_of(blob.version, directory, upstream, blob.protocol)
            if proto and rules and accepts(rules, proto):
                name = posixpath.basename(blob.path)
                return (
                    f"restore the link the driver loads: ln -sf {name} /lib/firmware/"
                    f"{fw.loads} (firmware {blob.version}, protocol "
                    f"{_protocol_text(proto)}, which {fw.driver} accepts)"
                )
        # 2. a firmware version the driver accepts, from the facts
        for blob in upstream["firmware"]:
            proto = protocol_of(blob["version"], directory, upstream)
            if blob["dir"] == directory and proto and rules and accepts(rules, proto):
                return (
                    f"install firmware {blob['version']} for {directory} as "
                    f"/lib/firmware/{fw.loads} (protocol {_protocol_text(proto)}, which "
                    f"{fw.driver} accepts; linux-firmware ships it as npu.sbin since 58cf579b)"
                )
        # 3. a kernel from which on the driver takes this firmware
        proto = protocol_of(fw.version, directory, upstream)
        for later in upstream["drivers"]:
            later_rules = later.get("protocol", {}).get(npu or "", {}).get("rules", [])
            if proto and later_rules and accepts(later_rules, proto):
                return (
                    f"a kernel whose amdxdna reports DRM >= {later['drm_version']} (reported "
                    f"on Linux {later['kernels']}) takes firmware {fw.version}"
                )
        return (
            "last resort: xdna-driver's out-of-tree amdxdna (DKMS) accepts protocol >= "
            "6.12; it is a kernel payload xdnaforge never installs"
        )
    if fw.accepted and not any(f.ok for f in recipes.values()):
        return None
    if fw.accepted:
        fitting = sorted(name for name, f in recipes.items() if f.ok)
        return f"build the userspace that fits: doit build --target {fitting[0]}"
    return None


def resolve(
    host: HostCompat, upstream: dict[str, Any], recipes: list[recipe_model.Recipe]
) -> Verdict:
    fw = judge_firmware(host, upstream)
    judged = {r.name: judge_recipe(r, host, fw, upstream) for r in recipes}
    consumers = judge_consumers(host, fw, upstream)
    notes = []
    if host.cmdline and ("amd_iommu=off" in host.cmdline or "iommu=off" in host.cmdline):
        notes.append("the kernel command line turns the IOMMU off: amdxdna needs it (SVA/PASID)")
    return Verdict(
        facts=host,
        firmware=fw,
        recipes=judged,
        consumers=consumers,
        fix=choose_fix(host, fw, judged, upstream),
        notes=tuple(notes),
    )
