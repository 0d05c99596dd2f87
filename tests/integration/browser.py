"""A page as headless Chromium renders it: each element's box on the screen and its computed
background colour, measured by a script Chromium runs after layout (`--dump-dom` then shows
the DOM as it is after scripts ran), so tests assert on what a reader sees."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from tests.conftest import require_tool

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# every element the tests look at gets its rendered box and background as attributes
MEASURE = """<script>
for (const el of document.querySelectorAll("svg *, table *, figure, a")) {
  const r = el.getBoundingClientRect();
  el.setAttribute("data-box", [r.left, r.top, r.width, r.height].map(Math.round).join(" "));
  el.setAttribute("data-bg", getComputedStyle(el).backgroundColor);
  el.setAttribute("data-color", getComputedStyle(el).color);
}
document.body.setAttribute("data-measured", "yes");
</script>"""


@dataclass(frozen=True)
class Element:
    tag: str
    attrs: dict[str, str]
    text: str

    @property
    def box(self) -> tuple[int, int, int, int]:
        left, top, width, height = (int(v) for v in self.attrs["data-box"].split())
        return left, top, width, height

    @property
    def centre_y(self) -> float:
        _, top, _, height = self.box
        return top + height / 2

    def has_class(self, name: str) -> bool:
        return name in self.attrs.get("class", "").split()


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[Element] = []
        self.open: list[tuple[str, dict[str, str], list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.open.append((tag, values, []))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append(Element(tag, {k: v or "" for k, v in attrs}, ""))

    def handle_data(self, data: str) -> None:
        for _, _, text in self.open:
            text.append(data)

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            name, attrs, text = self.open.pop()
            self.found.append(Element(name, attrs, "".join(text)))
            if name == tag:
                break


def chromium(profile: Path, *args: str) -> str:
    if CHROMIUM is None:  # Debian's chromium, or Ubuntu's chromium-browser
        require_tool("chromium")
    assert CHROMIUM is not None
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--window-size=1400,2400",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def rendered(page: Path, profile: Path) -> list[Element]:
    """The page's elements as Chromium laid them out (a measured copy beside the page, so
    its relative links stay what they are)."""
    html = page.read_text()
    assert "<script" not in html, "the page itself runs no script"
    measured = page.with_name(f".measured-{page.name}")
    measured.write_text(html.replace("</body>", MEASURE + "</body>"))
    try:
        dom = chromium(profile, "--dump-dom", measured.as_uri())
    finally:
        measured.unlink()
    assert 'data-measured="yes"' in dom, "Chromium did not run the measurement"
    collect = _Collect()
    collect.feed(dom)
    return collect.found
