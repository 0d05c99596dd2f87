"""doit matrix judges each cell against where and how it is expected to fail: as expected,
fails differently, passes unexpectedly, not judged here; in the table and in the report."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.fakes.fixture import FakeTools
from tests.integration.browser import Element, rendered
from tests.integration.conftest import DEPENDS, Outcome, installed_here, run_doit
from tests.integration.npu import npu_host, replay
from tests.integration.upstream import Upstream, write_recipe

HOST = (
    '      distro: {id: ubuntu, version: "26.04"}\n'
    '      kernel: "KERNEL"\n'
    '      npu: {pci: "1022:17f0", revision: "0x10"}\n'
)


def cell(name: str, recipe: str, fails: str, kernel: str = ">=7.0, <7.1") -> str:
    return (
        f"  - name: {name}\n    recipe: {recipe}\n    expect: known-broken\n"
        f"    reason: test\n    evidence: test\n    fails: {fails}\n"
        f"    host:\n{HOST.replace('KERNEL', kernel)}"
    )


def matrix(project: Path, fakes: FakeTools, cells: Path) -> Outcome:
    env = {**fakes.env, "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS"}
    return run_doit(project, "matrix", f"--matrix={cells}", env=env)


def test_four_verdicts_in_the_table_and_the_report(
    project_dir: Path, upstream: Upstream, fake_tools: FakeTools, tmp_path: Path
) -> None:
    # synthetic: runs xrt-smi validate, which fails with EXEC_CMD EINVAL on this host;
    # examined: stops at examine, which passes; unreachable: its source cannot be fetched
    every_gate = "gates: [host, memlock, device, runtime, examine, validate]"
    for name, url, gates in (
        ("examined", None, "gates: [host, examine]"),
        ("synthetic", None, every_gate),
        ("unreachable", (tmp_path / "gone").as_uri(), every_gate),
    ):
        recipe = write_recipe(project_dir, upstream, name=name, url=url)
        recipe.write_text(recipe.read_text().replace("gates: [host]", gates))
    # synthetic's shim creates 64 KiB command buffers; the running driver (0.7.0) caps 32 KiB
    synthetic = project_dir / "recipes/synthetic.yaml"
    synthetic.write_text(
        synthetic.read_text().replace(
            "  driver: amdxdna (in-tree)\n",
            '  driver: amdxdna (in-tree)\n  drm_version: "0.7.0"\n  cmd_bo_max_bytes: 65536\n',
        )
    )
    root = npu_host(project_dir / "sysroot")
    (root / "var/log").mkdir(parents=True)
    (root / "var/log/kern.log").write_text(
        "[drm] Initialized amdxdna_accel_driver 0.7.0 for 0000:c5:00.1 on minor 0\n"
    )
    blob = root / "lib/firmware/amdnpu/17f0_10/npu_7.sbin"
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"\0header\0Release 1.1.2.64\0rest")
    replay(fake_tools, "healthy-npu4", "exec-cmd-einval")
    (fake_tools.scenario / "xrt-smi/validate.json").unlink()  # validate stops before writing it
    fake_tools.installed(
        {**DEPENDS, "xrt-base": "2.20.0", "xrt-npu": "2.20.0", "xrt_plugin-amdxdna": "2.20.1"}
    )
    for target in ("synthetic", "examined"):
        installed_here(project_dir, target)
    at_validate = "{stage: validate, gate: validate, codes: [CODE]}"
    cells = tmp_path / "m.yaml"
    cells.write_text(
        "schema: 1\ncells:\n"
        + cell("at-fetch", "unreachable", at_validate.replace("CODE", "exec-cmd-cmd-bo-limit"))
        + cell("known-code", "synthetic", at_validate.replace("CODE", "exec-cmd-cmd-bo-limit"))
        + cell("other-code", "synthetic", at_validate.replace("CODE", "hwctx-not-ready"))
        + cell("passes", "examined", "{stage: validate, gate: examine, codes: [no-devices-found]}")
        + cell(
            "elsewhere",
            "synthetic",
            at_validate.replace("CODE", "exec-cmd-cmd-bo-limit"),
            kernel=">=6.18, <6.19",
        )
    )
    outcome = matrix(project_dir, fake_tools, cells)
    assert outcome.rc == 1, outcome.output
    names = ("at-fetch", "known-code", "other-code", "passes", "elsewhere")
    rows = {
        line.split()[0]: line
        for line in outcome.stdout.splitlines()
        if line.split() and line.split()[0] in names
    }
    assert "failed at fetch" in rows["at-fetch"]
    # its sources could not be fetched: never tried, so never news
    assert "not attempted (sources): fetch failed: " in rows["at-fetch"]
    assert "NEWS" not in rows["at-fetch"]
    assert "as expected: gate validate fails with exec-cmd-cmd-bo-limit" in rows["known-code"]
    assert "NEWS" not in rows["known-code"]
    assert (
        "NEWS: fails differently: gate validate fails with exec-cmd-cmd-bo-limit; "
        "expected hwctx-not-ready" in rows["other-code"]
    )
    assert (
        "NEWS: passes unexpectedly: gate examine passed; expected known-broken: gate examine "
        "fails with no-devices-found" in rows["passes"]
    )
    assert "not judged here: built and audited; this host is not in the cell" in rows["elsewhere"]
    # the compat resolver's word on the cells this host is in, from the running driver
    assert " NO " in rows["known-code"]
    assert " - " in rows["elsewhere"]  # not judged: the host is not in that cell
    assert (
        "cell known-code: synthetic does not fit here: creates command BOs of 65536 bytes, "
        "in-tree-0.7 rejects those over 32768" in outcome.stdout
    )
    assert (
        "compat (this host): firmware loads amdnpu/17f0_10/npu_7.sbin (1.1.2.64, protocol 7.2); "
        "accepted: yes" in outcome.stdout
    )
    assert "NEWS" not in rows["elsewhere"]
    assert "2 cell(s) did not behave as the matrix expects: other-code, passes" in outcome.output
    assert "1 cell(s) not attempted, their sources could not be fetched: at-fetch" in outcome.output
    assert "`doit plan --target unreachable` lists every repository" in outcome.output
    # the same verdicts in each target's record and report
    record = json.loads((project_dir / "artifacts/synthetic/matrix.json").read_text())
    assert [(c["cell"], c["verdict"], c["news"], c["compat"]["fits"]) for c in record["cells"]] == [
        ("known-code", "as expected", False, "NO"),
        ("other-code", "fails differently", True, "NO"),
        ("elsewhere", "not judged here", False, ""),
    ]
    report = (project_dir / "artifacts/synthetic/BUILD_REPORT.md").read_text()
    assert "| known-code | known-broken: gate validate fails with exec-cmd-cmd-bo-limit |" in report
    assert "| as expected: gate validate fails with exec-cmd-cmd-bo-limit |" in report
    assert "**NEWS: fails differently**: gate validate fails with exec-cmd-cmd-bo-limit;" in report
    assert "| not judged here: built and audited; this host is not in the cell |" in report
    # the compat verdict of the host the report was made on
    assert "Compatibility on the host this report was made on (ubuntu 26.04" in report
    assert "- driver: amdxdna, DRM version 0.7.0 (in-tree-0.7)" in report
    assert (
        "- firmware: loads amdnpu/17f0_10/npu_7.sbin (1.1.2.64, protocol 7.2); accepted: yes"
        in report
    )
    assert "- this recipe fits: NO (creates command BOs of 65536 bytes" in report
    fetch_report = (project_dir / "artifacts/unreachable/BUILD_REPORT.md").read_text()
    assert "| at-fetch |" in fetch_report
    assert "not attempted (sources)" in fetch_report
    assert "NEWS" not in fetch_report.split("| at-fetch |")[1].splitlines()[0]
    passes_report = (project_dir / "artifacts/examined/BUILD_REPORT.md").read_text()
    assert "**NEWS: passes unexpectedly**: gate examine passed" in passes_report


def test_the_matrix_page_is_a_grid_coloured_by_verdict_linked_to_each_report(
    project_dir: Path, upstream: Upstream, fake_tools: FakeTools, tmp_path: Path
) -> None:
    write_recipe(project_dir, upstream)
    write_recipe(project_dir, upstream, name="unreachable", url=(tmp_path / "gone").as_uri())
    npu_host(project_dir / "sysroot")
    replay(fake_tools, "healthy-npu4")
    fake_tools.installed(DEPENDS)
    cells = tmp_path / "m.yaml"
    at_validate = "{stage: validate, gate: host, codes: [exec-cmd-cmd-bo-limit]}"
    at_audit = "{stage: audit, codes: []}"
    cells.write_text(
        "schema: 1\ncells:\n"
        + cell("fine", "synthetic", at_validate, kernel=">=6.18, <6.19")
        + cell("said-broken", "synthetic", at_audit)
        + cell("stale-mirror", "unreachable", at_validate)
    )
    outcome = matrix(project_dir, fake_tools, cells)
    assert outcome.rc == 1, outcome.output  # said-broken passes its audit: news
    # two cells share synthetic: it is built once, and each build says which and how long
    assert outcome.stdout.count("== [matrix 1/2] synthetic (cell fine)") == 1
    assert outcome.stdout.count("build-xrt synthetic: ") == 1
    assert re.search(r"== \[matrix 1/2 \d\d:\d\d\] synthetic: built", outcome.stdout)
    assert re.search(r"== \[matrix 2/2 \d\d:\d\d\] unreachable: failed at fetch", outcome.stdout)
    page = rendered(project_dir / "artifacts/MATRIX.html", tmp_path / "profile")
    rows = {e.attrs["data-cell"]: e for e in page if e.tag == "tr" and "data-cell" in e.attrs}
    assert list(rows) == ["fine", "said-broken", "stale-mirror"]

    def square(row: str, stage: str) -> Element:
        top, height = rows[row].box[1], rows[row].box[3]
        found = [
            e
            for e in page
            if e.tag == "td"
            and e.attrs.get("data-stage") == stage
            and top <= e.centre_y <= top + height
        ]
        assert len(found) == 1, (row, stage)
        return found[0]

    green, red, blue, grey = (
        "rgb(217, 242, 217)",
        "rgb(248, 201, 201)",
        "rgb(201, 211, 224)",
        "rgb(244, 244, 244)",
    )
    # the stale mirror: its sources failed, nothing after was reached, and it is no news
    assert square("stale-mirror", "sources").attrs["data-bg"] == red
    assert square("stale-mirror", "build").attrs["data-bg"] == grey
    assert square("stale-mirror", "verdict").attrs["data-bg"] == blue
    assert "not attempted (sources)" in square("stale-mirror", "verdict").text
    # news is the loudest square of the page: white on red
    news = square("said-broken", "verdict")
    assert news.attrs["data-bg"] == "rgb(224, 93, 93)"
    assert news.attrs["data-color"] == "rgb(255, 255, 255)"
    assert square("fine", "build").attrs["data-bg"] == green
    assert square("fine", "audit").attrs["data-bg"] == green
    # every cell's name links to its target's report, which exists
    links = [e for e in page if e.tag == "a"]
    assert [a.attrs["href"] for a in links] == [
        "synthetic/BUILD_REPORT.html",
        "synthetic/BUILD_REPORT.html",
        "unreachable/BUILD_REPORT.html",
    ]
    for a in links:
        assert (project_dir / "artifacts" / a.attrs["href"]).is_file()
        assert a.box[2] > 0
