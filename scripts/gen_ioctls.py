#!/usr/bin/env python3
"""Read the amdxdna ioctl names from every version of the driver's uapi header a snapshot
holds, and write src/xdnaforge/diagnosis/data/ioctls.json.

Run by hand (never at run time, never by a test) on a fetched snapshot:

    python3 scripts/gen_ioctls.py --xdna /work/.mirror/amd+xdna-driver/repo

The header (`src/include/uapi/drm_local/amdxdna_accel.h`, earlier `include/uapi/drm_local/`,
and the in-tree copy `include/uapi/drm/amdxdna_accel.h`) numbers the ioctls in `enum
amdxdna_drm_ioctl_id`; the shim prints them as `DRM_IOCTL_AMDXDNA_<NAME>`. Every commit that
changed the header is compared with its parent: a name that left the enum where another one
came in at the same position, the rest of the enum unchanged, was renamed (CREATE_HWCTX ->
CREATE_CTX in January 2025 and back in July), so a log of a shim built between them names
the same operation by the other name. What is kept: every name the enum ever had, the dates
of the first and last commit that had it, and the renames. No code is kept.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_upstream_messages import Snapshot

HEADERS = (
    "src/include/uapi/drm_local/amdxdna_accel.h",
    "include/uapi/drm_local/amdxdna_accel.h",
    "include/uapi/drm/amdxdna_accel.h",
)
_ENUM_RE = re.compile(r"enum amdxdna_drm_ioctl_id\s*\{(.*?)\}", re.S)
_ITEM_RE = re.compile(r"DRM_AMDXDNA_(\w+)(?:\s*=\s*(\w+))?")
_COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def ioctl_enum(text: str) -> list[str]:
    """The enum's names by position (explicit values honoured; NUM_IOCTLS is not one)."""
    match = _ENUM_RE.search(text)
    if match is None:
        return []
    names: dict[int, str] = {}
    number = 0
    for name, value in _ITEM_RE.findall(_COMMENT_RE.sub("", match.group(1))):
        if value:
            number = int(value, 0)
        if name != "NUM_IOCTLS":
            names[number] = name
        number += 1
    return [names.get(i, "") for i in range(max(names) + 1)] if names else []


def renames(before: list[str], after: list[str]) -> list[tuple[str, str]]:
    """(old, new) for each position whose name changed while every other name stayed."""
    if len(before) != len(after) or not before:
        return []
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    kept = set(before) & set(after)
    return [(a, b) for a, b in changed if a and b and a not in kept and b not in kept]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--xdna", type=Path, required=True, help="amd/xdna-driver git dir")
    parser.add_argument(
        "--output",
        type=Path,
        default=Path(__file__).resolve().parent.parent / "src/xdnaforge/diagnosis/data/ioctls.json",
    )
    options = parser.parse_args()
    snap = Snapshot(options.xdna)
    names: dict[str, list[str]] = {}  # name -> [first date, last date]
    alias: dict[str, str] = {}
    log = snap.git("log", "--all", "--format=%H %P|%ad", "--date=short", "--", *HEADERS)
    commits = 0
    for line in log.splitlines():
        shas, _, date = line.partition("|")
        commit, *parents = shas.split()
        for path in HEADERS:
            after = ioctl_enum(snap.read(f"{commit}:{path}"))  # "" where the path is not
            if not after:
                continue
            commits += 1
            for name in filter(None, after):
                span = names.setdefault(name, [date, date])
                span[0], span[1] = min(span[0], date), max(span[1], date)
            for parent in parents[:1]:
                before = ioctl_enum(snap.read(f"{parent}:{path}"))
                for old, new in renames(before, after):
                    alias.setdefault(new, old)
    # a name renamed back ("CREATE_CTX" -> "CREATE_HWCTX") points at the name it had first
    canonical = {}
    for name in names:
        seen, current = {name}, name
        while current in alias and alias[current] not in seen:
            current = alias[current]
            seen.add(current)
        earliest = min(seen, key=lambda n: (names[n][0], n))
        if earliest != name:
            canonical[name] = earliest
    head = snap.git("rev-parse", "HEAD").strip()
    document = {
        "schema": 1,
        "generated_by": "scripts/gen_ioctls.py",
        "repo": "amd/xdna-driver",
        "head": head,
        "names": {
            name: {"first": span[0], "last": span[1]} for name, span in sorted(names.items())
        },
        "renamed": dict(sorted(canonical.items())),
    }
    options.output.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    print(f"{len(names)} ioctl names, {len(canonical)} renamed, from {commits} header versions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
