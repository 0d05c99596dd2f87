"""doctor on real logs: the corpus score, and its speed on journals against `grep -c`.

1. The corpus of issue 26 (tests/fixtures/corpus: real public logs the knowledge was not
   written from) judged leave-one-source-out: the score of the tuning and the held-out
   half and the per-family confusion table (the suite prints the same); then the time
   split (issue 33): the logs of threads opened from evaluate.CUTOFF on, judged with the
   knowledge that cites none of them, with their confusion table, and the same split at
   three other cut-offs.
2. Speed on what a real journal looks like: --size-mb MB in which about 1 % of the lines
   are the real NPU lines of tests/fixtures (field and corpus, as kernel lines) and the
   rest ordinary kernel, systemd and application lines (numbers vary, so no two are
   alike). Timed, best of --repeat runs, each in a fresh process, the commands taking
   turns: doctor (`log_verdict.scan_file`, what `doit doctor --log` runs) against
   `grep -c amdxdna` over the same file. Target: within 3x, memory flat (peak RSS on
   --size-mb and on 1 MB). Printed beside it: doctor with its search in Python (the
   machines python-hyperscan has no wheel for), doctor's start-up (its run on a one-line
   log) and the same four-word prefilter doctor runs, done by `grep -F` in C.
3. The same on a journal made only of the real NPU lines (the bench of the last round),
   against `grep -c -E <the failure pattern>`. Target: within 3x.
4. Hostile lines on the line-by-line path (a small log): 100 distinct 8 KB lines of one
   unit repeated; the rate shows no regex is quadratic in a line (a line is read to its
   first 8 KB only).

Wall time on a shared machine is noisy: the CPU time (user + sys) of each run is printed
too.

    python bench/bench_doctor.py [--size-mb 200] [--repeat 5] [--no-speed]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from xdnaforge.diagnosis.anchors import HYPERSCAN, JOURNAL_ANCHORS
from xdnaforge.diagnosis.evaluate import (
    CUTOFF,
    confusion_table,
    field_dates,
    fresh,
    leave_one_source_out,
    load_corpus,
    score,
    time_split,
)
from xdnaforge.diagnosis.knowledge import ANNOTATION, FAILURE_RE

REPO = Path(__file__).resolve().parent.parent
DOCTOR = (
    "import sys, resource; from pathlib import Path; from xdnaforge.diagnosis import anchors; "
    "from xdnaforge.diagnosis.log_verdict import scan_file; "
    "anchors.HYPERSCAN = anchors.HYPERSCAN and sys.argv[2:] != ['python']; "
    "v = scan_file(Path(sys.argv[1])); "
    "print(v.status.replace(' ', '-'), len(v.diagnoses), "
    "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
)
# ordinary lines of a laptop's journal (kernel, systemd, desktop, daemons), none NPU
ORDINARY = (
    "kernel: usb 1-{a}: new high-speed USB device number {b} using xhci_hcd",
    "kernel: EXT4-fs (nvme0n1p{a}): mounted filesystem {c} ro with ordered data mode",
    "kernel: wlp1s0: associated, aid {a}, rssi -{b} dBm",
    'kernel: audit: type=1400 audit({c}.{b}:{a}): apparmor="ALLOWED" operation="open"',
    "kernel: perf: interrupt took too long ({b} > {a}), lowering kernel.perf_event_max_sample_rate",
    "systemd[1]: Started session-{a}.scope - Session {a} of User alice.",
    "systemd[1]: Starting logrotate.service - Rotate log files...",
    "systemd[{b}]: Finished systemd-tmpfiles-clean.service - Cleanup of Temporary Directories.",
    "systemd-logind[{b}]: New session {a} of user alice.",
    "NetworkManager[{b}]: <info>  [{c}.{a}] device (wlp1s0): state change: activated",
    "gnome-shell[{b}]: Window manager warning: last_user_time ({c}) is greater than comparison",
    "pipewire[{b}]: spa.alsa: front:{a}p: snd_pcm_avail after recover: Broken pipe",
    "sshd[{b}]: Accepted publickey for alice from 10.0.{a}.{a} port {c} ssh2",
    "CRON[{b}]: (root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)",
    "dbus-daemon[{b}]: [system] Successfully activated service 'org.freedesktop.nm_dispatcher'",
    "firefox[{b}]: [Parent {b}, Main Thread] WARNING: JS error at resource://{a}: retrying",
)


def npu_lines() -> list[str]:
    """Every log line of the field cases and the corpus (the corpus without its header)."""
    texts = [
        p.read_text(encoding="utf-8") for p in sorted(REPO.glob("tests/fixtures/field/*/input.txt"))
    ]
    texts += [c.text for c in load_corpus(REPO / "tests/fixtures/corpus")]
    return [
        line
        for text in texts
        for line in text.splitlines()
        if line.strip() and not line.startswith(ANNOTATION)
    ]


def generate(path: Path, size_mb: int, npu_share: float) -> tuple[int, int]:
    """A journal of `size_mb` MB: (lines, NPU lines)."""
    real = npu_lines()
    rng = random.Random(26)
    target = size_mb * 1024 * 1024
    written = count = npu = 0
    with path.open("w", encoding="utf-8") as out:
        while written < target:
            seconds = count // 50
            stamp = f"Nov 30 {seconds // 3600 % 24:02}:{seconds // 60 % 60:02}:{seconds % 60:02}"
            if rng.random() < npu_share:
                text = f"{stamp} npuhost kernel: {real[npu % len(real)]}\n"
                npu += 1
            else:
                line = rng.choice(ORDINARY).format(
                    a=rng.randint(1, 99), b=rng.randint(100, 99999), c=rng.randint(10**9, 2 * 10**9)
                )
                text = f"{stamp} npuhost {line}\n"
            out.write(text)
            written += len(text.encode("utf-8"))
            count += 1
        # a journal at rest: its pages written out, not flushed to disk during the timed runs
        out.flush()
        os.fsync(out.fileno())
    return count, npu


def ere(pattern: str) -> str:
    """Python's failure pattern as a POSIX ERE for grep -E (\\d is not ERE; (?i:x) is not)."""
    return pattern.replace(r"\d", "[0-9]").replace("(?i:", "(")


