#!/usr/bin/env python3
"""Derive the compatibility resolver's facts from local copies of upstream files and write
src/xdnaforge/compat/data/compat_facts.json.

Run by hand (never at run time, never by a test on real data) against a directory of local
copies made outside the repository (docs/compat.md says how):

    python3 scripts/gen_compat_facts.py --upstream /work/upstream-compat

Layout of that directory:

- linux/<generation>/<file>.c, linux/patches/<name>-<file>.c: lines of in-tree
  drivers/accel/amdxdna files (whole files work too); the first line names the source:
  `// source: <repo> <commit or search-index-file id> <path> [note]`;
- xdna-driver/<label>/COMMIT and the files of amd/xdna-driver at that commit
  (tools/info.json, src/driver/amdxdna/npu*_regs.c, amdxdna_gem.c, src/shim/umq/hwq.cpp);
- firmware/observations.txt: firmware version -> protocol with the report each comes from,
  and linux-firmware's links;
- firmware/tree/<name>/: an amdnpu directory as a linux-firmware package installs it, with a
  SOURCE file naming the package (its links and each blob's embedded Release string);
- fastflowlm/*.cpp: the lines of FastFlowLM's `validate` that hold its floors.

Every fact in the output names the source it was read from; facts no file states (which kernel
release carries a driver generation, a rule carried over from an older generation) are marked
`inferred` with the reason. No upstream code is kept: only the derived values.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

# In-tree driver generations, by the DRM driver version their amdxdna_pci_drv.c defines.
# `files`: which excerpt directories under linux/ answer which question; a question without a
# file is carried over from `inherit` and marked inferred. `kernels`: where each generation was
# reported running (the release a commit landed in is not in the files read).
GENERATIONS: list[dict[str, Any]] = [
    {
        "drm_version": "0.0",
        "files": {"ids": "drm-0.0"},
        "inherit": {"names": "0.1", "protocol": "0.1", "cmd_bo": "0.1"},
        "kernels": ">=6.14, <6.18",
        "kernels_evidence": (
            "amdxdna entered mainline in 6.14 without a DRM version (0.0); 0.1 came with "
            "DRM_IOCTL_AMDXDNA_GET_ARRAY, first reported on 6.18 (xrt issue 9141 on 6.14 and "
            "fastflowlm-docker issue 4 on 6.17 print 0.0: Ubuntu 24.04 HWE, 25.04, 25.10)"
        ),
    },
    {
        "drm_version": "0.1",
        "files": {"ids": "drm-0.1", "names": "drm-0.1", "protocol": "drm-0.1", "cmd_bo": "drm-0.1"},
        "kernels": ">=6.18, <6.19",
        "kernels_evidence": "FastFlowLM issue 536 and the ZimaOS 6.18.9 seed report print 0.1",
    },
    {
        "drm_version": "0.6",
        "files": {"ids": "drm-0.6", "names": "drm-0.6"},
        "inherit": {"protocol": "0.1", "cmd_bo": "0.1"},
        "kernels": ">=6.19, <7.0",
        "kernels_evidence": (
            "vendor 6.19 kernels with backports report 0.6 (FastFlowLM issues 421, 437; "
            "field/007: CachyOS 6.19.12 prints 0.6.0); amd/xdna-driver issue 1074: 6.19 npu5 "
            "checks protocol 6.12"
        ),
    },
    {
        "drm_version": "0.6",
        "id": "in-tree-0.6-7.0",
        "files": {},
        "seen_in": "drm-0.6-7.0",
        "inherit": {"ids": "0.6", "names": "0.10", "protocol": "0.10", "cmd_bo": "0.1"},
        "kernels": ">=7.0, <7.1",
        "kernels_evidence": (
            "mainline 7.0 took f1eac46fe5f7 and the npu_7.sbin fallback while the DRM version "
            "was still 0.6 (the 0.7 bump was posted on 2026-02-28 on top of the npu_7.sbin "
            "names); a Fedora 7.0.9 note reports 0.6"
        ),
    },
    {
        "drm_version": "0.7",
        "files": {"ids": "drm-0.7"},
        "inherit": {"names": "0.10", "protocol": "0.10", "cmd_bo": "0.1"},
        "kernels": ">=7.0, <7.1",
        "kernels_evidence": (
            "Ubuntu 7.0.0-27 and Proxmox 7.0.0-8 print 'Initialized amdxdna_accel_driver 0.7.0'; "
            "the npu_7.sbin fallback (dri-devel 2026-02-25, fixing f1eac46fe5f7) is in 7.0, and "
            "the seed host's 7.0.0-27 loaded npu_7.sbin and rejected command BOs over 32 KiB"
        ),
    },
    {
        "drm_version": "0.8",
        "files": {},
        "inherit": {"ids": "0.10", "names": "0.10", "protocol": "0.10"},
        "kernels": ">=7.1, <7.2",
        "kernels_evidence": "nix-amd-ai PR 94; Debian 7.1.3 in lemonade PR 2544 print 0.8",
    },
    {
        "drm_version": "0.10",
        "files": {"ids": "drm-0.10", "names": "drm-0.10", "protocol": "patches"},
        "kernels": ">=7.2",
        "kernels_evidence": "Arch 7.2.2 prints 0.10 (lemonade issue 839)",
    },
]

# The command-BO cap was removed by a dri-devel patch (search-index-file 54104395514) in a
# release this generator cannot name: generations without a cmd_bo answer say unknown.

# xdna-driver directories: release lines (tools/info.json) and the recipes' pinned commits
# (their out-of-tree driver's acceptance rule, and the command BO their shim creates).
XDNA_LABELS = {
    "1.4": "release line 1.4",
    "1.5": "release line 1.5",
    "1.6": "release line 1.6",
    "1.7": "release line 1.7",
    "1.8": "release line 1.8",
    "1.9": "release line 1.9",
    "main": "main",
    "1.4-pin": "1.4 (ryzen-ai-ubuntu24)",
    "1.6-pin": "1.6 (ubuntu26-compat)",
    "2.21.75-pin": "2.21.75 (xdna-2.21.75)",
    "main-pin": "main (upstream-main)",
    # the commit that renamed the out-of-tree driver's firmware npu.sbin -> npu.dev.sbin
    # (f4a83345, #427) and its parent: what an out-of-tree driver requests turns on it
    "rename-parent": "before the rename (parent of f4a83345)",
    "rename": "the rename (f4a83345: npu.sbin -> npu.dev.sbin)",
}

# Which distribution package installs lib/firmware/amdnpu/, and which one carries the XRT
# userspace plugin (libxrt_driver_xdna.so.2): what the fix names for a host missing either.
# Rows say where they come from; no upstream file states them.
DISTRO_PACKAGES: dict[str, list[dict[str, str]]] = {
    "firmware": [
        {
            "distro": "debian",
            "package": "firmware-amd-graphics",
            "from": (
                "Debian forky firmware-amd-graphics 20260916-1 installs "
                "usr/lib/firmware/amdnpu/ (the tree read)"
            ),
        },
        {
            "distro": "arch",
            "package": "linux-firmware-other",
            "from": "field/007 (CachyOS: npu.sbin from linux-firmware-other 20260309-1)",
        },
        {
            "distro": "cachyos",
            "package": "linux-firmware-other",
            "from": "field/007 (CachyOS: npu.sbin from linux-firmware-other 20260309-1)",
        },
        {
            "distro": "linuxmint",
            "package": "linux-firmware",
            "from": "inferred: Linux Mint takes Ubuntu's linux-firmware (no package list was read)",
        },
        {
            "distro": "ubuntu",
            "package": "linux-firmware",
            "from": (
                "inferred: Ubuntu ships all of /lib/firmware in linux-firmware "
                "(no package list was read)"
            ),
        },
    ],
    "plugin": [
        {
            "distro": "debian",
            "package": "libxrt-npu2",
            "since": "14",
            "from": (
                "compat-facts.md: Debian forky libxrt-npu2 1:2.25.0-4+b1 holds "
                "usr/lib/x86_64-linux-gnu/libxrt_driver_xdna.so.2"
            ),
        },
        {
            "distro": "ubuntu",
            "package": "libxrt-npu2",
            "since": "26.04",
            "from": (
                "compat-facts.md: Ubuntu 26.04 builds the same source at 1:2.21.75+dfsg-4; "
                "25.10's 2.19 had no plugin (amd/xdna-driver issue 957)"
            ),
        },
        {
            "distro": "arch",
            "package": "xrt-plugin-amdxdna",
            "from": "compat-facts.md: Arch extra has xrt and xrt-plugin-amdxdna",
        },
    ],
}

NPU_NAMES = {
    "dev_npu1_info": "npu1",
    "dev_npu2_info": "npu2",
    "dev_npu4_info": "npu4",
    "dev_npu5_info": "npu5",
    "dev_npu6_info": "npu6",
    "dev_npu3_pf_info": "npu3 (PF)",
    "dev_npu3_vf_info": "npu3 (VF)",
    "dev_npu3_info": "npu3",
    "dev_npu7_info": "npu7",
    "dev_npu7_pf_info": "npu7 (PF)",
    "dev_npu8_info": "npu8",
    "dev_npu8_pf_info": "npu8 (PF)",
    "dev_npu9_info": "npu9",
    "dev_npu9_pf_info": "npu9 (PF)",
    "dev_npu10_info": "npu10",
    "dev_npu10_pf_info": "npu10 (PF)",
}
SIZES = {"SZ_4K": 4096, "SZ_32K": 32768, "SZ_64K": 65536, "SZ_1M": 1048576, "SZ_2M": 2097152}

_SOURCE_RE = re.compile(r"^//\s*source:\s*(\S+)\s+(\S+)\s+(\S+)\s*(.*)$")
_FIRMWARE_RE = re.compile(r'MODULE_FIRMWARE\("amdnpu/([0-9a-f]{4}_[0-9a-f]{2})/([\w.]+)"\)')
_MINOR_RE = re.compile(r"#define\s+AMDXDNA_DRIVER_MINOR\s+(\d+)")
_MAJOR_RE = re.compile(r"#define\s+AMDXDNA_DRIVER_MAJOR\s+(\d+)")
_PCI_ID_RE = re.compile(r"PCI_DEVICE\(PCI_VENDOR_ID_(?:AMD|ATI),\s*0x([0-9A-Fa-f]{4})\)")
_DRM_FIELD_RE = re.compile(r"\.major\s*=\s*AMDXDNA_DRIVER_MAJOR")
_WHENCE_FILE_RE = re.compile(r"^File:\s*amdnpu/([0-9a-f]{4}_[0-9a-f]{2})/(\S+)\s*$", re.M)
_WHENCE_LINK_RE = re.compile(
    r"^Link:\s*amdnpu/([0-9a-f]{4}_[0-9a-f]{2})/(\S+)\s*->\s*(\S+)\s*$", re.M
)
_SHARED_PRIV_RE = re.compile(r"\.dev_priv\s*=\s*&(npu\d+)_dev_priv")
_BLOB_VERSION_RE = re.compile(r"\.sbin\.(\d+\.\d+\.\d+\.\d+)$")
_DEV_ID_RE = re.compile(r"\{\s*0x([0-9A-Fa-f]{4}),\s*0x([0-9A-Fa-f]+),\s*&(\w+)\s*\}")
_FW_PATH_RE = re.compile(r'\.fw_path\s*=\s*"amdnpu/([0-9a-f]{4}_[0-9a-f]{2})/([\w.]*)"')
_PROTO_MAJOR_RE = re.compile(r"\.protocol_major\s*=\s*(0x[0-9a-fA-F]+|\d+)")
_PROTO_MINOR_RE = re.compile(r"\.protocol_minor\s*=\s*(0x[0-9a-fA-F]+|\d+)")
# the device's own minimum (`.min_fw_version = ...` on a line of the dev_priv), not a feature
# row's (`{ .feature = X, .min_fw_version = ... }`)
_MIN_FW_RE = re.compile(r"^\s*\.min_fw_version\s*=\s*AIE2_FW_VERSION\((\d+),\s*(\d+)\)", re.M)
_FEATURE_ROW_RE = re.compile(r"\{([^{}]*\.major\s*=\s*\d+[^{}]*)\}")
_ROW_MAJOR_RE = re.compile(r"\.major\s*=\s*(\d+)")
_ROW_MIN_MINOR_RE = re.compile(r"\.min_minor\s*=\s*(\d+)")
_TABLE_RE = re.compile(r"(npu\d)_fw_feature_table\[\]")
_NPU_FW_RE = re.compile(r"static\s+char\s+\*npu_fw\[\]\s*=\s*\{([^}]*)\}", re.S)
_CMD_BO_RE = re.compile(r"#define\s+XDNA_MAX_CMD_BO_SIZE\s+(\w+)")
_UMQ_RE = re.compile(r"const\s+size_t\s+umq_sz\s*=\s*(0x[0-9a-fA-F]+|\d+)\s*;")
_EXACT_CHECK_RE = re.compile(r"protocol_major\s*!=\s*fw_major")


def _int(text: str) -> int:
    return int(text, 16) if text.lower().startswith("0x") else int(text)


def source_of(text: str, fallback: str) -> dict[str, str]:
    """The `// source:` header of an excerpt (repo, commit or index id, path, note)."""
    match = _SOURCE_RE.match(text.splitlines()[0] if text else "")
    if not match:
        return {"repo": "unknown", "commit": "unknown", "path": fallback, "note": "no source line"}
    repo, commit, path, note = match.groups()
    found = {"repo": repo, "commit": commit, "path": path}
    if note:
        found["note"] = note.strip()
    return found


def parse_pci_drv(text: str) -> dict[str, Any]:
    """DRM version, PCI ids bound, (device, revision) -> NPU, MODULE_FIRMWARE names."""
    major = _MAJOR_RE.search(text)
    minor = _MINOR_RE.search(text)
    names: list[str] = []
    dirs: list[str] = []
    for directory, name in _FIRMWARE_RE.findall(text):
        if name not in names:
            names.append(name)
        if directory not in dirs:
            dirs.append(directory)
    devices = [
        {
            "pci": f"1022:{device.lower()}",
            "revision": f"0x{int(revision, 16):02x}",
            "npu": NPU_NAMES.get(info, info),
        }
        for device, revision, info in _DEV_ID_RE.findall(text)
    ]
    if major and minor:
        drm = f"{major.group(1)}.{minor.group(1)}"
    elif "amdxdna_drm_drv" in text and not _DRM_FIELD_RE.search(text):
        drm = "0.0"  # the drm_driver sets no .major/.minor: DRM_IOCTL_VERSION says 0.0
    else:
        drm = None
    return {
        "drm_version": drm,
        "pci_ids": sorted({f"1022:{d.lower()}" for d in _PCI_ID_RE.findall(text)}),
        "devices": devices,
        "module_firmware": names,
        "firmware_dirs": dirs,
    }


def parse_regs(text: str) -> dict[str, Any]:
    """A npu*_regs.c: firmware directory and file, and the protocol rule it states."""
    fw = _FW_PATH_RE.search(text)
    major = _PROTO_MAJOR_RE.search(text)
    minor = _PROTO_MINOR_RE.search(text)
    min_fw = _MIN_FW_RE.search(text)
    rules: list[dict[str, Any]] = []
    if major:
        rules.append(
            {
                "kind": "exact-major",
                "major": _int(major.group(1)),
                "min_minor": _int(minor.group(1)) if minor else 0,
            }
        )
    elif min_fw:
        rules.append(
            {"kind": "at-least", "major": int(min_fw.group(1)), "min_minor": int(min_fw.group(2))}
        )
    table = _TABLE_RE.search(text)
    rows = []
    for row in _FEATURE_ROW_RE.findall(text):
        row_major = _ROW_MAJOR_RE.search(row)
        row_minor = _ROW_MIN_MINOR_RE.search(row)
        if row_major:
            rows.append((int(row_major.group(1)), int(row_minor.group(1)) if row_minor else 0))
    # f1eac46fe5f7's table: a firmware is accepted when one row has its major and a minor
    # at or above the row's; the feature rows repeat majors, keep each major's lowest minor
    if rows and not major and not min_fw:
        lowest: dict[int, int] = {}
        for row_major_value, row_minor_value in rows:
            lowest[row_major_value] = min(
                lowest.get(row_major_value, row_minor_value), row_minor_value
            )
        rules = [
            {"kind": "feature-table", "major": m, "min_minor": n} for m, n in sorted(lowest.items())
        ]
    return {
        "firmware_dir": fw.group(1) if fw else None,
        "firmware_file": (fw.group(2) or None) if fw else None,
        "rules": rules,
        "npu": table.group(1) if table else None,
    }


def parse_npu_fw(text: str) -> list[str] | None:
    """aie2_pci.c's `npu_fw[]` (7.0 on); None when the file requests `fw_path` alone."""
    match = _NPU_FW_RE.search(text)
    if not match:
        return None
    return re.findall(r'"([\w.]+)"', match.group(1))


