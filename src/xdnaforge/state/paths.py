"""The build/ and artifacts/ layout of one target, as functions of the site; pure."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Workspace:
    target: str
    build_dir: Path
    artifacts_dir: Path

    @property
    def work(self) -> Path:
        """build/<target>: everything rebuildable for this target."""
        return self.build_dir / self.target

    @property
    def source_tree(self) -> Path:
        return self.work / "src"

    @property
    def logs(self) -> Path:
        return self.work / "logs"

    @property
    def records(self) -> Path:
        """artifacts/<target>: the JSON records and the packages."""
        return self.artifacts_dir / self.target

    def record(self, name: str) -> Path:
        return self.records / f"{name}.json"

    @property
    def packages(self) -> Path:
        return self.records / "debs"


def build_lock(build_dir: Path) -> Path:
    """The build directory's lock file (its owner record says who runs which stage)."""
    return build_dir / ".lock"