def best(argv: list[str], repeat: int) -> tuple[float, float, str]:
    """(best wall time, its CPU time, output) of `repeat` runs."""
    return interleaved([argv], repeat)[0]


def interleaved(commands: list[list[str]], repeat: int) -> list[tuple[float, float, str]]:
    """The best run of each command, the commands run in turn `repeat` times: a shared
    machine's slow spells then slow every command, not only the one that ran in them."""
    runs: list[list[tuple[float, float, str]]] = [[] for _ in commands]
    for _ in range(repeat):
        for argv, found in zip(commands, runs, strict=True):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            found.append((wall, cpu, done.stdout.strip()))
    return [min(found) for found in runs]


def compiled() -> None:
    """xdnaforge's bytecode written, as an installed package has it: with
    PYTHONDONTWRITEBYTECODE set, each timed run would compile the modules again."""
    import compileall

    compileall.compile_dir(REPO / "src" / "xdnaforge", quiet=1)


def corpus_report() -> None:
    cases = load_corpus(REPO / "tests/fixtures/corpus")
    outcomes = leave_one_source_out(cases)
    print(f"corpus: {len(cases)} real logs, leave-one-source-out: {score(outcomes).describe()}")
    for split in ("tune", "held-out"):
        print(f"  {split:9} {score(o for o in outcomes if o.case.split == split).describe()}")
    print(confusion_table(outcomes))
    unseen = time_split(cases, field_dates(REPO / "tests/fixtures/field"))
    print(
        f"time split: {len(unseen)} logs of threads opened from {CUTOFF} on, judged with the "
        f"knowledge that cites no such thread: {score(unseen).describe()}"
    )
    print(confusion_table(unseen))
    dates = field_dates(REPO / "tests/fixtures/field")
    for cutoff in ("2025-01-01", "2025-06-01", "2026-03-01"):  # how much the cut-off matters
        other = time_split(cases, dates, cutoff)
        print(f"  cut-off {cutoff}: {len(other)} unseen logs, {score(other).describe()}")
    # logs of threads nothing in the project cites, collected blind (tests/fixtures/fresh)
    for name, outcomes in fresh(load_corpus(REPO / "tests/fixtures/fresh", "f*.txt")).items():
        print(f"fresh set {name}: {len(outcomes)} logs, {score(outcomes).describe()}")
        print(confusion_table(outcomes))


