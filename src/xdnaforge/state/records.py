"""The JSON records every stage writes: atomic write, schema version, read.

A record is replaced with a temp file + fsync + rename, so a killed stage leaves the
previous good record in place; an interrupted stage adds only an `interrupted` entry. A record
is checked against its kind's shape (state/record_shapes.py) before it is written.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xdnaforge import __version__
from xdnaforge.errors import StageFailed
from xdnaforge.state import nofollow, record_shapes
from xdnaforge.state.record_shapes import SCHEMA

# the records of a target, in the order the report reads them
RECORDS = (
    "lock",
    "build",
    "packages",
    "audit",
    "install",
    "validation",
    "bench",
    "kernel",
    "matrix",
    "rebuild",
    "failure",
    "prove",
    "hostcompat",
    "pyxrt",
)


def _umask() -> int:
    """The process umask: from /proc (Linux 4.7+) without changing it, else by setting it
    and putting it straight back (a moment in which another thread's files get 022)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _create_temp(dir_fd: int, name: str) -> tuple[int, str]:
    """A new file beside `name` (O_EXCL|O_NOFOLLOW at the directory's descriptor, as mkstemp
    makes one, but without reopening the directory by its path)."""
    for _ in range(100):
        temp = f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            return os.open(temp, flags, 0o600, dir_fd=dir_fd), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {name}")


def write_atomic(path: Path, text: str, *, below: Path | None = None) -> None:
    """`path` replaced by `text`, its directory made if missing (state/nofollow.py: as root,
    reached only through links root owns; `below`: through no link below that directory)."""
    dir_fd = nofollow.open_directory(path.parent, below=below, create=True)
    temp = None
    try:
        fd, temp = _create_temp(dir_fd, path.name)
        # a new file is 0600; a record is read by others (the report's reader, a web
        # server), so it gets the mode any file the user creates gets: 0666 minus the umask
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        # rename replaces whatever has the name (a planted link too) and follows nothing
        os.replace(temp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        temp = None
    except OSError as error:
        if error.filename is None or not Path(error.filename).is_absolute():
            # a failed write or fsync (disk full) names no file, and one at the directory's
            # descriptor only the temporary name: name the record
            raise OSError(error.errno, error.strerror, str(path)) from None
        raise
    finally:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
        os.close(dir_fd)


def write_record(
    path: Path, kind: str, body: Mapping[str, Any], *, below: Path | None = None
) -> None:
    """Write `body` as record `kind` with the schema and tool version fields; a body that is
    not the kind's documented shape is a bug (RecordShapeError), and nothing is written."""
    data = {"schema": SCHEMA, "kind": kind, "xdnaforge": __version__, **body}
    record_shapes.check(kind, data)
    write_atomic(path, json.dumps(data, indent=2, sort_keys=False) + "\n", below=below)


def read_record(path: Path) -> dict[str, Any] | None:
    """The record at `path`, None when absent; a damaged record is a clear failure."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return parse_record(text, path)


def parse_record(text: str, path: Path) -> dict[str, Any]:
    """The record in `text` (read from `path`); a damaged record is a clear failure."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise StageFailed(
            f"{path}: not valid JSON ({error.msg} at line {error.lineno})",
            hint="records are written atomically, so this file was edited or damaged by hand; "
            "delete it and rerun the stage that writes it",
        ) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise StageFailed(
            f"{path}: record schema {data.get('schema') if isinstance(data, dict) else '?'} "
            f"is not {SCHEMA}",
            hint="written by another xdnaforge version; rerun the stage that writes it",
        )
    return data


def mark_interrupted(
    path: Path, *, stage: str, signal: str, stopped: str, log: Path | None
) -> None:
    """Note in the stage's record that it was interrupted, keeping every other field: what the
    last good run recorded stays valid, and the next completed run writes the record anew."""
    try:
        record = read_record(path)
    except StageFailed:
        return  # a damaged record stays as it is for its own clear error
    if record is None and path.stem != "build":
        return  # other records' readers expect their whole body; build.json's read .get()
    entry = {
        "stage": stage,
        "signal": signal,
        "stopped": stopped,
        "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "log": str(log) if log is not None else None,
    }
    body = {k: v for k, v in (record or {}).items() if k not in ("schema", "kind", "xdnaforge")}
    kind = str((record or {}).get("kind", path.stem))
    with contextlib.suppress(record_shapes.RecordShapeError):
        # a record another version wrote in another shape stays as it was: the note is only
        # information, and a signal's handling is no place to fail
        write_record(path, kind, {**body, "interrupted": entry})
