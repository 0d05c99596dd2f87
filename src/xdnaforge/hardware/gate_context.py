"""One hardware gate's outcome (`Gate`) and what every gate may use (`Context`): the project,
the plan, the host facts, the NPU's user, and tools run through process/run.py as that user.

Owns no gate logic; hardware/gates.py runs the system gates, hardware/xrt_gates.py the XRT ones.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdnaforge.config.project import Project
from xdnaforge.diagnosis.knowledge import Diagnosis
from xdnaforge.hardware.bench import Metric
from xdnaforge.hardware.npu_user import NpuUser, as_user
from xdnaforge.hardware.xrt_layout import XrtLayout, find_layout
from xdnaforge.host import HostFacts, read_text
from xdnaforge.planning.plan import Plan
from xdnaforge.process.run import CommandResult, run

DEFAULT_BIN = ("/usr/bin", "/bin", "/usr/local/bin")


@dataclass
class Gate:
    name: str
    status: str = "skip"  # pass, fail, skip
    summary: str = ""
    evidence: list[str] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    diagnoses: list[Diagnosis] = field(default_factory=list)
    ran_as: str = ""  # whose limits, groups and device access the gate saw
    # False for a failure that predicts rather than observes (a driver contract that does not
    # hold): the gates after it still run and observe what it predicts
    blocking: bool = True

    def passed(self, summary: str) -> Gate:
        self.status, self.summary = "pass", summary
        return self

    def failed(self, summary: str, *diagnoses: Diagnosis) -> Gate:
        self.status, self.summary = "fail", summary
        self.diagnoses.extend(
            d for d in diagnoses if d.code not in {x.code for x in self.diagnoses}
        )
        return self

    def as_record(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "summary": self.summary,
            "evidence": self.evidence,
            "metrics": [m.as_record() for m in self.metrics],
            "diagnoses": [d.as_record() for d in self.diagnoses],
            "ran_as": self.ran_as,
            **({} if self.blocking else {"blocking": False}),
        }


@dataclass
class Context:
    project: Project
    plan: Plan
    work: Path  # where tool outputs go (build/<target>/validate)
    history: list[dict[str, float]]
    found: dict[str, Any] = field(default_factory=dict)  # what gates learn for later ones
    # set when xdnaforge runs as root and the NPU's user is known: USER_GATES run as them
    user: NpuUser | None = None
    running_as: str = ""  # who xdnaforge itself is ("root", "uid 1000")
    switched: bool = False  # the gate running now runs as `user`
    root_report: Path | None = None  # xrt-smi validate's report, made as root beforehand
    layout: XrtLayout | None = None  # where the installed XRT lives; found on first use

    def xrt(self) -> XrtLayout:
        """The installed stack's layout: from its packages' file lists, or site.yaml."""
        if self.layout is None:
            site = self.project.site
            self.layout = find_layout(
                self.sysroot,
                self.plan.recipe.install_order,
                site_prefix=site.xrt_prefix if site.xrt_prefix_given else None,
            )
        return self.layout

    @property
    def facts(self) -> HostFacts:
        """The host facts the command read once (the plan carries them)."""
        return self.plan.host

    @property
    def sysroot(self) -> Path:
        return self.project.site.sysroot

    def under_root(self, path: Path) -> Path:
        return self.sysroot / path.relative_to("/") if path.is_absolute() else path

    def tool(
        self,
        argv: Sequence[str],
        *,
        timeout: float | None = None,
        env: dict[str, str] | None = None,
        as_root: bool = False,
    ) -> CommandResult:
        """Run a tool; as the NPU's user when the gate running now speaks for them (unless
        `as_root`: the kernel log is not the user's to read)."""
        path = os.environ.get("PATH", "/usr/bin:/bin")
        prefix_bin = str(self.xrt().bin_dir)
        if prefix_bin not in DEFAULT_BIN:  # /usr/bin is on PATH: putting it first shadows
            path = f"{prefix_bin}:{path}"
        switch = self.user is not None and self.switched and not as_root
        prefix = as_user(self.user) if self.user is not None and switch else []
        return run(
            [*prefix, *argv],
            cwd=self.output_dir() if switch else self.work,
            timeout=timeout or self.project.site.tool_timeout_s,
            env={"PATH": path, **(env or {})},
            log_file=self.work / "tools.log",
        )

    def output_dir(self) -> Path:
        """Where tools write their reports: a directory of the user's when they run as them."""
        if self.user is None or not self.switched:
            return self.work
        folder = self.work / f"as-{self.user.name}"
        folder.mkdir(exist_ok=True)
        os.chown(folder, self.user.uid, self.user.gid)
        return folder

    def read_as_user(self, path: Path) -> str:
        """A /proc/self file as the gate's user sees it: their own process's, through runuser."""
        if self.user is None or not self.switched:
            return read_text(self.under_root(path)) or ""
        return self.tool(["cat", str(self.under_root(path))], timeout=60).stdout
