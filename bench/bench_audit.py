"""Audit time and peak memory against dpkg's own listing, on kernel-image-shaped packages.

Generates a package shaped like Debian's linux-image-6.1.0-*-cloud-amd64 (26 MB as xz:
1,121 module files of about 85 kB that compress about 6:1, and an 11 MB incompressible
vmlinuz) in gzip, zstd and multi-block xz (dpkg-deb's layout: `xz -T2`, 24 MiB blocks whose
headers carry their sizes), plus any real packages given with --deb, and times, best of
--repeat runs interleaved (so that a busy moment of the machine hits all sides):
  * dpkg: `dpkg-deb --fsys-tarfile X | tar -t` plus `dpkg-deb -e X DIR`, three fresh
    processes (C programs: they start in a few ms);
  * xdnaforge per package: read_deb + audit (one streaming pass, control and data, the
    sha256 of the file and the rules) in a running interpreter that has imported xdnaforge
    once, as `doit audit` does for each package of a target;
  * xdnaforge as a fresh process: the same in a new interpreter, its start-up and imports
    included (about 30 ms before the first byte is read; doit's own start-up is not).
The ratios are xdnaforge / dpkg: the target is <= 1.0 per package for every compression on
2 cores. Peak RSS (of the fresh process) is shown for each package and for a tiny one:
memory must not grow with the package.

    python bench/bench_audit.py [--repeat 5] [--deb real.deb ...] [--keep DIR]
    (e.g. --deb from `apt-get download linux-image-6.1.0-50-cloud-amd64`)
"""

from __future__ import annotations

import argparse
import io
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# peak RSS from VmHWM: ru_maxrss survives fork and exec, so a child would report this
# script's own peak (it holds the generated files in memory)
AUDIT = (
    "import sys; from pathlib import Path; "
    "from xdnaforge.debs.debfile import read_deb; "
    "from xdnaforge.debs.rules import audit, wants_text; "
    "v = audit(read_deb(Path(sys.argv[1]), wants_text)); "
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]; "
    "print(v.verdict, hwm.split()[1])"
)
# a running xdnaforge: each line on stdin names a package to audit, each answer is the
# seconds the audit took
WORKER = (
    "import sys, time; from pathlib import Path; "
    "from xdnaforge.debs.debfile import read_deb\n"
    "from xdnaforge.debs.rules import audit, wants_text\n"
    "for line in sys.stdin:\n"
    "    started = time.monotonic(); audit(read_deb(Path(line.strip()), wants_text))\n"
    "    print(time.monotonic() - started, flush=True)\n"
)
MODULES = 1121
KERNEL = "6.1.0-50-cloud-amd64"
XZ_BLOCK = 24 << 20  # liblzma's threaded encoder at -6: three times the 8 MiB dictionary


def module_bytes(rng: random.Random, size: int, words: list[bytes]) -> bytes:
    """Code-like bytes: a small vocabulary in random order compresses about 6:1 with xz."""
    parts = rng.choices(words, k=size // 6 + 1)
    return b"".join(parts)[:size]


def generate_root(root: Path, scale: float) -> None:
    rng = random.Random(2026)
    words = [rng.randbytes(rng.randint(2, 10)) for _ in range(512)]
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN/control").write_text(
        f"Package: linux-image-{KERNEL}\nVersion: 6.1.176-1\nArchitecture: amd64\n"
        "Maintainer: b <b@example.invalid>\nDescription: benchmark, kernel-image shaped\n"
    )
    (root / "DEBIAN/postinst").write_text(f"#!/bin/sh\nset -e\ndepmod -a {KERNEL}\n")
    (root / "DEBIAN/postinst").chmod(0o755)
    boot = root / "boot"
    boot.mkdir()
    (boot / f"vmlinuz-{KERNEL}").write_bytes(rng.randbytes(int(11_000_000 * scale)))
    (boot / f"System.map-{KERNEL}").write_bytes(module_bytes(rng, int(4_000_000 * scale), words))
    for index in range(MODULES):
        size = int(min(2_000_000, rng.lognormvariate(10.8, 0.9)) * scale)
        folder = root / f"lib/modules/{KERNEL}/kernel/drivers/group{index % 60}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"module{index}.ko").write_bytes(module_bytes(rng, size, words))


