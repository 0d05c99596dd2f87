"""What a host has shown, as evidence over what the facts predict (pure): the kernel log's
amdxdna lines (the DRM version it initialized, a protocol it called incompatible, a probe that
failed earlier at the SMU power-off check, a firmware file it could not load), the running
firmware, and the installed userspace (its packages and whether the amdxdna plugin
`libxrt_driver_xdna.so.2` is there). It reads nothing: observe.py and the facts file hand the
lines and values in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from xdnaforge.compat.facts import HostCompat, version_tuple

PLUGIN = "libxrt_driver_xdna.so.2"
CONSUMER_PACKAGES = ("fastflowlm",)  # userspace that runs on XRT, not XRT itself
_INCOMPATIBLE_RE = re.compile(r"Incompatible firmware protocol major (\d+) minor (\d+)")
_SMU_RE = re.compile(r"aie2_smu_exec: smu cmd \d+ failed|aie2_smu_init: Access power failed")
_REQUEST_RE = re.compile(
    r"(?:failed to request_firmware|Direct firmware load for) (amdnpu/\S+?)(?:,| failed)"
)
_INITIALIZED_RE = re.compile(r"Initialized amdxdna_accel_driver (\d+\.\d+\.\d+)")


@dataclass(frozen=True, slots=True, kw_only=True)
class LogEvidence:
    """What the kernel log says happened; None / empty where it says nothing."""

    drm_version: str | None = None
    incompatible_protocol: str | None = None  # "7.2": aie2_check_protocol refused it
    smu_failed: str | None = None  # the line: the probe failed before the protocol check
    missing_file: str | None = None  # amdnpu/1502_00/npu.sbin: request_firmware -2

    @property
    def rejected(self) -> bool:
        return bool(self.incompatible_protocol or self.smu_failed or self.missing_file)


def read_log(lines: tuple[str, ...]) -> LogEvidence:
    """The last of each kind of line (the last boot's, in a log that holds several)."""
    drm = protocol = smu = missing = None
    for line in lines:
        if found := _INITIALIZED_RE.search(line):
            drm = found.group(1)
            protocol = smu = missing = None  # a later successful probe supersedes failures
        if found := _INCOMPATIBLE_RE.search(line):
            protocol = f"{found.group(1)}.{found.group(2)}"
        if _SMU_RE.search(line):
            smu = line.strip()
        if found := _REQUEST_RE.search(line):
            missing = found.group(1)
    return LogEvidence(
        drm_version=drm, incompatible_protocol=protocol, smu_failed=smu, missing_file=missing
    )


def relevant_lines(text: str | None, limit: int = 40) -> tuple[str, ...]:
    """The kernel log lines this module reads (a facts record keeps only these)."""
    keep = [
        line.strip()
        for line in (text or "").splitlines()
        if "amdxdna" in line
        and (
            _INCOMPATIBLE_RE.search(line)
            or _SMU_RE.search(line)
            or _REQUEST_RE.search(line)
            or _INITIALIZED_RE.search(line)
        )
    ]
    return tuple(keep[-limit:])


@dataclass(frozen=True, slots=True, kw_only=True)
class UserspaceVerdict:
    """Whether the installed XRT userspace can reach the NPU: True / False / None."""

    ok: bool | None
    why: tuple[str, ...]
    packages: dict[str, str]


def judge_userspace(host: HostCompat) -> UserspaceVerdict:
    packages = {k: v for k, v in host.userspace.items() if k not in CONSUMER_PACKAGES}
    listed = ", ".join(f"{name} {version}" for name, version in sorted(packages.items()))
    if host.plugin is False:
        what = f"the installed XRT ({listed})" if listed else "the installed XRT"
        return UserspaceVerdict(
            ok=False,
            why=(
                f"{what} has no amdxdna plugin ({PLUGIN}): XRT finds no NPU device "
                "(xrt-smi examine: 0 devices); it must be replaced",
            ),
            packages=packages,
        )
    if host.plugin is True:
        where = f" ({listed})" if listed else ""
        return UserspaceVerdict(
            ok=True, why=(f"the amdxdna plugin {PLUGIN} is installed{where}",), packages=packages
        )
    if listed:
        return UserspaceVerdict(
            ok=None,
            why=(f"installed: {listed}; whether {PLUGIN} is there was not read",),
            packages=packages,
        )
    return UserspaceVerdict(
        ok=None,
        why=("no XRT userspace is known to be installed (none read, none given)",),
        packages=packages,
    )


def distro_package(
    upstream: dict[str, Any], kind: str, distro: str | None, version: str | None = None
) -> dict[str, str] | None:
    """The package of `kind` (firmware | plugin) the facts name for this distribution; a row
    with `since` holds from that release on (Ubuntu's libxrt-npu2 from 26.04: 25.10's XRT
    had no plugin). A release that cannot be compared keeps the row, its `since` said."""
    for row in upstream.get("distro_packages", {}).get(kind, []):
        if not distro or row["distro"] != distro:
            continue
        since = row.get("since")
        if since:
            have, want = version_tuple(version), version_tuple(since)
            if have is not None and want is not None and have < want:
                continue
        return dict(row)
    return None
