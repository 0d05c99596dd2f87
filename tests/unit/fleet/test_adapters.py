"""The pure parts of the fleet adapters: aptly names, parsers and host files; gpg parsing;
LAVA tags and test-case lines; the results export reader; the fleet report model; the
`fleet:` site keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from xdnaforge.config.project import load_project
from xdnaforge.config.site import load_site
from xdnaforge.errors import ConfigError, StageFailed
from xdnaforge.fleet import aptly, fleet_report, lava, lava_cases, lava_results
from xdnaforge.tools.gpg import parse_fingerprint

FIXTURES = REPO / "tests/fixtures"
SHOW = """Name: ubuntu26-compat-6f1c0d2a1b3c-0a1b2c3d
Created At: 2026-11-30 05:52:32 UTC
Description: Snapshot from local repo [xdnaforge-ubuntu-26.04]
Number of packages: 3
Sources:
  xdnaforge-ubuntu-26.04 [local]
Packages:
  xrt-base_2.20.0_amd64
  xrt-npu_2.20.0_amd64
  xrt_plugin-amdxdna_2.20.1_amd64
"""


def test_snapshot_packages_keep_underscores_in_names() -> None:
    refs = aptly.parse_snapshot_packages(SHOW)
    assert [(r.package, r.version, r.architecture) for r in refs] == [
        ("xrt-base", "2.20.0", "amd64"),
        ("xrt-npu", "2.20.0", "amd64"),
        ("xrt_plugin-amdxdna", "2.20.1", "amd64"),
    ]


def test_preferences_pin_every_package_of_the_snapshot_at_1001() -> None:
    text = aptly.preferences("snap-1", aptly.parse_snapshot_packages(SHOW))
    stanzas = text.split("\n\n")
    assert len(stanzas) == 3
    assert stanzas[2] == (
        "Explanation: xdnaforge snapshot snap-1\nPackage: xrt_plugin-amdxdna\n"
        "Pin: version 2.20.1\nPin-Priority: 1001\n"
    )


def test_sources_entry_names_the_keyring_and_the_target_prefix() -> None:
    line = aptly.sources_entry(
        "https://lab.example/apt", "ubuntu26-compat", "ubuntu-26.04", ["amd64"]
    )
    assert line.splitlines()[1] == (
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/xdnaforge-archive-keyring.gpg] "
        "https://lab.example/apt/ubuntu26-compat ubuntu-26.04 main"
    )


def test_snapshot_name_is_the_build_not_the_order_of_files() -> None:
    one = aptly.snapshot_name("t", "f" * 64, ["a" * 64, "b" * 64])
    assert one == aptly.snapshot_name("t", "f" * 64, ["b" * 64, "a" * 64])
    assert one.startswith("t-ffffffffffff-")
    assert one != aptly.snapshot_name("t", "f" * 64, ["a" * 64, "c" * 64])
    assert aptly.snapshot_name("t", None, ["a" * 64]).startswith("t-nolock-")


def test_aptly_config_keeps_everything_under_our_directories(tmp_path: Path) -> None:
    layout = aptly.AptLayout(
        config=tmp_path / "build/aptly/aptly.conf", root=tmp_path / "artifacts/apt"
    )
    config = json.loads(aptly.config_json(layout, ["amd64"]))
    assert config["rootDir"] == str(tmp_path / "artifacts/apt")
    assert layout.public == tmp_path / "artifacts/apt/public"
    argv = aptly.publish_argv(layout, "s", "p", "d", "KEY", switch=True)
    assert argv[:4] == ["aptly", f"-config={layout.config}", "publish", "switch"]
    assert "-batch" in argv


def test_gpg_fingerprint_is_the_primary_keys() -> None:
    listing = (
        "tru::1:1796017949:0:3:1:5\n"
        "pub:u:255:22:15F28407635400B8:1796017949:::u:::scSC:::::ed25519:::0:\n"
        "fpr:::::::::79F07C64967E33D901CCA08415F28407635400B8:\n"
        "uid:u::::1796017949::65A2::xdnaforge test <test@example.invalid>::::::::::0:\n"
        "sub:u:255:18:AAAA:1796017949::::::e:::::cv25519::\n"
        "fpr:::::::::BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB:\n"
    )
    assert parse_fingerprint(listing) == "79F07C64967E33D901CCA08415F28407635400B8"
    assert parse_fingerprint("") is None


def test_lava_tags_are_generation_and_release_never_the_kernel() -> None:
    loaded = load_project(REPO, {})
    cells = {c.name: c for c in loaded.cells()}
    assert lava.tags(cells["ubuntu26-npu4"]) == ["npu4", "ubuntu-26.04"]
    assert lava.tags(cells["zimaos17-npu5"]) == ["npu5", "zimaos-1.7"]
    assert lava.definition_name(cells["zimaos17-npu5"]) == "xdnaforge-zimaos17-npu5"


def test_lava_cases_for_a_missing_record_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert lava_cases.main([str(tmp_path / "nope.json")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "lava-test-case validation-record --result fail"
    )
    assert lava_cases.main([]) == 3


def test_lava_case_names_are_quoted_for_the_shell() -> None:
    lines = lava_cases.case_lines(
        {
            "gates": [
                {
                    "name": "validate",
                    "status": "pass",
                    "metrics": [
                        {
                            "name": "throughput_ops",
                            "value": 80547,
                            "unit": "op/s",
                            "verdict": "improved",
                        }
                    ],
                }
            ]
        }
    )
    assert lines == [
        "lava-test-case validate --result pass",
        "lava-test-case throughput_ops --result pass --measurement 80547.0 --units op/s",
    ]


def test_results_export_must_be_a_list_of_cases() -> None:
    with pytest.raises(StageFailed, match="expected a list of test cases"):
        lava_results.parse_cases({"name": "x"}, "r.yaml", lambda _: 1)
    with pytest.raises(StageFailed, match=r"r\.yaml:7: entry 0 is not a test case"):
        lava_results.parse_cases([{"name": "x"}], "r.yaml", lambda _: 7)


def test_results_export_finds_the_cells_and_reads_measurements() -> None:
    data = yaml.safe_load((FIXTURES / "lava/results-ubuntu26-npu4.yaml").read_text())
    cases = lava_results.parse_cases(data, "r.yaml", lambda _: 1)
    assert lava_results.cells_in(cases) == ["ubuntu26-npu4"]
    gemm = next(c for c in cases if c.name == "gemm_tops")
    assert (gemm.measurement, gemm.unit) == (51.0, "TOPS")
    assert next(c for c in cases if c.name == "host").measurement is None


def test_fleet_model_judges_against_the_matrix() -> None:
    loaded = load_project(REPO, {})
    records = []
    for host in ("strix-lab-1", "strix-lab-2", "halo-lab-1"):
        for target_dir in (FIXTURES / "fleet" / host).iterdir():
            validation = json.loads((target_dir / "validation.json").read_text())
            records.append(
                fleet_report.HostRecords(host=host, target=target_dir.name, validation=validation)
            )
    records.append(fleet_report.HostRecords(host="x", target="nowhere", validation=None))
    stranger = {"verdict": "fail", "host": {"cell": "none", "distro": "debian 12", "kernel": "6.1"}}
    records.append(
        fleet_report.HostRecords(host="vm", target="ubuntu26-compat", validation=stranger)
    )
    model = fleet_report.build_model(records, loaded.cells(), loaded.recipes)
    states = {(e.cell, e.host): (e.label, e.state) for e in model.entries}
    assert states == {
        ("ubuntu26-npu4", "strix-lab-1"): ("PASS", "pass"),
        ("ubuntu26-npu4-upstream-main", "strix-lab-2"): ("FAIL", "expected-fail"),
        ("zimaos17-npu5", "halo-lab-1"): ("FAIL", "news"),
    }
    assert model.unplaced == (
        "x: nowhere (no matrix cell uses it)",
        "vm: ubuntu26-compat (the host (debian 12, kernel 6.1) is in no cell)",
    )
    news = model.entry("zimaos17-npu5", "halo-lab-1")
    assert news is not None
    assert news.diagnosis is not None
    assert news.diagnosis["code"] == "fw-protocol-mismatch"
    assert model.entry("zimaos17-npu5", "strix-lab-1") is None


def test_fleet_site_keys_are_checked(tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    site.write_text(
        "fleet:\n  signing_key: ABCD\n  apt_url: lab.example/apt\n"
        "  gnupg_home: keys\n  colour: red\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_site(tmp_path, {"XDNAFORGE_SITE": str(site)})
    text = str(caught.value)
    assert "fleet.apt_url: is not a URL" in text
    assert "'lab.example/apt'" not in text  # a refused file's values are never repeated
    assert "unknown key 'colour'" in text
    site.write_text(
        "fleet:\n  signing_key: ABCD\n  apt_url: https://lab.example/apt/\n  gnupg_home: keys\n"
    )
    fleet = load_site(tmp_path, {"XDNAFORGE_SITE": str(site)}).fleet
    assert (fleet.signing_key, fleet.apt_url, fleet.gnupg_home) == (
        "ABCD",
        "https://lab.example/apt",
        tmp_path / "keys",
    )
    (tmp_path / "elsewhere").mkdir()
    assert load_site(tmp_path / "elsewhere", {}).fleet.signing_key is None
