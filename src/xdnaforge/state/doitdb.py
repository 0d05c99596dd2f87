"""doit's state file, written atomically and never on behalf of read-only tasks.

doit's own JSON backend rewrites its file after every run (and crashes when the directory
is missing). `doit plan` and `doit check` must change nothing on disk, and a killed run
must not leave a half-written state file, so this backend drops what read-only tasks would
store, writes only when something changed, and replaces the file with a temp + rename.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from xdnaforge.state.records import write_atomic

# tasks that only read: doit would otherwise store their (empty) state after each run
READ_ONLY_TASKS = frozenset(
    {
        "check",
        "plan",
        "doctor",
        "audit",
        "fetch",
        "patch",
        "deps",
        "build",
        "report",
        "install",
        "rollback",
        "validate",
        "matrix",
        "kernel-hook",
    }
)


def _is_read_only(task_id: str) -> bool:
    return task_id.split(":", 1)[0] in READ_ONLY_TASKS


class StateFile:
    """A doit DB backend (see doit.dependency.JsonDB for the interface)."""

    desc = "xdnaforge: atomic JSON state file; read-only tasks store nothing"

    def __init__(self, name: str, codec: Any, **_options: Any) -> None:
        self.name = name
        self.codec = codec
        path = Path(name)
        self._db: dict[str, dict[str, Any]] = {}
        if path.exists():
            try:
                self._db = json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, OSError):
                # a state file is a cache: losing it means rerunning stages, never wrong output
                self._db = {}
        self._saved = json.dumps(self._db, sort_keys=True)

    def dump(self) -> None:
        text = json.dumps(self._db, sort_keys=True)
        if text == self._saved:
            return
        write_atomic(Path(self.name), text)
        self._saved = text

    def set(self, task_id: str, dependency: str, value: Any) -> None:
        if _is_read_only(task_id):
            return
        self._db.setdefault(task_id, {})[dependency] = value

    def get(self, task_id: str, dependency: str) -> Any:
        return self._db.get(task_id, {}).get(dependency)

    def in_(self, task_id: str) -> bool:
        return task_id in self._db

    def remove(self, task_id: str) -> None:
        self._db.pop(task_id, None)

    def remove_all(self) -> None:
        self._db = {}
