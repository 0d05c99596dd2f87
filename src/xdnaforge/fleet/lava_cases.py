"""`python -m xdnaforge.fleet.lava_cases validation.json`: the `lava-test-case` lines for a
validation record, one per gate and one per benchmark figure, printed as shell for the
LAVA test shell to run. Pure apart from reading the file and printing; starts nothing."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FAILED_METRIC = ("regression", "below threshold", "above threshold")


def case_lines(record: Mapping[str, Any]) -> list[str]:
    lines = []
    for gate in record.get("gates", []):
        status = gate.get("status")
        result = status if status in ("pass", "fail", "skip") else "unknown"
        lines.append(shlex.join(["lava-test-case", str(gate["name"]), "--result", result]))
        for metric in gate.get("metrics", []):
            verdict = "fail" if metric.get("verdict") in FAILED_METRIC else "pass"
            lines.append(
                shlex.join(
                    [
                        "lava-test-case",
                        str(metric["name"]),
                        "--result",
                        verdict,
                        "--measurement",
                        repr(float(metric["value"])),
                        "--units",
                        str(metric["unit"]),
                    ]
                )
            )
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m xdnaforge.fleet.lava_cases validation.json", file=sys.stderr)
        return 3
    path = Path(argv[0])
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        # no record: the run never got to the gates; LAVA shows that as one failed case
        print(f"# {path}: {error}")
        print("lava-test-case validation-record --result fail")
        return 0
    for line in case_lines(record):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
