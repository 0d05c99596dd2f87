"""The fake_tools fixture: fakes first on PATH, a scenario directory, the recorded calls."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

BIN = Path(__file__).resolve().parent / "bin"


@dataclass
class FakeTools:
    scenario: Path
    calls_file: Path

    @property
    def env(self) -> dict[str, str]:
        return {
            "PATH": f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "FAKE_SCENARIO": str(self.scenario),
            "FAKE_CALLS": str(self.calls_file),
        }

    def calls(self, tool: str) -> list[list[str]]:
        if not self.calls_file.exists():
            return []
        entries = [json.loads(line) for line in self.calls_file.read_text().splitlines()]
        return [e["argv"] for e in entries if e["tool"] == tool]

    def write(self, relative: str, text: str) -> None:
        path = self.scenario / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def installed(self, packages: dict[str, str]) -> None:
        """What the fake dpkg-query reports as installed: {package: version}."""
        self.write(
            "dpkg-query/installed.tsv", "".join(f"{p}\tii \t{v}\n" for p, v in packages.items())
        )


def make_fake_tools(root: Path) -> FakeTools:
    tools = FakeTools(scenario=root / "scenario", calls_file=root / "calls.jsonl")
    tools.scenario.mkdir(parents=True, exist_ok=True)
    tools.installed({})
    return tools
