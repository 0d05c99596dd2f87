"""The whole twin compile of a pinned tree through `doit build`: time per stage and step, and
the first error. Not a test: it needs the full sources (mirrors in a site file) and hours.

Runs `doit build --target T` (with XDNAFORGE_SITE / XDNAFORGE_PROJECT_DIR as given), notes
when each doit stage starts, then reads build.json for each build step's duration and exit
status; for a failed step (or a failed stage) it prints the first error line of its log.

    nice -n 15 python bench/bench_twin.py [--target ubuntu26-compat] [--site FILE]
        [--project-dir DIR]

The build runs where `doit build` runs its steps (the host today; the recipe's build
environment once it has one), so on a host of another distro the deps stage stops first and
that is the error printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from xdnaforge.config.proof import first_error  # noqa: E402

# doit's task line and xdnaforge's "<stage> <target>: <why it runs>" line
STAGE_RE = re.compile(r"^(?:\.\s+(\S+)|(\w[\w-]*) \S+: (?:runs|never run|up to date|.*changed))")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="ubuntu26-compat")
    parser.add_argument("--site", default=os.environ.get("XDNAFORGE_SITE", ""))
    parser.add_argument("--project-dir", default=os.environ.get("XDNAFORGE_PROJECT_DIR", ""))
    args = parser.parse_args()
    env = dict(os.environ)
    if args.site:
        env["XDNAFORGE_SITE"] = args.site
    if args.project_dir:
        env["XDNAFORGE_PROJECT_DIR"] = args.project_dir
    doit = Path(sys.executable).with_name("doit")
    started = time.monotonic()
    stages: list[tuple[str, float]] = []
    output: list[str] = []
    with subprocess.Popen(
        [str(doit), "-f", str(REPO / "dodo.py"), "build", "--target", args.target],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line.rstrip("\n"))
            match = STAGE_RE.match(line)
            if match:
                stages.append((match.group(1) or match.group(2), time.monotonic() - started))
    total = time.monotonic() - started
    print(f"doit build --target {args.target}: exit {process.returncode}, {total:.0f} s")
    for (name, at), following in zip(stages, [*stages[1:], ("end", total)], strict=True):
        print(f"  stage {name:<32} {following[1] - at:8.1f} s")
    print(_steps(env, args.target))
    if process.returncode != 0:
        failed = [i for i, line in enumerate(output) if line.startswith("TaskFailed")]
        after = output[failed[0] + 1] if failed and failed[0] + 1 < len(output) else ""
        print(f"first error: {first_error(chr(10).join(output)) or after or '-'}")
    return process.returncode


def _steps(env: dict[str, str], target: str) -> str:
    """Per build step: duration, exit status and, when it failed, its log's first error."""
    artifacts = _artifacts_dir(env)
    record = artifacts / target / "build.json"
    if not record.is_file():
        return "  (no build.json: no build step ran)"
    lines = []
    for name, step in json.loads(record.read_text()).get("steps", {}).items():
        line = (
            f"  step {name:<10} {step.get('duration_s', 0):8.1f} s  exit {step.get('exit_status')}"
        )
        if step.get("exit_status") not in (0, None) and step.get("log"):
            log = Path(step["log"])
            text = log.read_text(errors="replace") if log.is_file() else ""
            line += f"\n      first error: {first_error(text) or '-'}"
        lines.append(line)
    return "\n".join(lines)


def _artifacts_dir(env: dict[str, str]) -> Path:
    """The site's artifacts_dir (a site file may move it), else ./artifacts."""
    site = env.get("XDNAFORGE_SITE")
    if site and Path(site).is_file():
        for line in Path(site).read_text().splitlines():
            if line.startswith("artifacts_dir:"):
                return Path(line.partition(":")[2].strip())
    return REPO / "artifacts"


if __name__ == "__main__":
    sys.exit(main())
