"""`doit fleet-report` over three hosts' records (one passing, one known-broken cell that
fails as expected, one supported cell failing), in Markdown, JSON and HTML; the page is
rendered by a real headless Chromium and its DOM and screenshot are checked."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import require_tool
from tests.integration.browser import Element, rendered
from tests.integration.conftest import run_doit

FLEET = Path(__file__).resolve().parent.parent / "fixtures" / "fleet"
HOSTS = ("strix-lab-1", "strix-lab-2", "halo-lab-1")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# the page's background colours for a pass, an expected failure and news (the CSS)
PASS_RGB, EXPECTED_RGB, NEWS_RGB = (0xD9, 0xF2, 0xD9), (0xFF, 0xF1, 0xC2), (0xF8, 0xC9, 0xC9)


@pytest.fixture
def report(project_dir: Path) -> Path:
    args = [part for host in HOSTS for part in ("--from", str(FLEET / host))]
    outcome = run_doit(project_dir, "fleet-report", *args)
    # one cell is NEWS: the report is written and the command exits 1, as `doit matrix` does
    assert outcome.rc == 1, outcome.output
    assert (
        "1 cell(s) on their hosts did not behave as the matrix expects: zimaos17-npu5 on "
        "halo-lab-1" in outcome.output
    )
    return project_dir / "artifacts/fleet-report"


def test_markdown_and_json_show_each_host_correctly(report: Path) -> None:
    markdown = (report / "FLEET_REPORT.md").read_text()
    rows = {line.split(" |")[0].lstrip("| "): line for line in markdown.splitlines()}
    assert (
        "**PASS** as expected: every gate passed; kernel 7.0.0-27-generic; fw 1.1.2.64"
        in (rows["ubuntu26-npu4 (`ubuntu26-compat`)"])
    )
    # the known-broken cell fails where and how the matrix says: not news
    assert (
        "**FAIL** as expected: gate validate fails with exec-cmd-cmd-bo-limit"
        in rows["ubuntu26-npu4-upstream-main (`upstream-main`)"]
    )
    # the partial cell's examine and pyxrt should pass; the device gate failing is news
    assert (
        "**FAIL** NEWS: fails differently: gate examine did not pass (device fails with "
        "fw-protocol-mismatch)" in rows["zimaos17-npu5 (`xdna-2.21.75`)"]
    )
    assert "kernel 6.18.9; fw 1.1.2.65" in rows["zimaos17-npu5 (`xdna-2.21.75`)"]
    assert "- gemm_tops: 50.6 TOPS (baseline 51.0, -0.8%): ok" in markdown
    assert "- kernel 7.0.0-28-generic: revalidate, not run" in markdown
    assert "[fw-protocol-mismatch] firmware protocol not accepted by the driver" in markdown
    data = json.loads((report / "FLEET_REPORT.json").read_text())
    assert data["kind"] == "fleet-report"
    entries = {(e["cell"], e["host"]): e for e in data["entries"]}
    assert set(entries) == {
        ("ubuntu26-npu4", "strix-lab-1"),
        ("ubuntu26-npu4-upstream-main", "strix-lab-2"),
        ("zimaos17-npu5", "halo-lab-1"),
    }
    assert [entries[k]["news"] for k in sorted(entries)] == [False, False, True]
    broken = entries[("ubuntu26-npu4-upstream-main", "strix-lab-2")]
    assert broken["diagnosis"]["code"] == "exec-cmd-cmd-bo-limit"
    assert broken["failed_gates"] == ["validate"]
    figures = {
        f["name"]: f["change_pct"] for f in entries[("ubuntu26-npu4", "strix-lab-1")]["figures"]
    }
    assert figures == {"gemm_tops": -0.8, "latency_us": 0.7, "throughput_ops": -0.5}


def test_no_directories_is_a_usage_message(project_dir: Path) -> None:
    outcome = run_doit(project_dir, "fleet-report")
    assert outcome.rc == 3
    assert "doit fleet-report --from DIR" in outcome.output


class Cells(HTMLParser):
    """td.entry elements of the page: (cell, host) -> (state, text)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[tuple[str, str], list[str]] = {}
        self.current: tuple[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "td" and values.get("data-cell"):
            self.current = (str(values["data-cell"]), str(values["data-host"]))
            self.found[self.current] = [str(values.get("data-state")), ""]

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self.current = None

    def handle_data(self, data: str) -> None:
        if self.current:
            self.found[self.current][1] += data


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def png_rgb(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB rows of an 8-bit RGB/RGBA PNG (what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, idat, header = 8, b"", b""
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        chunk = data[offset + 8 : offset + 8 + length]
        header = chunk if kind == b"IHDR" else header
        idat += chunk if kind == b"IDAT" else b""
        offset += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8
    assert colour in (2, 6)
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - corner
                near = min(
                    (abs(estimate - left), 0, left),
                    (abs(estimate - up), 1, up),
                    (abs(estimate - corner), 2, corner),
                )[2]
                line[i] = (line[i] + near) & 0xFF
        rows.append(bytes(b for x in range(width) for b in line[x * channels : x * channels + 3]))
        previous = line
    return width, height, rows


def test_the_page_in_a_real_browser(report: Path, tmp_path: Path) -> None:
    if CHROMIUM is None:  # Debian's chromium, or Ubuntu's chromium-browser
        require_tool("chromium")
    page = (report / "index.html").as_uri()
    dom = chromium(tmp_path, "--dump-dom", page).stdout
    assert "<script" not in dom
    parser = Cells()
    parser.feed(dom)
    assert {key: state for key, (state, _) in parser.found.items()} == {
        ("ubuntu26-npu4", "strix-lab-1"): "pass",
        ("ubuntu26-npu4-upstream-main", "strix-lab-2"): "expected-fail",
        ("zimaos17-npu5", "halo-lab-1"): "news",
    }
    assert "device: fw-protocol-mismatch" in parser.found[("zimaos17-npu5", "halo-lab-1")][1]
    shot = tmp_path / "fleet.png"
    chromium(tmp_path, "--window-size=1400,800", f"--screenshot={shot}", page)
    width, height, rows = png_rgb(shot)
    assert (width, height) == (1400, 800)
    # each verdict's colour covers a table cell's worth of pixels: the styles really applied
    for colour in (PASS_RGB, EXPECTED_RGB, NEWS_RGB):
        needle = bytes(colour)
        count = sum(row.count(needle) for row in rows[::4])
        assert count > 2000, f"colour {colour} barely on the page ({count} samples)"


def test_the_page_draws_each_host_s_benchmark_history_in_a_real_browser(
    report: Path, tmp_path: Path
) -> None:
    page = rendered(report / "index.html", tmp_path / "profile")
    (figure,) = [
        e
        for e in page
        if e.tag == "figure"
        and e.attrs.get("data-cell") == "ubuntu26-npu4"
        and e.attrs.get("data-host") == "strix-lab-1"
    ]
    left, top, width, height = figure.box
    assert width > 300  # drawn, not an empty element
    assert height > 300

    def inside(kind: str, name: str) -> list[Element]:
        return [
            e
            for e in page
            if e.has_class(kind)
            and e.attrs.get("data-figure") == name
            and top <= e.centre_y <= top + height
            and left <= e.box[0] <= left + width
        ]

    # strix-lab-1's two runs: 51.0 then 50.6 TOPS; the recipe's baseline 51.0, minimum 45.0
    first, second = inside("run", "gemm_tops")
    assert first.box[0] < second.box[0]
    assert first.centre_y < second.centre_y  # the later, slower run is drawn lower
    (baseline,) = inside("baseline", "gemm_tops")
    (minimum,) = inside("threshold", "gemm_tops")
    assert abs(baseline.centre_y - first.centre_y) <= 2
    assert minimum.centre_y > second.centre_y
    assert "threshold 45 (min)" in minimum.text
