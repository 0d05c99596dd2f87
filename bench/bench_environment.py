"""The cost of running build steps inside an environment (bubblewrap) against the host.

1. start-up: `true` on the host and inside (the fixed cost per step),
2. a CPU-bound step of --seconds (default 60; the target is under 2 % + 1 s) on the host
   and inside the same binaries (a test root: the host's /usr bound read-only), so only
   the sandbox differs,
3. reuse: reading an environment's dpkg database for the fingerprint (every plan does),
4. with --env build/envs/<distro>-<release>: that environment's own figures from env.json
   (time and disk to create it) and the start-up inside it.

  python bench/bench_environment.py [--seconds 60] [--repeat 3] [--env DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.integration.envroot import make_root  # noqa: E402

from bench.timing import best  # noqa: E402
from xdnaforge.environments.local import root_entries  # noqa: E402
from xdnaforge.process.run import run  # noqa: E402
from xdnaforge.process.sandbox import Binds, rootfs_argv  # noqa: E402
from xdnaforge.tools.dpkg import parse_status  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--env", type=Path, help="an environment made by `doit env`")
    options = parser.parse_args()
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        sys.exit("bwrap is not installed (apt-get install bubblewrap)")
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        root = make_root(base / "root", {"cmake": "4.3.4-1"})
        work = base / "work"
        work.mkdir()
        wrapper = rootfs_argv(
            bwrap, root_entries(root), Binds(writable=(work,), readonly=()), cwd=work
        )

        def step(argv: list[str], inside: bool) -> Callable[[], object]:
            return lambda: run(argv, cwd=work, timeout=3600, wrapper=wrapper if inside else ())

        host_true = best(options.repeat * 3, step(["true"], False))
        env_true = best(options.repeat * 3, step(["true"], True))
        print(f"start-up: host {host_true * 1000:.1f} ms, inside {env_true * 1000:.1f} ms")
        # the same work on both sides: a fixed number of iterations, calibrated on the host
        calibrate = ["python3", "-c", "import sys\nfor _ in range(10**7): pass"]
        unit = best(1, step(calibrate, False))
        loops = max(1, round(options.seconds / unit * 10**7))
        work_argv = ["python3", "-c", f"for _ in range({loops}): pass"]
        host = best(options.repeat, step(work_argv, False))
        inside = best(options.repeat, step(work_argv, True))
        overhead = inside - host
        print(
            f"step of {host:.1f} s: inside {inside:.1f} s, overhead {overhead:+.2f} s "
            f"({overhead / host * 100:+.2f} %; target < 2 % + 1 s = "
            f"{host * 0.02 + 1:.2f} s)"
        )
        status = root / "var/lib/dpkg/status"
        reuse = best(options.repeat, lambda: parse_status(status.read_text()))
        print(f"reuse: reading the test root's dpkg database {reuse * 1000:.2f} ms")
    if options.env:
        record = json.loads((options.env / "env.json").read_text())
        real = options.env / "root/var/lib/dpkg/status"
        reuse = best(options.repeat, lambda: parse_status(real.read_text()))
        print(
            f"{record['environment']}: created in {record.get('seconds', '?')} s, "
            f"{record.get('size_bytes', 0) / 2**20:.0f} MiB, {len(record['packages'])} packages; "
            f"reading its dpkg database {reuse * 1000:.1f} ms"
        )
        real_wrapper = rootfs_argv(
            bwrap,
            root_entries(options.env / "root"),
            Binds(writable=(), readonly=()),
            cwd=Path("/"),
        )
        inside_real = best(
            options.repeat * 3,
            lambda: run(["true"], cwd=Path("/"), timeout=60, wrapper=real_wrapper),
        )
        print(f"start-up inside {record['environment']}: {inside_real * 1000:.1f} ms")


if __name__ == "__main__":
    main()
