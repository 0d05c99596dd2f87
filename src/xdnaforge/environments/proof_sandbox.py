"""Where a proof runs: the host, or a root file system entered with bubblewrap; argv only.

(process/sandbox.py builds the argv of build steps; a proof also needs package files hidden, so it
keeps its own small wrapper over the same root.)

The small interface the proof runner needs from a build environment: a wrapper argv put in
front of a command, with directories bound in (the scratch tree) and directories replaced
(to hide a package's files). Until the recipe's build environment exists (issue 12), the
environment is named on the command line (`doit prove --env-root DIR`).

Pure: builds argument lists; running them is process/run.py's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HOST = Path("/")


@dataclass(frozen=True, slots=True, kw_only=True)
class Sandbox:
    name: str  # for people and records: "host", "rootfs /srv/forky (twin)"
    root: Path  # the environment's / on this machine; HOST for the host itself
    tools: Mapping[str, str] = field(default_factory=dict)  # cc, cxx, python -> program

    @property
    def is_host(self) -> bool:
        return self.root == HOST

    def tool(self, name: str) -> str:
        defaults = {"cc": "gcc", "cxx": "g++", "python": "python3"}
        return self.tools.get(name) or defaults[name]

    def wrapper(
        self,
        *,
        cwd: Path,
        binds: Sequence[Path] = (),
        replace: Sequence[tuple[Path, Path]] = (),
    ) -> list[str]:
        """The argv prefix that runs a command inside; empty on the host with nothing hidden.

        `binds` appear read-write at the same path; each (source, path) in `replace` puts the
        host directory `source` over `path` inside (paths inside the environment).
        """
        if self.is_host and not replace:
            return []
        if self.is_host:
            argv = ["bwrap", "--dev-bind", "/", "/"]
        else:
            # bound writable only so bwrap can make the mount points; read-only again below
            argv = ["bwrap", "--bind", str(self.root), "/", "--proc", "/proc", "--dev", "/dev"]
            argv += ["--tmpfs", "/tmp"]
        # network off and no process outliving xdnaforge: a proof is a local, bounded check
        argv += ["--unshare-net", "--unshare-pid", "--die-with-parent"]
        for path in binds:
            argv += ["--bind", str(path), str(path)]
        for source, path in replace:
            argv += ["--bind", str(source), str(path)]
        if not self.is_host:
            argv += ["--remount-ro", "/"]
        return [*argv, "--chdir", str(cwd), "--"]

    def host_path(self, path: str) -> Path:
        """Where a path inside the environment lives on this machine."""
        return self.root / path.lstrip("/")
