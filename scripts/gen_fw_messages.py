#!/usr/bin/env python3
"""Read the NPU firmware's mailbox opcodes and status codes from every version of the driver's
message headers a snapshot holds, and write src/xdnaforge/diagnosis/data/fw_messages.json.

Run by hand (never at run time, never by a test) on a fetched snapshot:

    python3 scripts/gen_fw_messages.py --xdna /work/.mirror/amd+xdna-driver/repo

The driver talks to the NPU's firmware through mailbox messages; when the firmware refuses
one, the driver prints the message's opcode and the firmware's status in hexadecimal
("aie2_send_mgmt_msg_wait: command opcode 0x10f failed, status 0x4000002"). The headers that
number both (`enum aie2_msg_opcode` and `enum aie2_msg_status` in aie2_msg_priv.h, called
npu1_/npu_/ipu_msg_priv.h before 2024; `enum aie4_msg_opcode` and `enum aie4_msg_status` in
aie4_msg_priv.h for the NPU3 generation), out-of-tree (src/driver/amdxdna) and in the in-tree
copy the repository carries (drivers/accel/amdxdna), are read at every commit that changed
them. What is kept per generation (aie2: every NPU before NPU3, whatever the header's prefix
was; aie4) and value: every name it had, with the dates of the first and last commit that
had it. No code is kept.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_upstream_messages import Snapshot

_HEADER_RE = re.compile(r"(?:^|/)(?:aie2|aie4|npu1|npu|ipu)_msg_priv\.h$")
_ENUM_RE = re.compile(r"enum (\w+?)_msg_(opcode|status)\s*\{(.*?)\}", re.S)
_ITEM_RE = re.compile(r"^\s*([A-Z][A-Z0-9_]*)\s*(?:=\s*(\w+))?\s*,?", re.M)
_COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_PREPROCESSOR_RE = re.compile(r"^\s*#[^\n]*$", re.M)


def enum_values(body: str) -> dict[int, str]:
    """The enum's names by value (explicit values honoured, the next one counted on from
    the last; the MAX_* bounds are no codes). Preprocessor lines are dropped, so a name under
    `#ifdef AMDXDNA_DEVEL` counts as the development build numbers it."""
    text = _PREPROCESSOR_RE.sub("", _COMMENT_RE.sub("", body))
    values: dict[int, str] = {}
    number = 0
    for name, value in _ITEM_RE.findall(text):
        if value:
            try:
                number = int(value, 0)
            except ValueError:
                continue  # another enum's name as the value: not a firmware code
        if "MAX_" not in name:
            values.setdefault(number, name)
        number += 1
    return values


def generation(prefix: str) -> str:
    return "aie4" if prefix == "aie4" else "aie2"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--xdna", type=Path, required=True, help="amd/xdna-driver git dir")
    parser.add_argument(
        "--output",
        type=Path,
        default=Path(__file__).resolve().parent.parent
        / "src/xdnaforge/diagnosis/data/fw_messages.json",
    )
    options = parser.parse_args()
    snap = Snapshot(options.xdna)
    # generation -> kind -> value -> name -> [first date, last date]
    found: dict[str, dict[str, dict[str, dict[str, list[str]]]]] = {}
    log = snap.git(
        "log", "--all", "--format=%H|%ad", "--date=short", "--name-only", "--", "*msg_priv.h"
    )
    versions = 0
    commit = date = ""
    for line in log.splitlines():
        if "|" in line:
            commit, date = line.split("|", 1)
            continue
        path = line.strip()
        if not path or not _HEADER_RE.search(path):
            continue
        text = snap.read(f"{commit}:{path}")
        if not text:
            continue  # the commit deleted it
        versions += 1
        for prefix, kind, body in _ENUM_RE.findall(text):
            table = found.setdefault(generation(prefix), {}).setdefault(kind, {})
            for value, name in enum_values(body).items():
                span = table.setdefault(f"0x{value:x}", {}).setdefault(name, [date, date])
                span[0], span[1] = min(span[0], date), max(span[1], date)
    head = snap.git("rev-parse", "HEAD").strip()
    document = {
        "schema": 1,
        "generated_by": "scripts/gen_fw_messages.py",
        "repo": "amd/xdna-driver",
        "head": head,
        "generations": {
            gen: {
                kind: {
                    value: {
                        name: {"first": s[0], "last": s[1]} for name, s in sorted(names.items())
                    }
                    for value, names in sorted(table.items(), key=lambda item: int(item[0], 16))
                }
                for kind, table in sorted(kinds.items())
            }
            for gen, kinds in sorted(found.items())
        },
    }
    options.output.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    counts = ", ".join(
        f"{gen}: {len(kinds.get('opcode', {}))} opcodes, {len(kinds.get('status', {}))} statuses"
        for gen, kinds in sorted(found.items())
    )
    print(f"{counts}; from {versions} header versions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
