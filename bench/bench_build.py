"""The tool's overhead on a build, and a no-op `doit build` against `doit list`.

Uses the synthetic upstream of the tests (build scripts that package real .deb files with
dpkg-deb, so the "compile" is nearly free and what is measured is xdnaforge itself):
  1. the two build scripts run by hand in a checkout (the floor),
  2. `doit build` from nothing (fetch, patch, deps, both builds, package, audit, report),
  3. `doit build` again with nothing changed (must build nothing),
  4. `doit list` (doit's own start-up and task loading).

    python bench/bench_build.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.fakes.fixture import make_fake_tools  # noqa: E402
from tests.integration.upstream import make_upstream, write_recipe  # noqa: E402
from tests.unit.test_host import make_sysroot  # noqa: E402

from bench.timing import best  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        upstream = make_upstream(root / "upstream")
        project = root / "project"
        for name in ("recipes", "matrices", "patches"):
            shutil.copytree(REPO / name, project / name)
        write_recipe(project, upstream)
        make_sysroot(project / "sysroot")
        fakes = make_fake_tools(root / "fakes")
        fakes.installed({"cmake": "4.2.3", "g++": "15.2", "libboost-dev": "1.90"})
        env = {
            **fakes.env,
            "HOME": str(root),
            "XDNAFORGE_PROJECT_DIR": str(project),
            "XDNAFORGE_SYSROOT": str(project / "sysroot"),
            "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS",
        }
        doit = [sys.executable, "-m", "doit", "-f", str(REPO / "dodo.py")]

        checkout = root / "by-hand"
        subprocess.run(
            [
                "git",
                "-c",
                "protocol.file.allow=always",
                "clone",
                "-q",
                "--recursive",
                upstream.urls["xdna-driver"],
                str(checkout),
            ],
            check=True,
        )
        hand_env = {**os.environ, "HOME": str(root)}

        def by_hand() -> None:
            for cwd, argv in (
                (checkout / "xrt/build", ["./build.sh", "-npu", "-opt", "-noinit"]),
                (checkout / "build", ["./build.sh", "-release", "-nokmod"]),
            ):
                subprocess.run(argv, cwd=cwd, env=hand_env, check=True, capture_output=True)

        def fresh_build() -> None:
            for folder in ("build", "artifacts"):
                shutil.rmtree(project / folder, ignore_errors=True)
            subprocess.run(
                [*doit, "build", "--target", "synthetic"],
                cwd=REPO,
                env=env,
                check=True,
                capture_output=True,
            )

        def noop_build() -> None:
            done = subprocess.run(
                [*doit, "build", "--target", "synthetic"],
                cwd=REPO,
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            assert "nothing was compiled" in done.stdout

        def listing() -> None:
            subprocess.run([*doit, "list"], cwd=REPO, env=env, check=True, capture_output=True)

        hand = best(options.repeat, by_hand)
        full = best(options.repeat, fresh_build)
        noop = best(options.repeat, noop_build)
        plain = best(options.repeat, listing)
        print(f"build scripts by hand:             {hand:6.2f} s")
        print(
            f"doit build from nothing:           {full:6.2f} s  "
            f"(overhead {full - hand:+.2f} s: fetch, patch, deps, package, audit, report)"
        )
        print(f"doit build, nothing changed:       {noop:6.2f} s")
        print(f"doit list:                         {plain:6.2f} s")
        print(f"no-op build / list:                {noop / plain:6.2f}x")


if __name__ == "__main__":
    main()