def parse_cmd_bo(text: str) -> int | None:
    match = _CMD_BO_RE.search(text)
    if not match:
        return None
    value = match.group(1)
    return SIZES.get(value) if value in SIZES else _int(value)


def parse_whence(text: str) -> list[dict[str, Any]]:
    """tools/WHENCE (xdna-driver 1.9 on): each name the driver requests (`Link:` lines:
    npu.dev.sbin, cert.dev.sbin) with the blob it points to and that blob's version."""
    files = {(d, name) for d, name in _WHENCE_FILE_RE.findall(text)}
    found = []
    for directory, name, target in _WHENCE_LINK_RE.findall(text):
        blob = target.split("/")[-1]
        version = _BLOB_VERSION_RE.search(blob)
        where = target.split("/")[-2] if "/" in target else directory
        found.append(
            {
                "dir": directory,
                "fw_name": name,
                "file": blob if (where, blob) in files else f"{where}/{blob}",
                "version": version.group(1) if version else None,
            }
        )
    return found


def parse_umq(text: str) -> int | None:
    match = _UMQ_RE.search(text)
    return _int(match.group(1)) if match else None


_RELEASE_RE = re.compile(rb"Release (\d+\.\d+\.\d+\.\d+)")


def read_firmware_tree(root: Path) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """firmware/tree/<name>/: an amdnpu directory as a linux-firmware package installs it
    (e.g. extracted from Debian's firmware-amd-graphics), with a SOURCE file naming it. Its
    links are linux-firmware's links (WHENCE's Link: lines, as copy-firmware.sh makes them);
    each blob's version is the `Release x.y.z.w` string inside it."""
    source = (root / "SOURCE").read_text(encoding="utf-8").strip().splitlines()[0]
    links: list[dict[str, Any]] = []
    blobs: list[dict[str, Any]] = []
    for path in sorted(root.glob("*/*")):
        directory, name = path.parent.name, path.name
        if path.is_symlink():
            target = path.readlink().as_posix()
            if "/" in target:
                raise ValueError(f"{path}: a link out of its directory ({target})")
            links.append({"dir": directory, "name": name, "target": target, "source": source})
        elif path.is_file():
            match = _RELEASE_RE.search(path.read_bytes()[: 1 << 20])
            release = match.group(1).decode() if match else None
            named = name.removeprefix("npu.sbin.") if name.startswith("npu.sbin.") else None
            if named and release and named != release:
                raise ValueError(f"{path}: named {named}, but its Release string says {release}")
            blobs.append({"dir": directory, "file": name, "release": release, "source": source})
    return source, links, blobs


