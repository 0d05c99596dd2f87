"""Audit throughput and peak memory on a large generated package, against the system tools.

Generates a .deb of --size-mb MB in --files files (incompressible content, so the sizes are
real) with dpkg-deb, then times:
  * xdnaforge: read_deb + audit (one streaming pass, control and data),
  * system tools: `dpkg-deb --fsys-tarfile X | tar -t` plus `dpkg-deb -e X DIR`,
each in a fresh process, best of --repeat runs, and reports the auditor's peak RSS for the
large package and for a tiny one (memory must stay flat in package size).

    python bench/bench_audit.py [--size-mb 300] [--files 3000] [--compression gzip]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AUDIT = (
    "import sys, resource; from pathlib import Path; "
    "from xdnaforge.debfile import read_deb; from xdnaforge.audit import audit, wants_text; "
    "v = audit(read_deb(Path(sys.argv[1]), wants_text)); "
    "print(v.verdict, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
)


def generate(directory: Path, size_mb: int, files: int, compression: str) -> Path:
    root = directory / "root"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN/control").write_text(
        "Package: bench-big\nVersion: 1.0\nArchitecture: amd64\n"
        "Maintainer: b <b@example.invalid>\nDescription: benchmark\n"
    )
    per_file = size_mb * 1024 * 1024 // files
    for index in range(files):
        path = root / f"opt/xilinx/xrt/share/data{index % 40}/blob{index}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(per_file))
    output = directory / "big.deb"
    subprocess.run(
        [
            "dpkg-deb",
            "--root-owner-group",
            f"-Z{compression}",
            "-z1",
            "--build",
            str(root),
            str(output),
        ],
        check=True,
        capture_output=True,
    )
    return output


def best(repeat: int, run: object) -> float:
    times = []
    for _ in range(repeat):
        started = time.monotonic()
        run()  # type: ignore[operator]
        times.append(time.monotonic() - started)
    return min(times)


def system_tools(deb: Path, scratch: Path) -> None:
    listing = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-t"], stdin=listing.stdout, check=True, capture_output=True)
    listing.wait()
    control = scratch / "control"
    subprocess.run(["rm", "-rf", str(control)], check=True)
    subprocess.run(["dpkg-deb", "-e", str(deb), str(control)], check=True)


def xdnaforge(deb: Path) -> int:
    """Runs the audit in a fresh interpreter; returns its peak RSS in KiB."""
    done = subprocess.run(
        [sys.executable, "-c", AUDIT, str(deb)], check=True, capture_output=True, text=True
    )
    return int(done.stdout.split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=300)
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--compression", default="gzip", choices=["gzip", "xz", "zstd", "none"])
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        started = time.monotonic()
        deb = generate(scratch / "big", options.size_mb, options.files, options.compression)
        print(
            f"generated {deb.stat().st_size / 1e6:.0f} MB, {options.files} files, "
            f"{options.compression} in {time.monotonic() - started:.0f} s"
        )
        tiny = generate(scratch / "tiny", 1, 10, options.compression)
        peaks: list[int] = []
        ours = best(options.repeat, lambda: peaks.append(xdnaforge(deb)))
        theirs = best(options.repeat, lambda: system_tools(deb, scratch))
        tiny_peak = xdnaforge(tiny)
        rate = deb.stat().st_size / 1e6 / ours
        print(f"xdnaforge audit:                  {ours:6.2f} s  ({rate:.0f} MB/s)")
        print(f"dpkg-deb | tar -t  +  dpkg-deb -e: {theirs:6.2f} s")
        print(
            f"ratio (system tools / xdnaforge):  {theirs / ours:6.2f}  (>= 1 means we are faster)"
        )
        print(f"peak RSS, {deb.stat().st_size / 1e6:.0f} MB package: {max(peaks) / 1024:6.1f} MiB")
        print(f"peak RSS, tiny package:          {tiny_peak / 1024:6.1f} MiB")


if __name__ == "__main__":
    main()