def ar_archive(members: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO(b"!<arch>\n")
    out.seek(0, io.SEEK_END)
    for name, data in members:
        out.write(f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n".encode())
        out.write(data + (b"\n" if len(data) % 2 else b""))
    return out.getvalue()


def build(root: Path, output: Path, compression: str) -> Path:
    if compression != "xz":
        run(["dpkg-deb", "--root-owner-group", f"-Z{compression}", "--build", root, output])
        return output
    # dpkg-deb's own xz is multi-block on a multi-core machine; build the same layout on
    # purpose (xz -T2 with its 24 MiB blocks) so the figure does not depend on this machine
    plain = output.with_suffix(".none.deb")
    run(["dpkg-deb", "--root-owner-group", "-Znone", "--build", root, plain])
    tar = run(["dpkg-deb", "--fsys-tarfile", plain])
    control = run(["dpkg-deb", "--ctrl-tarfile", plain])
    data = run(["xz", "-6", "-T2", f"--block-size={XZ_BLOCK}", "-c"], tar)
    control_xz = run(["xz", "-c"], control)
    members = [("debian-binary", b"2.0\n"), ("control.tar.xz", control_xz)]
    output.write_bytes(ar_archive([*members, ("data.tar.xz", data)]))
    plain.unlink()
    return output


def run(argv: list[str | Path], stdin: bytes | None = None) -> bytes:
    done = subprocess.run([str(a) for a in argv], input=stdin, capture_output=True, check=True)
    return done.stdout


def xz_blocks(deb: Path, scratch: Path) -> str:
    """How many blocks the data member has (what parallel decoding can use)."""
    names = run(["ar", "t", deb]).decode().split() if shutil.which("ar") else []
    member = next((n for n in names if n.startswith("data.tar.xz")), None)
    if member is None:
        return "-"
    copy = scratch / "data.tar.xz"
    copy.write_bytes(run(["ar", "p", deb, member]))
    listing = run(["xz", "--robot", "--list", copy]).decode()
    return next(line.split("\t")[2] for line in listing.splitlines() if line.startswith("file"))


def best(repeat: int, action: Callable[[], object]) -> tuple[float, float]:
    """Best wall time, and the CPU time (user + system, all processes) of that run."""
    runs = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        action()
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        runs.append((wall, cpu))
    return min(runs)


def dpkg_listing(deb: Path, scratch: Path) -> None:
    listing = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-t"], stdin=listing.stdout, check=True, capture_output=True)
    listing.wait()
    control = scratch / "control"
    shutil.rmtree(control, ignore_errors=True)
    subprocess.run(["dpkg-deb", "-e", str(deb), str(control)], check=True)


def xdnaforge(deb: Path) -> int:
    """Runs the audit in a fresh interpreter; returns its peak RSS in KiB."""
    done = subprocess.run(
        [sys.executable, "-c", AUDIT, str(deb)], check=True, capture_output=True, text=True
    )
    return int(done.stdout.split()[1])


class Running:
    """One interpreter that has imported xdnaforge, auditing packages on request."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def audit(self, deb: Path) -> float:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(f"{deb}\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def measure(
    deb: Path, label: str, repeat: int, scratch: Path, running: Running
) -> tuple[float, float]:
    """The per-package and the fresh-process ratio."""
    peaks: list[int] = []
    fresh, theirs, ours = (99.0, 0.0), (99.0, 0.0), 99.0
    for _ in range(repeat):  # interleaved, so that a busy moment hits every side
        fresh = min(fresh, best(1, lambda: peaks.append(xdnaforge(deb))))
        theirs = min(theirs, best(1, lambda: dpkg_listing(deb, scratch)))
        ours = min(ours, running.audit(deb))
    per_package, cold = ours / theirs[0], fresh[0] / theirs[0]
    print(
        f"{label:<30} {deb.stat().st_size / 1e6:5.1f} MB  blocks {xz_blocks(deb, scratch):>2}  "
        f"dpkg {theirs[0]:5.2f} s (cpu {theirs[1]:4.2f})  "
        f"xdnaforge per package {ours:5.2f} s  ratio {per_package:4.2f} "
        f"{'ok' if per_package <= 1.0 else 'OVER'}  "
        f"fresh process {fresh[0]:5.2f} s (cpu {fresh[1]:4.2f})  ratio {cold:4.2f}  "
        f"peak RSS {max(peaks) / 1024:5.1f} MiB"
    )
    return per_package, cold


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--deb", type=Path, action="append", default=[], help="a real package")
    parser.add_argument(
        "--keep", type=Path, help="generate into DIR and keep the packages (reused when there)"
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(options.keep or scratch_name)
        scratch.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        debs = {c: scratch / f"kernel.{c}.deb" for c in COMPRESSIONS}
        tiny = scratch / "tiny.xz.deb"
        if not all(deb.exists() for deb in [*debs.values(), tiny]):  # --keep DIR reuses them
            generate_root(scratch / "root", 1.0)
            generate_root(scratch / "tiny-root", 0.001)
            debs = {c: build(scratch / "root", debs[c], c) for c in COMPRESSIONS}
            tiny = build(scratch / "tiny-root", tiny, "xz")
        print(f"generated in {time.monotonic() - started:.0f} s; best of {options.repeat} runs")
        print(f"python {sys.version.split()[0]} ({sys.executable}), {os.cpu_count()} CPUs")
        running = Running()
        try:
            labelled = [(f"kernel-shaped, {c}", deb) for c, deb in debs.items()]
            labelled += [(deb.name[:30], deb) for deb in options.deb]
            ratios = [measure(d, label, options.repeat, scratch, running) for label, d in labelled]
        finally:
            running.close()
        print(f"peak RSS, tiny package: {xdnaforge(tiny) / 1024:5.1f} MiB")
        print(
            "worst ratio per package, xdnaforge / dpkg (target <= 1.0): "
            f"{max(r[0] for r in ratios):4.2f}"
        )
        print(
            "worst ratio as a fresh process (Python's start-up and imports included): "
            f"{max(r[1] for r in ratios):4.2f}"
        )


COMPRESSIONS = ("gzip", "xz", "zstd")

if __name__ == "__main__":
    main()
