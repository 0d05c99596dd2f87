"""The one change that makes a host work, most specific first (pure): point the requested
name at a blob on disk the driver accepts; install an accepted version; a kernel whose driver
takes this firmware; the out-of-tree driver as a last resort (a kernel payload xdnaforge never
installs); the recipe to build."""

from __future__ import annotations

import posixpath
from typing import Any

from xdnaforge.compat.evidence import PLUGIN, UserspaceVerdict, distro_package
from xdnaforge.compat.facts import HostCompat, version_tuple
from xdnaforge.compat.firmware import (
    FirmwareVerdict,
    accepts,
    device_of,
    protocol_of,
    protocol_text,
)
from xdnaforge.compat.fitness import Finding


def choose_fix(
    host: HostCompat,
    fw: FirmwareVerdict,
    recipes: dict[str, Finding],
    upstream: dict[str, Any],
    userspace: UserspaceVerdict | None = None,
    distros: dict[str, str] | None = None,
) -> str | None:
    """The one change that makes it work, most specific first; `distros`: each recipe's
    distribution, so that a replacement for this host's userspace is one of its own."""
    if fw.accepted is False and fw.loads is None and fw.tried and host.firmware_listed:
        return _install_firmware_package(host, fw, upstream)
    if fw.accepted is not False and userspace is not None and userspace.ok is False:
        return _replace_userspace(host, recipes, upstream, userspace, distros or {})
    if fw.accepted is False and fw.loads is not None and fw.driver is not None:
        driver = next((d for d in upstream["drivers"] if d["id"] == fw.driver), None)
        directory = fw.loads.split("/")[-2]
        npu, _, _ = device_of(driver, host) if driver else (None, None, "")
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
                    f"{protocol_text(proto)}, which {fw.driver} accepts)"
                )
        # 2. a firmware version the driver accepts, from the facts: the one linux-firmware
        #    links as npu.sbin first, else the newest
        shipped = {
            link["target"]: link
            for link in upstream["firmware_links"]
            if link["dir"] == directory and link["name"] == "npu.sbin"
        }
        candidates = [
            blob
            for blob in upstream["firmware"]
            if blob["dir"] == directory
            and rules
            and accepts(rules, protocol_of(blob["version"], directory, upstream) or (-1, 0, False))
        ]
        candidates.sort(
            key=lambda b: (
                f"npu.sbin.{b['version']}" in shipped,
                version_tuple(b["version"]) or (),
            ),
            reverse=True,
        )
        if candidates:
            blob = candidates[0]
            linked = f"npu.sbin.{blob['version']}" in shipped
            speaks = protocol_text(protocol_of(blob["version"], directory, upstream))
            return (
                f"install firmware {blob['version']} for {directory} as /lib/firmware/"
                f"{fw.loads} (protocol {speaks}, which {fw.driver} accepts"
                + ("; linux-firmware links it as npu.sbin since 58cf579b)" if linked else ")")
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
        # in the order given: the caller puts the recipes its matrix expects to work first
        fitting = [name for name, f in recipes.items() if f.ok]
        also = f" (also fits: {', '.join(fitting[1:])})" if fitting[1:] else ""
        return f"build the userspace that fits: doit build --target {fitting[0]}{also}"
    return None


def _install_firmware_package(
    host: HostCompat, fw: FirmwareVerdict, upstream: dict[str, Any]
) -> str:
    """No file the driver requests exists: the package that installs that directory."""
    directory = "/".join(fw.tried[0].split("/")[-3:-1]).removeprefix("updates/")
    row = distro_package(upstream, "firmware", host.distro_id, host.distro_version)
    names = " or ".join(sorted({posixpath.basename(p) for p in fw.tried}))
    if row is not None:
        return (
            f"install the firmware package that provides /lib/firmware/{directory}/ "
            f"({names}): {row['package']} on {host.distro_id} ({row['from']})"
        )
    return (
        f"install the firmware package that provides /lib/firmware/{directory}/ ({names}): "
        "linux-firmware ships it; your distribution's package name for it is not in the facts"
    )


def _replace_userspace(
    host: HostCompat,
    recipes: dict[str, Finding],
    upstream: dict[str, Any],
    userspace: UserspaceVerdict,
    distros: dict[str, str],
) -> str:
    """The installed XRT lacks the amdxdna plugin: a distro package or a recipe replaces it."""
    listed = ", ".join(f"{n} {v}" for n, v in sorted(userspace.packages.items())) or "XRT"
    options = []
    row = distro_package(upstream, "plugin", host.distro_id, host.distro_version)
    if row is not None:
        since = f" from {host.distro_id} {row['since']} on" if row.get("since") else ""
        options.append(f"the distribution's {row['package']}{since} ({row['from']})")
    # the recipes for this host's distribution first, in the order given
    ranked = sorted(recipes, key=lambda name: distros.get(name) != host.distro_id)
    fitting = [name for name in ranked if recipes[name].ok]
    maybe = [name for name in ranked if recipes[name].ok is None]
    if fitting:
        options.append(f"build and install the recipe that fits: doit build --target {fitting[0]}")
    elif maybe:
        options.append(
            f"a recipe whose fit is unknown (its reasons above): doit build --target {maybe[0]}"
        )
    return f"replace the installed userspace ({listed} has no {PLUGIN}): " + (
        "; or ".join(options) if options else "no recipe or distribution package in the facts fits"
    )