links_source = "linux-firmware 58cf579b, as compat-facts.md records it"


def parse_observations(text: str, source: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """firmware/observations.txt: `<version> <dir> <protocol> <source...>` and
    `link <dir> <name> <target>` lines."""
    blobs: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 3)
        if parts[0] == "link" and len(parts) == 4:
            links.append(
                {
                    "dir": parts[1],
                    "name": parts[2],
                    "target": parts[3],
                    "source": links_source,
                }
            )
            continue
        if len(parts) < 4:
            raise ValueError(f"{source}:{number}: expected '<version> <dir> <protocol> <source>'")
        version, directory, protocol, where = parts
        at_least = protocol.endswith("+")
        major, _, minor = protocol.rstrip("+").partition(".")
        blobs.append(
            {
                "version": version,
                "dir": directory,
                "protocol_major": int(major),
                "protocol_minor": int(minor) if minor else None,
                "minor_at_least": at_least,
                "source": where,
            }
        )
    return blobs, links


def parse_floors(text: str) -> dict[str, Any]:
    """FastFlowLM's validate floors from the lines that test them."""
    floors: dict[str, Any] = {}
    kernel = re.search(r"major\s*==\s*(\d+)\s*&&\s*minor\s*>=\s*(\d+)\)\s*;", text)
    if kernel and "kernel_ok" in text:
        floors["kernel"] = f"{kernel.group(1)}.{kernel.group(2)}"
    drm = re.search(r"version_major\s*==\s*(\d+)\s*&&\s*drm_v\.version_minor\s*>=\s*(\d+)", text)
    if drm:
        floors["drm_version"] = f"{drm.group(1)}.{drm.group(2)}"
    fw = re.search(
        r"query_fw_version\.major\s*==\s*(\d+)\s*&&\s*query_fw_version\.minor\s*>=\s*"
        r"(\d+)",
        text,
    )
    if fw:
        floors["firmware"] = f"{fw.group(1)}.{fw.group(2)}.0.0"
    cols = re.search(r"cols\s*<\s*(\d+)", text)
    if cols:
        floors["columns"] = int(cols.group(1))
    memlock = re.search(r"rlim_cur\s*<\s*(\d+)\s*\*\s*1024\s*\*\s*1024", text)
    if memlock:
        floors["memlock_bytes"] = int(memlock.group(1)) * 1024 * 1024
    return floors


