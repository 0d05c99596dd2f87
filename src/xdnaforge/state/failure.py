"""failure.json: which stage of a target failed last, when, why, and its attempts.

Edge module. Written beside the good records (never over them), removed once that stage
succeeds, so `doit plan` and the build can say "failed last time at <stage>" instead of
"never run", and the report can show the failed attempts with their logs. It holds the
fingerprint the stage had when it failed: once the inputs no longer give that fingerprint
(the edit that broke it was reverted), the failure is history, not the current state.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any

from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_record


def record_failure(
    space: Workspace,
    stage: str,
    message: str,
    attempts: list[dict[str, Any]],
    fingerprint: str | None = None,
) -> None:
    write_record(
        space.record("failure"),
        "failure",
        {
            "target": space.target,
            "stage": stage,
            "fingerprint": fingerprint,
            "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "message": message,
            "attempts": attempts,
        },
    )


def clear_failure(space: Workspace, stage: str) -> None:
    """The stage succeeded: a failure recorded for it is history."""
    failure = read_record(space.record("failure"))
    if failure is not None and failure.get("stage") == stage:
        space.record("failure").unlink(missing_ok=True)


def describe_failure(failure: Mapping[str, Any]) -> str:
    """ "failed last time at build-xrt (2026-11-30 05:12 UTC)"; pure."""
    try:
        when = datetime.datetime.fromisoformat(str(failure.get("time")))
        text = when.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        text = "time unknown"
    return f"failed last time at {failure.get('stage', '?')} ({text})"


def outdated(failure: Mapping[str, Any], fingerprints: Mapping[str, str]) -> bool:
    """The failure was of other inputs than the stage has now (`fingerprints`: stage name ->
    its current fingerprint); pure. A record without a fingerprint is taken as current."""
    then = failure.get("fingerprint")
    now = fingerprints.get(str(failure.get("stage")))
    return then is not None and now is not None and then != now


def retire_outdated(space: Workspace, fingerprints: Mapping[str, str]) -> str | None:
    """Remove a failure that no longer describes the current inputs; what was removed."""
    failure = read_record(space.record("failure"))
    if failure is None or not outdated(failure, fingerprints):
        return None
    space.record("failure").unlink(missing_ok=True)
    return describe_failure(failure)


def attempts_seconds(attempts: Iterable[Mapping[str, Any]]) -> float:
    """The time the attempts of a stage ran, summed (not the span from the first to the
    last); an attempt without both times adds nothing."""
    total = 0.0
    for attempt in attempts:
        try:
            began = datetime.datetime.fromisoformat(str(attempt["started"]))
            ended = datetime.datetime.fromisoformat(str(attempt["finished"]))
        except (KeyError, ValueError):
            continue
        total += (ended - began).total_seconds()
    return total
