"""log_verdict's journal mode: a large file of journal lines is read through its NPU lines
only, found by a block search; the verdict is the one of those lines read one by one."""

from __future__ import annotations

import os
import platform
import random
import threading
from pathlib import Path

import pytest

from tests.conftest import REPO, REQUIRE_TOOLS
from xdnaforge.diagnosis import anchors
from xdnaforge.diagnosis.anchors import JOURNAL_ANCHORS
from xdnaforge.diagnosis.classify import message_of
from xdnaforge.diagnosis.evaluate import load_corpus
from xdnaforge.diagnosis.log_verdict import (
    _LINE_LIMIT,
    FAILURE,
    HEALTHY,
    Verdict,
    _scan,
    is_journal,
    journal_lines,
    judge,
    scan,
    scan_file,
)

CORPUS = REPO / "tests/fixtures/corpus"


@pytest.fixture(autouse=True, params=["hyperscan", "python"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs with both searches, which must find the same lines."""
    if request.param == "python":
        monkeypatch.setattr(anchors, "HYPERSCAN", False)
    elif not anchors.HYPERSCAN:  # a dependency on x86_64 Linux: missing there is a fault
        if os.environ.get(REQUIRE_TOOLS) == "1" and platform.machine() == "x86_64":
            pytest.fail("python-hyperscan is not installed (pip install -e .)", pytrace=False)
        pytest.skip("python-hyperscan is not installed (no wheel for this machine)")
    return str(request.param)


# ordinary lines of a machine's journal, none about the NPU (a failing unit among them)
ORDINARY = (
    "systemd[1]: Started Session {n} of User alice.",
    "kernel: usb 1-{n}: new high-speed USB device number {n} using xhci_hcd",
    "NetworkManager[812]: <info>  [{n}.5] device (wlp1s0): state change: activated",
    "kernel: EXT4-fs (nvme0n1p{n}): mounted filesystem with ordered data mode",
    "systemd[1]: Failed to start user-runtime-dir@{n}.service - User Runtime Directory.",
    "CRON[{n}]: (root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)",
)


def journal(path: Path, npu_lines: list[str], ordinary: int, seed: int = 0) -> list[str]:
    """Write a journal: `npu_lines` in order among `ordinary` other lines; return it."""
    rng = random.Random(seed)
    lines = [rng.choice(ORDINARY).format(n=rng.randint(1, 9999)) for _ in range(ordinary)]
    places = sorted(rng.sample(range(len(lines) + len(npu_lines)), len(npu_lines)))
    for place, line in zip(places, npu_lines, strict=True):
        lines.insert(place, line)
    stamped = [
        f"Nov 30 10:{i // 60 % 60:02}:{i % 60:02} npuhost {line}" for i, line in enumerate(lines)
    ]
    path.write_text("\n".join(stamped) + "\n")
    return stamped


def kernel_lines(ident: str) -> list[str]:
    case = next(c for c in load_corpus(CORPUS) if c.ident == ident)
    return [f"kernel: {line}" for line in case.text.splitlines() if line.strip()]


def test_a_journal_is_read_through_its_npu_lines_with_their_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "journal.log"
    lines = journal(path, kernel_lines("c036") + kernel_lines("c046"), ordinary=5000)
    found = list(journal_lines(path, block_size=4096))  # many block boundaries
    expected = [
        (number, line)
        for number, line in enumerate(lines)
        if any(anchor.decode() in line for anchor in JOURNAL_ANCHORS)
    ]
    assert found == expected
    assert len(found) < 20  # the other 5000 lines were never split one by one


def test_the_journal_verdict_is_the_one_of_its_npu_lines(tmp_path: Path) -> None:
    path = tmp_path / "journal.log"
    lines = journal(path, kernel_lines("c036"), ordinary=3000)
    assert is_journal(path, min_bytes=1)
    verdict = scan_file(path, journal_min_bytes=1)
    npu_only = [line for line in lines if any(a.decode() in line for a in JOURNAL_ANCHORS)]
    alone = scan(npu_only)
    assert verdict.status == alone.status == FAILURE
    assert [d.code for d in verdict.diagnoses] == [d.code for d in alone.diagnoses]
    assert verdict.diagnoses[0].code == "fw-protocol-mismatch"
    # its line is the line of the whole file (1-based)
    assert lines[verdict.diagnoses[0].line - 1].endswith(verdict.diagnoses[0].evidence[-40:])


def test_another_programs_failure_in_a_journal_is_not_the_npus(tmp_path: Path) -> None:
    path = tmp_path / "journal.log"
    journal(
        path,
        ["kernel: [drm] Initialized amdxdna_accel_driver 0.6.0 for 0000:c5:00.1 on minor 0"],
        2000,
    )
    verdict = scan_file(path, journal_min_bytes=1)
    assert (verdict.status, verdict.evidence) == (
        HEALTHY,
        "amdxdna 0.6.0 probed 0000:c5:00.1 (minor 0)",
    )
    # the same lines pasted as a small log are read one by one: the failing unit counts
    assert scan_file(path).status == "unknown failure"


def test_a_kernel_report_in_a_journal_is_found_by_its_frames(tmp_path: Path) -> None:
    path = tmp_path / "journal.log"
    journal(path, kernel_lines("c046"), ordinary=2000)
    verdict = scan_file(path, journal_min_bytes=1)
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].code == "kernel-warning"


def test_the_shims_ioctl_failure_in_a_journal_is_found(tmp_path: Path) -> None:
    # FastFlowLM as a service logs to the journal; the shim's ioctl names say XDNA, not xdna
    # (c010: https://github.com/hpenedones/fastflowlm-docker/issues/5)
    case = next(c for c in load_corpus(CORPUS) if c.ident == "c010")
    failed = next(line for line in case.text.splitlines() if "DRM_IOCTL_AMDXDNA" in line)
    path = tmp_path / "journal.log"
    journal(path, [f"flm[4242]: {failed}"], ordinary=2000)
    verdict = scan_file(path, journal_min_bytes=1)
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].family == "hwctx"
    assert "EINVAL" in verdict.diagnoses[0].errno


def test_a_small_or_unprefixed_file_is_read_line_by_line(tmp_path: Path) -> None:
    pasted = tmp_path / "pasted.log"
    pasted.write_text(next(CORPUS.glob("c015-*")).read_text().split("\n---\n", 1)[1] * 2000)
    assert not is_journal(pasted, min_bytes=1)  # a build log: no journal prefixes
    assert scan_file(pasted, journal_min_bytes=1).diagnoses[0].code == "build-missing-header"


def _shown(verdict: Verdict) -> list[tuple[str, str, str, str]]:
    # the evidence without its journal stamp, which differs with the line's place
    return [(d.code, d.severity, message_of(d.evidence), d.errno) for d in verdict.diagnoses]


def test_npu_lines_spread_among_noise_give_the_findings_of_the_npu_lines_alone(
    tmp_path: Path,
) -> None:
    # every corpus log as kernel lines of a journal: among 300 ordinary lines (a failing unit
    # among them), and alone; small blocks put lines and anchors across block ends
    noisy, alone = tmp_path / "noisy.log", tmp_path / "alone.log"
    failing = 0
    for seed, case in enumerate(load_corpus(CORPUS)):
        npu = kernel_lines(case.ident)
        lines = journal(noisy, npu, ordinary=300, seed=seed)
        journal(alone, npu, ordinary=0, seed=seed)
        among_noise = scan_file(noisy, journal_min_bytes=1, block_size=701)
        by_itself = scan_file(alone, journal_min_bytes=1)
        assert among_noise.status == by_itself.status, case.ident
        assert _shown(among_noise) == _shown(by_itself), case.ident
        assert among_noise.evidence == by_itself.evidence, case.ident
        assert [u.source for u in among_noise.unexplained] == [
            u.source for u in by_itself.unexplained
        ]
        # the same verdict as the anchored lines read one by one, with the file's line numbers
        anchored = [
            (n, line)
            for n, line in enumerate(lines)
            if any(a.decode() in line for a in JOURNAL_ANCHORS)
        ]
        one_by_one = _scan(anchored)
        assert _shown(among_noise) == _shown(one_by_one), case.ident
        assert [d.line for d in among_noise.diagnoses] == [d.line for d in one_by_one.diagnoses]
        for diagnosis in among_noise.diagnoses:
            if diagnosis.line:
                assert lines[diagnosis.line - 1].endswith(diagnosis.evidence), case.ident
        failing += among_noise.failing
    assert failing >= 15  # the corpus' kernel logs keep their failures among the noise


def test_an_anchor_byte_that_turns_common_does_not_hide_a_line(tmp_path: Path) -> None:
    # the first block has no "P" or "+", so they are searched through memchr; later blocks
    # are full of them (hex dumps, "PCI", "+"), which switches those blocks to the regex
    path = tmp_path / "journal.log"
    quiet = [f"kernel: usb 1-{n}: new device" for n in range(3000)]
    busy = [f"kernel: PCI PPPP +{n:x} P+P+P+ 0x{n:x}" for n in range(3000)]
    npu = kernel_lines("c046") + kernel_lines("c036")
    body = quiet + busy[:1500] + npu + busy[1500:]
    stamped = [f"Nov 30 10:00:{i % 60:02} npuhost {line}" for i, line in enumerate(body)]
    path.write_text("\n".join(stamped) + "\n")
    expected = [
        (n, line)
        for n, line in enumerate(stamped)
        if any(a.decode() in line for a in JOURNAL_ANCHORS)
    ]
    assert list(journal_lines(path, block_size=64 * 1024)) == expected
    verdict = scan_file(path, journal_min_bytes=1, block_size=64 * 1024)
    assert _shown(verdict) == _shown(_scan(expected))
    assert [d.line for d in verdict.diagnoses] == [d.line for d in _scan(expected).diagnoses]


def test_a_line_longer_than_a_block_is_searched_a_block_at_a_time(tmp_path: Path) -> None:
    # a hostile file: journal lines, then 200 KB without a line end around an NPU message;
    # it is searched in pieces of a block, never gathered whole
    path = tmp_path / "journal.log"
    lines = journal(path, [], ordinary=200)
    message = "kernel: amdxdna 0000:c5:00.1: aie2_init: Enable PASID failed, ret -95"
    with path.open("a") as out:
        out.write("Nov 30 11:00:00 npuhost " + "z" * 100_000 + message + "z" * 100_000)
    found = list(journal_lines(path, block_size=4096))
    assert [number for number, _ in found] == [len(lines)] * len(found)
    assert any(message in text for _, text in found)
    assert max(len(text) for _, text in found) <= 2 * 4096


def test_leaving_a_journal_early_stops_its_reading_thread(tmp_path: Path) -> None:
    path = tmp_path / "journal.log"
    journal(path, kernel_lines("c036") * 20, ordinary=3000)
    before = threading.active_count()
    lines = journal_lines(path, block_size=4096)
    next(lines)
    assert threading.active_count() == before + 1  # the next block is being read
    lines.close()
    assert threading.active_count() == before


# a Windows validate run as PowerShell 5's `>` writes it (UTF-16LE with its mark)
WINDOWS_RUN = (
    "[XRT] ERROR: Failed to submit the command to the hw queue (0xc01e0200):\r\n"
    "could not page-in all of the required allocations into video memory at the same time.\r\n"
)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-8-sig"])
def test_a_log_file_is_read_in_the_encoding_windows_wrote_it(tmp_path: Path, encoding: str) -> None:
    log = tmp_path / "out.txt"
    log.write_bytes(WINDOWS_RUN.encode(encoding))
    assert scan_file(log).diagnoses[0].code == "windows-video-memory"


def test_utf16_text_pasted_byte_by_byte_is_read_as_it_was_written() -> None:
    spaced = " ".join("[XRT] ERROR: Failed to submit the command to the hw queue (0xc01e0200):")
    text = spaced + "\ncould not page-in all of the required allocations into video memory\n"
    assert judge(text).diagnoses[0].code == "windows-video-memory"
    # a ruler of spaced dashes is left as it is, and so is a model repeating one letter
    assert judge("- - - - - - - - - - - - - -\n").diagnoses == ()
    assert [d.code for d in judge("a " * 20 + "\n").diagnoses] == ["degenerate-output"]


def test_a_hostile_line_is_read_to_its_first_characters_only() -> None:
    # no regex sees more than _LINE_LIMIT characters of a line (bounded time per line,
    # whatever its content; bench_doctor.py prints the rate on such lines)
    message = "amdxdna 0000:c5:00.1: aie2_init: Enable PASID failed, ret -95"
    assert judge(message + " " + "é" * 100_000 + "\n").status == FAILURE
    hidden = "é" * (_LINE_LIMIT + 10) + message + "\n"
    assert judge(hidden).status != FAILURE
    assert judge("1" * 100_000 + "\n").status == "unknown"


def test_the_windows_npu_drivers_failed_call_is_the_npu_stacks_line() -> None:
    # XRT's Windows shim: what it asked the driver and the NTSTATUS, no word of the NPU
    created = '"Failed to create context virtual (0xc01e0009): There was an error while creating'
    assert judge(created + ' context"\n').diagnoses[0].family == "hwctx"
    # the same words without an NTSTATUS (a warning code, or none) name nothing
    assert judge("Failed to create context virtual (0x00000103): pending\n").diagnoses == ()
