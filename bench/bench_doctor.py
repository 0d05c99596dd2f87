"""doctor --log on a large journal, against `grep -c`, and its peak memory.

Generates a journal of --size-mb MB from the real log lines of tests/fixtures/field (each
line given a journal prefix with a running timestamp, as `journalctl -k` prints), then
times, best of --repeat runs, each in a fresh process:
  * xdnaforge: the verdict over the streamed file (log_verdict.scan, what `doit doctor --log`
    runs),
  * `grep -c -E` with the failure-line pattern the doctor uses (the least work that finds
    the same lines), and `grep -c amdxdna` (a plain word),
and reports the doctor's peak RSS on the large journal and on a 1 MB one (memory must stay
flat in the journal's size). The target: doctor under 3x the `grep -c -E` time.

    python bench/bench_doctor.py [--size-mb 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from xdnaforge.diagnosis.knowledge import ANNOTATION, FAILURE_RE

REPO = Path(__file__).resolve().parent.parent
DOCTOR = (
    "import sys, resource; from xdnaforge.diagnosis.log_verdict import scan; "
    "f = open(sys.argv[1], encoding='utf-8', errors='replace'); v = scan(f); "
    "print(v.status, len(v.diagnoses), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
)


def real_lines() -> list[str]:
    lines = []
    for path in sorted((REPO / "tests/fixtures/field").glob("*/input.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith(ANNOTATION):
                lines.append(line)
    return lines


def generate(path: Path, size_mb: int) -> int:
    lines = real_lines()
    target = size_mb * 1024 * 1024
    written = count = 0
    with path.open("w", encoding="utf-8") as out:
        while written < target:
            line = lines[count % len(lines)]
            seconds = count // 50
            stamp = f"Nov 30 {seconds // 3600 % 24:02}:{seconds // 60 % 60:02}:{seconds % 60:02}"
            text = f"{stamp} npuhost kernel: {line}\n"
            out.write(text)
            written += len(text.encode("utf-8"))
            count += 1
    return count


def ere(pattern: str) -> str:
    """Python's failure pattern as a POSIX ERE for grep -E (\\d is not ERE)."""
    return pattern.replace(r"\d", "[0-9]")


def best(argv: list[str], repeat: int) -> tuple[float, str]:
    times, output = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        output = done.stdout.strip()
    return min(times), output


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="xdnaforge-bench-doctor-") as tmp:
        journal, small = Path(tmp) / "journal.log", Path(tmp) / "small.log"
        lines = generate(journal, options.size_mb)
        generate(small, 1)
        print(f"journal: {options.size_mb} MB, {lines} lines from {len(real_lines())} real lines")
        grep_e, count_e = best(
            ["grep", "-c", "-E", ere(FAILURE_RE.pattern), str(journal)], options.repeat
        )
        grep_w, count_w = best(["grep", "-c", "amdxdna", str(journal)], options.repeat)
        doctor, report = best([sys.executable, "-c", DOCTOR, str(journal)], options.repeat)
        _, small_report = best([sys.executable, "-c", DOCTOR, str(small)], 1)
        print(f"grep -c -E <failure pattern>: {grep_e:.2f} s ({count_e} lines)")
        print(f"grep -c amdxdna:              {grep_w:.2f} s ({count_w} lines)")
        print(f"doctor (log_verdict.scan):        {doctor:.2f} s ({report.split()[0]})")
        print(f"doctor / grep -c -E: {doctor / grep_e:.2f}x (target < 3x)")
        print(f"doctor / grep -c amdxdna: {doctor / grep_w:.2f}x")
        big_rss, small_rss = int(report.split()[-1]), int(small_report.split()[-1])
        big, small_mb = big_rss // 1024, small_rss // 1024
        print(f"peak RSS: {big} MB on {options.size_mb} MB, {small_mb} MB on 1 MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