class Sources:
    """Numbered sources: each fact names the key of the file it was read from."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, str]] = {}

    def add(self, key: str, info: dict[str, str]) -> str:
        self.items[key] = {"key": key, **info}
        return key


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None


def _missing(spec: dict[str, Any], question: str) -> dict[str, Any]:
    where = spec.get("files", {}).get(question)
    raise ValueError(
        f"DRM {spec['drm_version']}: no file answers {question}"
        + (f" (expected under linux/{where}/)" if where else "")
    )


def linux_generation(
    upstream: Path, spec: dict[str, Any], done: dict[str, dict[str, Any]], sources: Sources
) -> dict[str, Any]:
    """One in-tree generation from its excerpt directories, carrying over what it lacks."""
    files: dict[str, str] = spec.get("files", {})
    inherit: dict[str, str] = spec.get("inherit", {})
    inferred: list[str] = [f"kernel releases: {spec['kernels_evidence']}"]
    out: dict[str, Any] = {
        "id": spec.get("id", f"in-tree-{spec['drm_version']}"),
        "source": "in-tree",
        "drm_version": spec["drm_version"],
        "kernels": spec["kernels"],
    }

    def text_of(directory: str, name: str) -> tuple[str | None, str | None]:
        path = upstream / "linux" / directory / name
        text = _read(path)
        if text is None:
            return None, None
        key = sources.add(f"linux/{directory}/{name}", source_of(text, name))
        return text, key

    def carried(question: str) -> dict[str, Any] | None:
        parent = inherit.get(question)
        if parent is None:
            if question in files:
                raise ValueError(
                    f"linux/{files[question]}/: the file answering {question} of "
                    f"DRM {spec['drm_version']} is missing"
                )
            return None
        inferred.append(
            f"{question}: carried over from in-tree-{parent} (no file of this "
            "generation was read for it)"
        )
        return done[parent]

    # PCI ids, devices, firmware directories
    ids_text, ids_key = (
        text_of(files["ids"], "amdxdna_pci_drv.c") if "ids" in files else (None, None)
    )
    if ids_text is not None:
        drv = parse_pci_drv(ids_text)
        if drv["drm_version"] != spec["drm_version"]:
            raise ValueError(
                f"linux/{files['ids']}/amdxdna_pci_drv.c defines DRM {drv['drm_version']}, "
                f"the generation says {spec['drm_version']}"
            )
        out.update(
            pci_ids=drv["pci_ids"],
            devices=drv["devices"],
            module_firmware=drv["module_firmware"],
            ids_from=ids_key,
        )
    else:
        parent = carried("ids") or _missing(spec, "ids")
        out.update(
            pci_ids=parent["pci_ids"],
            devices=parent["devices"],
            module_firmware=parent["module_firmware"],
            ids_from=parent["ids_from"],
        )
    # firmware names, in the order the driver requests them
    names_text, names_key = (
        text_of(files["names"], "aie2_pci.c") if "names" in files else (None, None)
    )
    if names_text is not None:
        order = parse_npu_fw(names_text)
        out["firmware_names"] = order or ["npu.sbin"]
        out["firmware_names_from"] = names_key
    elif files.get("names") and "module_firmware" in out:
        out["firmware_names"] = out["module_firmware"]
        out["firmware_names_from"] = out["ids_from"]
        inferred.append("firmware names: the MODULE_FIRMWARE names (aie2_pci.c not read)")
    else:
        parent = carried("names") or _missing(spec, "names")
        out["firmware_names"] = parent["firmware_names"]
        out["firmware_names_from"] = parent["firmware_names_from"]
    # protocol rules per firmware directory
    protocol: dict[str, Any] = {}
    if "protocol" in files:
        directory = upstream / "linux" / files["protocol"]
        for path in sorted(directory.glob("*npu*_regs.c")):
            text = path.read_text(encoding="utf-8", errors="replace")
            key = sources.add(f"linux/{files['protocol']}/{path.name}", source_of(text, path.name))
            regs = parse_regs(text)
            npu = regs["npu"] or re.sub(r"^.*?(npu\d)_regs\.c$", r"\1", path.name)
            protocol[npu] = {
                "rules": regs["rules"],
                "from": key,
                "firmware_dir": regs["firmware_dir"],
            }
        aie2, aie2_key = text_of(files["protocol"], "aie2_pci.c")
        if aie2 is not None and _EXACT_CHECK_RE.search(aie2):
            out["check"] = {
                "text": "major == protocol_major and minor >= protocol_minor",
                "from": aie2_key,
            }
    else:
        parent = carried("protocol") or _missing(spec, "protocol")
        protocol = parent["protocol"]
    if files.get("protocol") == "patches":
        inferred.append(
            "protocol: npu4's table from f1eac46fe5f7, npu1's from its fix; npu5 "
            "and npu6 follow npu4 (the commit changes their files alike; not read)"
        )
        if "npu4" in protocol:
            for npu in ("npu5", "npu6"):
                protocol.setdefault(
                    npu, {**protocol["npu4"], "inferred": True, "firmware_dir": None}
                )
    elif "npu5" in protocol:
        for npu in ("npu4", "npu6"):
            if npu not in protocol:
                protocol[npu] = {**protocol["npu5"], "inferred": True, "firmware_dir": None}
                inferred.append(f"protocol: {npu} follows npu5 (its regs file was not read)")
    out["protocol"] = protocol
    # command BO limit
    gem, gem_key = text_of(files["cmd_bo"], "amdxdna_gem.c") if "cmd_bo" in files else (None, None)
    if gem is not None:
        out["cmd_bo_limit_bytes"] = parse_cmd_bo(gem)
        out["cmd_bo_limit_known"] = True
        out["cmd_bo_from"] = gem_key
    elif (from_parent := carried("cmd_bo")) is not None:
        out["cmd_bo_limit_bytes"] = from_parent["cmd_bo_limit_bytes"]
        out["cmd_bo_limit_known"] = True
        out["cmd_bo_from"] = from_parent["cmd_bo_from"]
    else:
        out["cmd_bo_limit_bytes"] = None
        out["cmd_bo_limit_known"] = False
        out["cmd_bo_from"] = None
        inferred.append(
            "command BO limit: unknown (a dri-devel patch removes the 32 KiB cap; "
            "the release it landed in was not read)"
        )
    if "seen_in" in spec:
        # a file that shows this generation exists (its DRM version and what it requests)
        # without holding the facts themselves: checked, and named as the evidence
        seen, seen_key = text_of(spec["seen_in"], "amdxdna_pci_drv.c")
        if seen is None:
            raise ValueError(f"linux/{spec['seen_in']}/amdxdna_pci_drv.c is missing")
        drv = parse_pci_drv(seen)
        if drv["drm_version"] != spec["drm_version"]:
            raise ValueError(
                f"linux/{spec['seen_in']}/amdxdna_pci_drv.c defines DRM "
                f"{drv['drm_version']}, the generation says {spec['drm_version']}"
            )
        missing = [n for n in drv["module_firmware"] if n not in out["firmware_names"]]
        if missing:
            raise ValueError(
                f"linux/{spec['seen_in']}/amdxdna_pci_drv.c names {missing}, "
                f"which the carried-over firmware names lack"
            )
        out["seen_in"] = seen_key
    out["inferred"] = inferred
    return out


def xdna_entry(upstream: Path, label: str, sources: Sources) -> dict[str, Any] | None:
    root = upstream / "xdna-driver" / label
    commit = (_read(root / "COMMIT") or "").strip()
    if not commit:
        return None
    entry: dict[str, Any] = {"label": XDNA_LABELS.get(label, label), "commit": commit}
    info_text = _read(root / "tools/info.json") or _read(root / "info.json")
    if info_text:
        key = sources.add(
            f"xdna-driver/{label}/tools/info.json",
            {"repo": "amd/xdna-driver", "commit": commit, "path": "tools/info.json"},
        )
        info = json.loads(info_text)
        entry["xrt_version"] = info.get("xrt", {}).get("version")
        entry["firmware"] = [
            {
                "npu": fw.get("device"),
                "dir": f"{fw.get('pci_device_id')}_{fw.get('pci_revision_id')}",
                "version": fw.get("version"),
                "fw_name": fw.get("fw_name"),
            }
            for fw in info.get("firmwares", [])
        ]
        entry["firmware_from"] = key
    regs_dir = root / "src/driver/amdxdna"
    drv_text = _read(regs_dir / "amdxdna_pci_drv.c")
    if drv_text is not None:
        key = sources.add(
            f"xdna-driver/{label}/src/driver/amdxdna/amdxdna_pci_drv.c",
            {
                "repo": "amd/xdna-driver",
                "commit": commit,
                "path": "src/driver/amdxdna/amdxdna_pci_drv.c",
            },
        )
        drv = parse_pci_drv(drv_text)
        entry["devices"] = drv["devices"]
        entry["devices_from"] = key
    whence = _read(root / "tools/WHENCE")
    if whence is not None and not entry.get("firmware"):
        # 1.9 on: info.json lists no firmware; WHENCE names each requested file
        key = sources.add(
            f"xdna-driver/{label}/tools/WHENCE",
            {"repo": "amd/xdna-driver", "commit": commit, "path": "tools/WHENCE"},
        )
        npus = {
            f"{d['pci'][5:]}_{int(d['revision'], 16):02x}": d["npu"]
            for d in entry.get("devices", [])
        }
        entry["firmware"] = [{"npu": npus.get(fw["dir"]), **fw} for fw in parse_whence(whence)]
        entry["firmware_from"] = key
    if regs_dir.is_dir():
        driver: dict[str, Any] = {"protocol": {}, "firmware_names": []}
        aliases: dict[str, tuple[str, str]] = {}
        for path in sorted(regs_dir.glob("npu*_regs.c")):
            text = path.read_text(encoding="utf-8", errors="replace")
            key = sources.add(
                f"xdna-driver/{label}/src/driver/amdxdna/{path.name}",
                {
                    "repo": "amd/xdna-driver",
                    "commit": commit,
                    "path": f"src/driver/amdxdna/{path.name}",
                },
            )
            regs = parse_regs(text)
            npu = path.name.split("_")[0]
            if regs["rules"]:
                driver["protocol"][npu] = {
                    "rules": regs["rules"],
                    "from": key,
                    "firmware_dir": regs["firmware_dir"],
                }
            elif shared := _SHARED_PRIV_RE.search(text):
                aliases[npu] = (shared.group(1), key)
            if regs["firmware_file"] and regs["firmware_file"] not in driver["firmware_names"]:
                driver["firmware_names"].append(regs["firmware_file"])
        # an NPU whose dev_info points at another's dev_priv (npu6 on npu4's, 1.7 on) loads
        # and accepts as that one does
        for npu, (other, key) in sorted(aliases.items()):
            if other in driver["protocol"]:
                driver["protocol"][npu] = {**driver["protocol"][other], "from": key, "as": other}
        gem = _read(regs_dir / "amdxdna_gem.c")
        if gem is not None:
            key = sources.add(
                f"xdna-driver/{label}/src/driver/amdxdna/amdxdna_gem.c",
                {
                    "repo": "amd/xdna-driver",
                    "commit": commit,
                    "path": "src/driver/amdxdna/amdxdna_gem.c",
                },
            )
            driver["cmd_bo_limit_bytes"] = parse_cmd_bo(gem)
            driver["cmd_bo_limit_known"] = True
            driver["cmd_bo_from"] = key
        entry["out_of_tree_driver"] = driver
    hwq = _read(root / "src/shim/umq/hwq.cpp")
    if hwq is not None:
        key = sources.add(
            f"xdna-driver/{label}/src/shim/umq/hwq.cpp",
            {"repo": "amd/xdna-driver", "commit": commit, "path": "src/shim/umq/hwq.cpp"},
        )
        entry["userspace"] = {
            "cmd_bo_bytes": parse_umq(hwq),
            "from": key,
            "inferred": "the shim's command queue BO (umq_sz) is the largest command BO it creates",
        }
    return entry


def xrt_triple(text: str | None) -> list[int] | None:
    """`202610.2.21.75` (info.json) -> [2, 21, 75]."""
    parts = [int(x) for x in re.findall(r"\d+", text or "")]
    if len(parts) == 4:
        parts = parts[1:]
    return parts if len(parts) == 3 else None


def out_of_tree_eras(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The out-of-tree driver's rules by the version it carries (its DKMS package and module
    version are the XRT version of its commit): consecutive xdna-driver entries, in XRT
    version order, that request the same names and accept by the same rules are one era.
    What it requests turns at the rename of npu.sbin to npu.dev.sbin; how it accepts turned
    from an exact protocol major to a combined minimum (AIE2_FW_VERSION) later."""
    known = [e for e in lines if e.get("out_of_tree_driver") and xrt_triple(e.get("xrt_version"))]
    # a rename commit and its parent carry the same version: the parent sorts first
    known.sort(
        key=lambda e: (xrt_triple(e["xrt_version"]), e["label"] != XDNA_LABELS["rename-parent"])
    )
    eras: list[dict[str, Any]] = []
    for entry in known:
        driver = entry["out_of_tree_driver"]
        rules = {
            n: r["rules"]
            for n, r in sorted(driver["protocol"].items())
            if n != "npu2" and "as" not in r
        }
        key = (tuple(driver["firmware_names"]), json.dumps(rules, sort_keys=True))
        seen = {
            "label": entry["label"],
            "xrt_version": ".".join(map(str, xrt_triple(entry["xrt_version"]) or [])),
        }
        if eras and eras[-1]["_key"] == key:
            eras[-1]["last_seen"] = seen
            eras[-1]["from"].append(entry["label"])
            eras[-1]["protocol"] = driver["protocol"]
            eras[-1]["devices"] = entry.get("devices", eras[-1]["devices"])
            continue
        eras.append(
            {
                "_key": key,
                "firmware_names": driver["firmware_names"],
                "protocol": driver["protocol"],
                "cmd_bo_limit_bytes": driver.get("cmd_bo_limit_bytes"),
                "cmd_bo_limit_known": driver.get("cmd_bo_limit_known", False),
                "cmd_bo_from": driver.get("cmd_bo_from"),
                "devices": entry.get("devices", []),
                "first_seen": seen,
                "last_seen": seen,
                "from": [entry["label"]],
            }
        )
    for index, era in enumerate(eras):
        del era["_key"]
        kinds = sorted({r["kind"] for rules in era["protocol"].values() for r in rules["rules"]})
        era["id"] = (
            f"out-of-tree {'+'.join(era['firmware_names'])} ({'/'.join(kinds)}) #{index + 1}"
        )
    return eras


