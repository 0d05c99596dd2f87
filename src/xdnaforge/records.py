"""The JSON records every stage writes: atomic write, schema version, read.

A record is replaced with a temp file + fsync + rename, so a killed stage leaves the
previous good record in place.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import __version__
from .errors import StepFailed

SCHEMA = 1


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        Path(temp).replace(path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def write_record(path: Path, kind: str, body: Mapping[str, Any]) -> None:
    """Write `body` as record `kind` with the schema and tool version fields."""
    data = {"schema": SCHEMA, "kind": kind, "xdnaforge": __version__, **body}
    write_atomic(path, json.dumps(data, indent=2, sort_keys=False) + "\n")


def read_record(path: Path) -> dict[str, Any] | None:
    """The record at `path`, None when absent; a damaged record is a clear failure."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise StepFailed(
            f"{path}: not valid JSON ({error.msg} at line {error.lineno})",
            hint="records are written atomically, so this file was edited or damaged by hand; "
            "delete it and rerun the stage that writes it",
        ) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise StepFailed(
            f"{path}: record schema {data.get('schema') if isinstance(data, dict) else '?'} "
            f"is not {SCHEMA}",
            hint="written by another xdnaforge version; rerun the stage that writes it",
        )
    return data
