"""Installing packages with the real dpkg into a throw-away root of this host, to see what
their maintainer scripts do: the module tools they run and the files they leave (the root is
made and listed by tools/observe_root.py's script, read by debs/observed.py).

Nothing of the host changes: the root is overlays on a tmpfs inside bubblewrap's user
namespaces, gone when bubblewrap exits, and the only file written is the log under
`scratch`. So this needs no consent (install/consent.py): it is an install only in name.
Every expected failure is an Observation "not run" with the reason, never an exception and
never a pass: bubblewrap or dpkg missing, no user namespaces, an overlay or a copy-up refused
(unprivileged, the host's root-owned files cannot be changed in a namespace that maps only
the caller: "not run", needs root), the whole observation past its time limit. dpkg itself
gets most of `timeout` (dpkg_limit); stopped there, the observation is still made, with
`dpkg_status` None, that said at the end of `dpkg_tail`, and what was done by then: a hung
script is a finding, not a reason to see nothing.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from xdnaforge.debs.observed import Observation, not_run, parse
from xdnaforge.errors import ToolNotFound
from xdnaforge.process.run import CommandFailed, run
from xdnaforge.process.sandbox import bwrap_fault
from xdnaforge.tools.observe_root import observe_argv

# What of the time limit is kept for making the root and listing it, not given to dpkg: a
# fifth, at least 5 s and at most 60 s (both take about a quarter of a second on an idle
# machine, a second for a package of 4000 files and 100 MB; more on a loaded one).
MARGIN_SHARE = 0.2
MARGIN_SECONDS = (5.0, 60.0)
LOG_NAME = "observe.log"


def observe(debs: Sequence[Path], *, scratch: Path, timeout: float = 300.0) -> Observation:
    """Install `debs` together (`dpkg --force-depends -i`, triggers included) into a
    throw-away root and say what happened there; writes only `scratch`/observe.log."""
    if not debs:
        return not_run("no packages to install")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return not_run("bwrap is not installed (Debian package bubblewrap)")
    if shutil.which("dpkg") is None:
        return not_run("dpkg is not installed (Debian package dpkg)")
    files = [Path(deb).resolve() for deb in debs]
    missing = [str(deb) for deb in files if not deb.is_file()]
    if missing:
        return not_run(f"no such package file: {', '.join(missing)}")
    dpkg_seconds = dpkg_limit(timeout)
    scratch.mkdir(parents=True, exist_ok=True)
    argv = observe_argv(str(Path(bwrap).absolute()), files, dpkg_seconds=dpkg_seconds)
    try:
        result = run(
            argv,
            cwd=scratch,
            timeout=timeout,
            log_file=scratch / LOG_NAME,
            ok_codes=range(256),
        )
    except CommandFailed as failed:
        if failed.returncode is None:
            return not_run(f"the observation did not finish within {timeout:g} s")
        return not_run(f"bubblewrap was killed (status {failed.returncode})")
    except ToolNotFound as missing_tool:
        return not_run(str(missing_tool))
    if not result.stdout:
        return not_run(_sandbox_fault(result.stderr, result.returncode))
    return parse(result.stdout, result.stderr, dpkg_seconds=dpkg_seconds)


def dpkg_limit(timeout: float) -> float:
    """dpkg's own limit within the observation's: the margin (MARGIN_SHARE, within
    MARGIN_SECONDS) is kept for making the root and listing it."""
    low, high = MARGIN_SECONDS
    return max(1.0, timeout - min(max(timeout * MARGIN_SHARE, low), high))


def _sandbox_fault(stderr: str, returncode: int) -> str:
    """Why bubblewrap did not run the script: a user namespace refused, most often."""
    known = bwrap_fault(stderr)
    if known is not None:
        return f"needs user namespaces: {known}"
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    said = lines[-1][:300] if lines else f"exit status {returncode}, no message"
    return f"bubblewrap did not run the observation: {said}"
