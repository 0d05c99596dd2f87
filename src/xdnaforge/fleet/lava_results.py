"""LAVA's results export (YAML, `/results/<job>/yaml` or `lavacli results <job> --yaml`) read
back into a cell's validation record and benchmark history entry; pure.

The export is a list of test cases, each a mapping of strings: name, job, suite (`<n>_<test
definition name>`; `lava` holds the job's own actions), result (pass, fail, skip, unknown),
measurement ("None" when there is none), unit, logged, url, level, id, metadata
(lava_results_app.dbutils.export_testcase).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from xdnaforge.config.matrix import Cell
from xdnaforge.config.recipe import Recipe
from xdnaforge.errors import StageFailed
from xdnaforge.hardware.bench import HIGHER_IS_BETTER, evaluate

SUITE_RE = re.compile(r"^\d+_xdnaforge-(?P<cell>.+)$")
RESULTS = ("pass", "fail", "skip", "unknown")
# the cases the test definition reports besides gates and figures
STEPS = ("install", "setup", "validation-record", "push-records", "rollback")


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    name: str
    suite: str
    result: str
    measurement: float | None
    unit: str
    job: str
    logged: str
    url: str


def parse_cases(data: Any, source: str, where: Any) -> list[Case]:
    """The test cases of an export; `where(index)` gives the line of entry `index`."""
    if not isinstance(data, list):
        raise StageFailed(
            f"{source}: expected a list of test cases (LAVA's results export), "
            f"got {type(data).__name__}",
            hint="download it from <lava>/results/<job>/yaml or `lavacli results <job> --yaml`",
        )
    cases = []
    for index, item in enumerate(data):
        line = where(index)
        if not isinstance(item, dict) or not {"name", "suite", "result"} <= item.keys():
            raise StageFailed(
                f"{source}:{line}: entry {index} is not a test case (needs name, suite, result)"
            )
        result = str(item["result"])
        if result not in RESULTS:
            raise StageFailed(
                f"{source}:{line}: entry {index} ({item['name']}): result '{result}' "
                f"is not one of {', '.join(RESULTS)}"
            )
        cases.append(
            Case(
                name=str(item["name"]),
                suite=str(item["suite"]),
                result=result,
                measurement=_number(item.get("measurement")),
                unit=str(item.get("unit") or ""),
                job=str(item.get("job", "")),
                logged=str(item.get("logged", "")),
                url=str(item.get("url", "")),
            )
        )
    return cases


def _number(value: Any) -> float | None:
    if value is None or str(value) in ("None", ""):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def cells_in(cases: Sequence[Case]) -> list[str]:
    """The cells whose test definitions reported in this export."""
    found = []
    for case in cases:
        match = SUITE_RE.match(case.suite)
        if match and match["cell"] not in found:
            found.append(match["cell"])
    return found


def to_records(
    cases: Sequence[Case],
    cell: Cell,
    recipe: Recipe,
    host: str,
    history: Sequence[Mapping[str, float]],
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(validation record body, benchmark history entry or None) for one cell."""
    ours = [c for c in cases if (m := SUITE_RE.match(c.suite)) and m["cell"] == cell.name]
    job = next((c.job for c in ours), "")
    time = max((c.logged for c in ours), default="")
    by_name = {c.name: c for c in ours}
    current = {
        c.name: c.measurement
        for c in ours
        if c.name in HIGHER_IS_BETTER and c.measurement is not None
    }
    metrics = evaluate(current, recipe.validation.thresholds, recipe.validation.baseline, history)
    gates = []
    for name in recipe.validation.gates:
        case = by_name.get(name)
        if case is None:
            status, summary = "skip", f"not reported by LAVA job {job}"
        else:
            status = case.result if case.result in ("pass", "fail", "skip") else "fail"
            summary = f"LAVA job {job}: {case.result}"
        worse = [m for m in metrics if m.failed] if name == "validate" else []
        if worse:
            # the rule of `doit validate`: a figure past its threshold (or a regression)
            # fails the gate, whatever LAVA's own case said
            status = "fail"
            summary += "; " + ", ".join(
                f"{m.name} {m.value:g} {m.unit} {m.verdict}"
                + (f" {m.threshold:g}" if m.threshold is not None else "")
                for m in worse
            )
        gates.append(
            {
                "name": name,
                "status": status,
                "summary": summary,
                "evidence": [case.url] if case and case.url else [],
                "metrics": [m.as_record() for m in metrics] if name == "validate" else [],
                "diagnoses": [],
            }
        )
    steps = {name: by_name[name].result for name in STEPS if name in by_name}
    failed = [g["name"] for g in gates if g["status"] == "fail"]
    failed += [name for name, result in steps.items() if result == "fail"]
    body = {
        "target": recipe.name,
        "time": time,
        "host": {
            "name": host,
            "distro": f"{cell.distro_id} {cell.distro_version}",
            "kernel": "unknown",
            "npu": "unknown",
            "cell": cell.name,
            "firmware": "unknown",
        },
        "verdict": "fail" if failed else "pass",
        "gates": gates,
        "lava": {"job": job, "steps": steps, "failed": failed},
        "lock_fingerprint": None,
        "installed": "by the LAVA job, rolled back after it"
        if steps.get("rollback") == "pass"
        else "by the LAVA job",
    }
    entry = None
    if current:
        entry = {
            "time": time,
            "kernel": "unknown",
            "firmware": "unknown",
            "host": host,
            "xrt": None,
            "lock_fingerprint": None,
            "metrics": current,
            "source": f"LAVA job {job}",
        }
    return body, entry