def speed(size_mb: int, repeat: int) -> None:
    compiled()
    with tempfile.TemporaryDirectory(prefix="xdnaforge-bench-doctor-") as tmp:
        mixed, small, npu_only, one = (
            Path(tmp) / "mixed.log",
            Path(tmp) / "small.log",
            Path(tmp) / "npu.log",
            Path(tmp) / "one.log",
        )
        one.write_text("Nov 30 00:00:00 npuhost kernel: usb 1-1: new device\n")
        lines, npu = generate(mixed, size_mb, 0.01)
        generate(small, 1, 0.01)
        print(
            f"\njournal: {size_mb} MB, {lines} lines, {npu} ({npu / lines:.1%}) from real NPU logs"
        )
        anchors = [arg for anchor in JOURNAL_ANCHORS for arg in ("-e", anchor.decode())]
        grep, prefilter, doctor, in_python, start_up = interleaved(
            [
                ["grep", "-c", "amdxdna", str(mixed)],
                ["env", "LC_ALL=C", "grep", "-c", "-F", *anchors, str(mixed)],
                [sys.executable, "-c", DOCTOR, str(mixed)],
                [sys.executable, "-c", DOCTOR, str(mixed), "python"],
                [sys.executable, "-c", DOCTOR, str(one)],
            ],
            repeat,
        )
        small_run = best([sys.executable, "-c", DOCTOR, str(small)], 1)
        verdict = doctor[2].split()[0]
        print(f"grep -c amdxdna:    {grep[0]:.2f} s wall, {grep[1]:.2f} s CPU ({grep[2]} lines)")
        engine = "Hyperscan" if HYPERSCAN else "Python (python-hyperscan is not installed)"
        print(f"doctor (scan_file): {doctor[0]:.2f} s wall, {doctor[1]:.2f} s CPU ({verdict})")
        print(f"  its search: {engine}")
        print(
            f"doctor / grep -c amdxdna: {doctor[0] / grep[0]:.2f}x wall, "
            f"{doctor[1] / max(grep[1], 1e-3):.2f}x CPU (target < 3x)"
        )
        print(
            f"doctor with the search in Python (no Hyperscan): {in_python[0]:.2f} s wall, "
            f"{in_python[0] / grep[0]:.2f}x"
        )
        print(
            f"  of which: start-up (doctor on a one-line log: interpreter, imports, knowledge) "
            f"{start_up[0]:.2f} s; for comparison, doctor's prefilter in C "
            f"(grep -c -F {' '.join(anchors)}) {prefilter[0]:.2f} s ({prefilter[2]} lines)"
        )
        big, little = int(doctor[2].split()[-1]) // 1024, int(small_run[2].split()[-1]) // 1024
        print(f"peak RSS: {big} MB on {size_mb} MB, {little} MB on 1 MB")
        mixed.unlink()
        generate(npu_only, size_mb, 1.0)
        grep_e, doctor_n = interleaved(
            [
                ["grep", "-c", "-E", ere(FAILURE_RE.pattern), str(npu_only)],
                [sys.executable, "-c", DOCTOR, str(npu_only)],
            ],
            repeat,
        )
        print(f"\nall-NPU journal: {size_mb} MB")
        print(f"grep -c -E <failure pattern>: {grep_e[0]:.2f} s wall, {grep_e[1]:.2f} s CPU")
        print(f"doctor (scan_file):           {doctor_n[0]:.2f} s wall, {doctor_n[1]:.2f} s CPU")
        print(
            f"doctor / grep -c -E: {doctor_n[0] / grep_e[0]:.2f}x wall, "
            f"{doctor_n[1] / max(grep_e[1], 1e-3):.2f}x CPU (target < 3x)"
        )


def hostile() -> None:
    """Doctor on a small log of hostile lines (100 distinct lines of 8 KB each of one unit
    repeated: letters, digits, non-ASCII, separators): the worst rate of any regex on the
    line-by-line path, which reads a line to its first 8 KB only."""
    from xdnaforge.diagnosis.log_verdict import judge

    judge("x\n")  # the knowledge loaded once, as for any log
    print("\nhostile lines (100 distinct lines of 8 KB, line-by-line path):")
    # (label, line; each of the 100 ends in its number): one unit repeated, then a run of
    # blanks between words, where a lazy group before "\s*" retried the run from each of
    # its characters (quadratic: the pass/fail columns, pip's and CMake's lines, xrt-smi's
    # key-value lines)
    shapes: list[tuple[str, str]] = [
        (repr(unit), (unit * 8000)[:8000])
        for unit in ("a", "1", "\u00e9", "\u00e9 ", "\u00e9: ", ".xclbin ", "| ", "\u2713 ", "-#!")
    ]
    shapes += [
        ("word blanks", "w" + " " * 8000 + "x"),
        ("key: blanks", "  Key : v" + " " * 8000 + "x"),
        ("pip blanks", "Successfully installed a" + " " * 8000 + "b"),
        # a catalogue template's piece over and over, without its end: the template's regex,
        # its run-time pieces side by side, retried every way to share the line among them
        ("template", ("Get handle of " * 600)[:8000]),
        # blanks around an optional colon, after a verdict's word ("pass\s*:?\s*(\d+)")
        ("PASS blanks", "PASS " + " " * 8000 + "y"),
    ]
    for label, line in shapes:
        text = "".join(f"{line}{i}\n" for i in range(100))
        start = time.perf_counter()
        judge(text)
        took = time.perf_counter() - start
        print(f"  {label:12} {took:6.2f} s ({len(text) / took / 1e6:5.2f} MB/s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-speed", action="store_true", help="only the corpus score")
    options = parser.parse_args()
    corpus_report()
    if not options.no_speed:
        speed(options.size_mb, options.repeat)
        hostile()
    return 0


if __name__ == "__main__":
    sys.exit(main())