def parse_consumer(text: str) -> dict[str, Any]:
    """What FastFlowLM needs beyond its floors: the NPUs it runs on (the device it looks for
    as XDNA2) and the userspace plugin it loads."""
    found: dict[str, Any] = {}
    devices = sorted(
        {f"1022:{d.lower()}" for d in re.findall(r"VEN_1022&DEV_([0-9A-Fa-f]{4})", text)}
    )
    if devices:
        found["npus"] = {"pci": devices, "name": "XDNA2" if "XDNA2" in text else None}
    libraries = re.findall(r'"(libxrt_driver_xdna\.so\.\d+)"', text)
    if libraries:
        found["needs_libraries"] = sorted(set(libraries))
    return found


def parse_known_failures(text: str, source: str) -> list[dict[str, Any]]:
    """`<pci> <revision> <releases> <symptom> | <source>` rows."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        head, bar, where = line.partition(" | ")
        parts = head.split(None, 3)
        if not bar or len(parts) < 4:
            raise ValueError(
                f"{source}:{number}: expected '<pci> <revision> <releases> <symptom> | <source>'"
            )
        pci, revision, releases, symptom = parts
        rows.append(
            {
                "pci": pci.lower(),
                "revision": revision.lower(),
                "releases": releases,
                "symptom": symptom,
                "source": where,
            }
        )
    return rows


def generate(upstream: Path, carry: dict[str, Any] | None = None) -> dict[str, Any]:
    sources = Sources()
    done: dict[str, dict[str, Any]] = {}
    drivers = []
    # generations that others inherit from are read first (0.10 before 0.7 and 0.8)
    order = sorted(GENERATIONS, key=lambda g: 0 if not g.get("inherit") else 1)
    for spec in order:
        done[spec.get("id", spec["drm_version"])] = linux_generation(upstream, spec, done, sources)
    for spec in GENERATIONS:
        drivers.append(done[spec.get("id", spec["drm_version"])])
    # an NPU's firmware directory is in its npu*_regs.c; where a generation's file for it was
    # not read, take the directory another generation's file names (and say so)
    directories = {
        npu: rule["firmware_dir"]
        for driver in drivers
        for npu, rule in driver["protocol"].items()
        if rule.get("firmware_dir") and not rule.get("inferred")
    }
    for driver in drivers:
        for npu, rule in driver["protocol"].items():
            if not rule.get("firmware_dir") and npu in directories:
                rule["firmware_dir"] = directories[npu]
                rule["firmware_dir_inferred"] = "from another generation's regs file"
    lines = [e for label in XDNA_LABELS if (e := xdna_entry(upstream, label, sources))]
    observations = upstream / "firmware/observations.txt"
    blobs, links = parse_observations(
        observations.read_text(encoding="utf-8"), "firmware/observations.txt"
    )
    sources.add(
        "firmware/observations.txt",
        {
            "repo": "(reports)",
            "commit": "-",
            "path": "firmware/observations.txt",
            "note": "each row names its report",
        },
    )
    shipped: list[dict[str, Any]] = []
    trees = sorted(p for p in (upstream / "firmware/tree").glob("*") if p.is_dir())
    if not trees and carry is not None:
        # no packaged tree here: keep what the earlier output read from one, with its source
        for item in carry.get("sources", []):
            if str(item["key"]).startswith("firmware/tree/"):
                sources.add(item["key"], {k: v for k, v in item.items() if k != "key"})
        tree_links = [x for x in carry.get("firmware_links", []) if x["source"] != links_source]
        seen = {(x["dir"], x["name"]) for x in tree_links}
        links = [x for x in links if (x["dir"], x["name"]) not in seen] + tree_links
        shipped = list(carry.get("firmware_shipped", []))
        for blob in blobs:
            for b in shipped:
                if b["dir"] == blob["dir"] and b["release"] == blob["version"]:
                    blob["release_seen_in"] = b["source"]
    for tree in trees:
        source, tree_links, tree_blobs = read_firmware_tree(tree)
        sources.add(
            f"firmware/tree/{tree.name}",
            {
                "repo": "(package)",
                "commit": "-",
                "path": f"firmware/tree/{tree.name}",
                "note": source,
            },
        )
        # a package's tree is linux-firmware as shipped: its links replace the recorded ones
        seen = {(link["dir"], link["name"]) for link in tree_links}
        links = [x for x in links if (x["dir"], x["name"]) not in seen] + tree_links
        shipped.extend(tree_blobs)
        for blob in blobs:
            if any(b["dir"] == blob["dir"] and b["release"] == blob["version"] for b in tree_blobs):
                blob["release_seen_in"] = source
    consumers = []
    failures_path = upstream / "fastflowlm/known_failures.txt"
    failures = (
        parse_known_failures(
            failures_path.read_text(encoding="utf-8"), "fastflowlm/known_failures.txt"
        )
        if failures_path.is_file()
        else []
    )
    if failures:
        sources.add(
            "fastflowlm/known_failures.txt",
            {
                "repo": "(reports)",
                "commit": "-",
                "path": "fastflowlm/known_failures.txt",
                "note": "each row names its report",
            },
        )
    for path in sorted((upstream / "fastflowlm").glob("*.cpp")):
        text = path.read_text(encoding="utf-8", errors="replace")
        key = sources.add(f"fastflowlm/{path.name}", source_of(text, path.name))
        consumers.append(
            {
                "name": "FastFlowLM",
                "command": "flm validate",
                "floors": parse_floors(text),
                **parse_consumer(text),
                "known_failures": failures,
                "from": key,
            }
        )
    return {
        "schema": 2,
        "generated_by": "scripts/gen_compat_facts.py",
        "sources": sorted(sources.items.values(), key=lambda s: s["key"]),
        "drivers": drivers,
        "xdna_driver": lines,
        "out_of_tree": out_of_tree_eras(lines),
        "distro_packages": DISTRO_PACKAGES,
        "firmware": blobs,
        "firmware_links": sorted(links, key=lambda x: (x["dir"], x["name"])),
        # every blob a linux-firmware package ships, by its Release string (protocol: only
        # where `firmware` has a report of it)
        "firmware_shipped": shipped,
        "consumers": consumers,
        "search_order": {
            "prefixes": ["updates/", ""],
            "compressed": ["", ".zst", ".xz"],
            "note": (
                "firmware_class tries every directory (updates/ first) for the plain name, "
                "then for each compressed suffix, per requested name (drivers/base/firmware_loader)"
                "; inferred from the loader's behaviour, not from a file read here"
            ),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", type=Path, required=True)
    parser.add_argument(
        "--output",
        type=Path,
        default=Path(__file__).resolve().parent.parent
        / "src/xdnaforge/compat/data/compat_facts.json",
    )
    parser.add_argument(
        "--carry",
        type=Path,
        help="an earlier output: what it read from a packaged firmware tree is kept when "
        "--upstream has none (firmware/tree/ absent), with its sources",
    )
    options = parser.parse_args()
    carry = json.loads(options.carry.read_text(encoding="utf-8")) if options.carry else None
    document = generate(options.upstream, carry)
    options.output.parent.mkdir(parents=True, exist_ok=True)
    options.output.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    print(
        f"{len(document['drivers'])} driver generations, {len(document['xdna_driver'])} "
        f"xdna-driver entries, {len(document['firmware'])} firmware blobs from "
        f"{len(document['sources'])} sources -> {options.output}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
