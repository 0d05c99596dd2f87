"""doit audit on real .deb files built with dpkg-deb."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_tool
from tests.debs import (
    ar_archive,
    build_deb,
    deb_bytes,
    dkms_source,
    firmware,
    kernel_image,
    plugin,
    tar_bytes,
    xrt_base,
    xrt_npu,
)
from tests.fakes.fixture import FakeTools
from tests.integration.conftest import build, run_doit
from tests.integration.upstream import make_upstream, write_recipe
from xdnaforge.debs import xzblocks
from xdnaforge.debs.debfile import DebError, read_deb
from xdnaforge.debs.rules import audit, wants_text


@pytest.mark.parametrize("compression", ["gzip", "xz", "zstd", "none"])
def test_dpkg_deb_output_in_every_compression(tmp_path: Path, compression: str) -> None:
    deb = build_deb(tmp_path, plugin(nokmod=False), compression)
    contents = read_deb(deb, wants_text)
    expected = {"gzip": "gz", "xz": "xz", "zstd": "zst", "none": "none"}[compression]
    assert contents.compression["data"] == expected
    assert audit(contents).verdict == "block"
    assert audit(read_deb(build_deb(tmp_path, plugin(), compression), wants_text)).verdict == (
        "pass"
    )


@pytest.mark.tools("xz", "dpkg-deb")
def test_a_data_member_from_multi_threaded_xz_is_read_block_by_block(tmp_path: Path) -> None:
    # what dpkg-deb and `xz -T` write: several blocks whose headers carry their sizes
    spec = plugin(nokmod=False)
    spec.files["opt/xilinx/xrt/lib/libbig.so"] = random.Random(1).randbytes(200_000) * 2
    tar = tar_bytes({f"./{path}": content for path, content in spec.files.items()})
    packed = subprocess.run(
        ["xz", "-T2", "--block-size=65536", "-c"], input=tar, capture_output=True, check=True
    ).stdout
    assert len(list(xzblocks.decode(io.BytesIO(packed).read))) > 4
    deb = tmp_path / "plugin.deb"
    deb.write_bytes(
        ar_archive(
            [
                ("debian-binary", b"2.0\n"),
                ("control.tar.gz", tar_bytes({"./control": spec.control()}, ".gz")),
                ("data.tar.xz", packed),
            ]
        )
    )
    listed = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, check=True)
    contents = read_deb(deb, wants_text)
    assert len(contents.entries) == len(listed.stdout.splitlines())
    assert {e.path for e in contents.entries} >= set(spec.files)
    assert audit(contents).verdict == "block"
    deb.write_bytes(deb.read_bytes()[:-20_000])
    with pytest.raises(DebError, match="truncated"):
        read_deb(deb, wants_text)


def test_audit_debs_passes_clean_and_blocks_payloads(project_dir: Path, tmp_path: Path) -> None:
    clean = [build_deb(tmp_path, spec()) for spec in (xrt_base, xrt_npu, plugin)]
    outcome = run_doit(project_dir, "audit", *[f"--deb={d}" for d in clean])
    assert outcome.rc == 0, outcome.output
    assert "audit: 3 package(s), no kernel payload: PASS" in outcome.stdout

    bad = [build_deb(tmp_path, spec()) for spec in (dkms_source, firmware, kernel_image)]
    report = tmp_path / "audit.json"
    outcome = run_doit(
        project_dir, "audit", *[f"--deb={d}" for d in [*clean, *bad]], f"--json={report}"
    )
    assert outcome.rc == 1
    assert "Traceback" not in outcome.output
    assert (
        "kernel payload found in amdxdna-dkms, amdnpu-firmware, linux-image-7.0.0-27-generic"
        in (outcome.output)
    )
    data = json.loads(report.read_text())
    assert data["verdict"] == "block"
    verdicts = {p["package"]: p["verdict"] for p in data["packages"]}
    assert verdicts == {
        "xrt-base": "pass",
        "xrt-npu": "pass",
        "xrt_plugin-amdxdna": "pass",
        "amdxdna-dkms": "block",
        "amdnpu-firmware": "block",
        "linux-image-7.0.0-27-generic": "block",
    }
    assert data["packages"][0]["sha256"] == hashlib.sha256(clean[0].read_bytes()).hexdigest()


def test_broken_files_fail_with_a_one_line_reason(project_dir: Path, tmp_path: Path) -> None:
    good = build_deb(tmp_path, xrt_base())
    truncated = tmp_path / "truncated.deb"
    truncated.write_bytes(good.read_bytes()[:-100])
    text = tmp_path / "notes.txt"
    text.write_text("not a package\n")
    outcome = run_doit(
        project_dir,
        "audit",
        f"--deb={truncated}",
        f"--deb={text}",
        f"--deb={tmp_path / 'absent.deb'}",
    )
    assert outcome.rc == 1
    assert "Traceback" not in outcome.output
    assert f"ERROR {truncated}: truncated: member data.tar.xz ends after" in outcome.stdout
    assert f"ERROR {text}: not a .deb (no ar archive signature)" in outcome.stdout
    assert f"ERROR {tmp_path / 'absent.deb'}: cannot read: No such file or directory" in (
        outcome.stdout
    )


def test_audit_needs_files_or_a_target_but_not_both(project_dir: Path, tmp_path: Path) -> None:
    deb = build_deb(tmp_path, xrt_base())
    outcome = run_doit(project_dir, "audit", "--target", "ubuntu26-compat", f"--deb={deb}")
    assert outcome.rc == 3  # a usage error, before anything is read
    assert "give either --deb files or --target, not both" in outcome.output


def _packages_record(project: Path, target: str, debs: list[Path]) -> None:
    records = project / "artifacts" / target
    (records / "debs").mkdir(parents=True, exist_ok=True)
    entries = []
    for deb in debs:
        placed = records / "debs" / deb.name
        placed.write_bytes(deb.read_bytes())
        contents = read_deb(deb)
        entries.append(
            {
                "file": f"debs/{deb.name}",
                "package": contents.package,
                "version": contents.control.get("Version", ""),
                "architecture": contents.control.get("Architecture", ""),
                "size": contents.size,
                "sha256": hashlib.sha256(deb.read_bytes()).hexdigest(),
            }
        )
    (records / "packages.json").write_text(
        json.dumps({"schema": 1, "kind": "packages", "xdnaforge": "0.1.0", "packages": entries})
    )


def test_audit_target_writes_the_record_with_waivers(project_dir: Path, tmp_path: Path) -> None:
    upstream = make_upstream(tmp_path / "upstream")
    recipe = write_recipe(project_dir, upstream)
    recipe.write_text(
        recipe.read_text().replace(
            "install:",
            "audit:\n  admit:\n    - path: usr/src/xrt-*/driver/include/version.h\n"
            "      package: xrt-base\n      reason: XRT 2.19's leftover header\n"
            "  waivers:\n    - rule: SRC-001\n      package: xrt-base\n"
            "      justification: XRT's lone version.h, not a module tree\ninstall:",
        )
    )
    specs = (xrt_base(leftover=True), xrt_npu(), plugin())
    _packages_record(project_dir, "synthetic", [build_deb(tmp_path, s) for s in specs])
    outcome = run_doit(project_dir, "audit", "--target", "synthetic")
    assert outcome.rc == 0, outcome.output
    record = json.loads((project_dir / "artifacts/synthetic/audit.json").read_text())
    assert record["verdict"] == "pass"
    assert record["packages"][0]["file"].startswith("debs/")
    assert record["waivers"][0]["rule"] == "SRC-001"
    assert record["admitted"] == [
        {
            "path": "usr/src/xrt-*/driver/include/version.h",
            "package": "xrt-base",
            "reason": "XRT 2.19's leftover header",
        }
    ]
    findings = record["packages"][0]["findings"]
    assert findings[0]["severity"] == "waived"
    # the audit refreshed the report
    assert "## Audit: pass" in (project_dir / "artifacts/synthetic/BUILD_REPORT.md").read_text()
    assert "audit" in record["fingerprints"]


def test_audit_target_refuses_a_package_changed_after_packaging(
    project_dir: Path, tmp_path: Path
) -> None:
    upstream = make_upstream(tmp_path / "upstream")
    write_recipe(project_dir, upstream)
    base = build_deb(tmp_path, xrt_base())
    _packages_record(project_dir, "synthetic", [base])
    swapped = project_dir / "artifacts/synthetic/debs" / base.name
    other = tmp_path / "other"
    other.mkdir()
    swapped.write_bytes(build_deb(other, plugin(nokmod=False)).read_bytes())
    outcome = run_doit(project_dir, "audit", "--target", "synthetic")
    assert outcome.rc == 1
    assert "differs from" in outcome.output
    assert "(changed after packaging)" in outcome.output
    record = json.loads((project_dir / "artifacts/synthetic/audit.json").read_text())
    assert record["verdict"] == "error"
    assert record["fingerprints"] == {}


def test_audit_target_without_packages_says_what_to_run(project_dir: Path) -> None:
    outcome = run_doit(project_dir, "audit", "--target", "ubuntu26-compat")
    assert outcome.rc == 1
    assert "no packages.json for ubuntu26-compat" in outcome.output
    assert "doit build --target ubuntu26-compat" in outcome.output


def test_a_package_that_names_the_build_tree_is_a_warning_in_audit_json(
    setup: Path, fake_tools: FakeTools
) -> None:
    # the canonical path is a bubblewrap bind: without it the tree is not bound (build.json says so)
    require_tool("bwrap")
    fetched = build(setup, fake_tools, "fetch", "--target", "synthetic")
    assert fetched.rc == 0, fetched.output
    (setup / "build/synthetic/src/xrt/HOST_PATHS").write_text("")
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output  # a warning does not stop the build
    record = json.loads((setup / "artifacts/synthetic/audit.json").read_text())
    assert record["verdict"] == "pass"
    warned = {
        (p["package"], f["rule"], f["path"]): f["evidence"]
        for p in record["packages"]
        for f in p["findings"]
    }
    assert set(warned) == {
        ("xrt-base", "HOST-002", "opt/xilinx/xrt/lib/pkgconfig/xrt.pc"),
        ("xrt-npu", "HOST-002", "opt/xilinx/xrt/lib/pkgconfig/xrt.pc"),
    }
    # the build saw its tree at the canonical path: that is the path the file carries
    tree = "/xdnaforge/work/src/xrt/build/Release/pkg-base/opt/xilinx/xrt"
    assert warned["xrt-base", "HOST-002", "opt/xilinx/xrt/lib/pkgconfig/xrt.pc"] == (
        f"line 1: prefix={tree} ({tree}: the source tree of synthetic, where its build steps "
        "see it)"
    )
    assert "HOST-002 warn: opt/xilinx/xrt/lib/pkgconfig/xrt.pc" in outcome.stdout


@pytest.mark.tools("dpkg", "dpkg-deb", "bwrap")
def test_a_set_with_scripts_is_installed_in_a_throw_away_root_before_it_passes(
    project_dir: Path, tmp_path: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("observing maintainer scripts changes root's files in an overlay: needs root")
    # a known script that runs nothing passes the static rules; observed, it stays a pass
    quiet = plugin()
    quiet.scripts["postinst"] = "#!/bin/sh\nset -e\n"
    deb = build_deb(tmp_path, quiet)
    outcome = run_doit(project_dir, "audit", f"--deb={deb}", f"--json={tmp_path / 'a.json'}")
    assert outcome.rc == 0, outcome.output
    assert "scripts installed in a throw-away root: observed: no module tool ran" in outcome.output
    [package] = json.loads((tmp_path / "a.json").read_text())["packages"]
    assert package["observation"].startswith("observed: ")
    # nothing of the observation is left outside the build directory
    assert (project_dir / "build/observe/observe.log").is_file()


def test_without_bubblewrap_the_observation_is_not_run_and_says_so(
    project_dir: Path, tmp_path: Path
) -> None:
    quiet = plugin()
    quiet.scripts["postinst"] = "#!/bin/sh\nset -e\n"
    deb = tmp_path / "quiet.deb"
    deb.write_bytes(deb_bytes(quiet))
    empty = tmp_path / "no-tools"
    empty.mkdir()
    outcome = run_doit(
        project_dir,
        "audit",
        f"--deb={deb}",
        env={"PATH": f"{empty}:{Path(sys.executable).parent}"},
    )
    assert "scripts installed in a throw-away root: not run: " in outcome.output
    assert "observed: " not in outcome.output
