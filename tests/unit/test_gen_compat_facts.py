"""scripts/gen_compat_facts.py (run by hand on local copies of upstream files) on a synthetic
upstream tree, and the data file it wrote."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO
from xdnaforge.compat import facts


def generator() -> ModuleType:
    path = REPO / "scripts/gen_compat_facts.py"
    spec = importlib.util.spec_from_file_location("gen_compat_facts", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PCI_DRV = """// source: example/linux {sha} drivers/accel/amdxdna/amdxdna_pci_drv.c
MODULE_FIRMWARE("amdnpu/17f0_11/npu.sbin");
{extra}
#define AMDXDNA_DRIVER_MAJOR\t\t0
#define AMDXDNA_DRIVER_MINOR\t\t{minor}
static const struct pci_device_id pci_ids[] = {{
\t{{ PCI_DEVICE(PCI_VENDOR_ID_AMD, 0x17f0) }},
}};
static const struct amdxdna_device_id amdxdna_ids[] = {{
\t{{ 0x17f0, 0x11, &dev_npu5_info }},
}};
"""


def synthetic(root: Path) -> Path:
    linux = root / "linux"
    old, new, patches = linux / "drm-0.1", linux / "drm-0.10", linux / "patches"
    for directory in (old, new, patches):
        directory.mkdir(parents=True)
    (old / "amdxdna_pci_drv.c").write_text(PCI_DRV.format(sha="a" * 40, extra="", minor=1))
    (old / "aie2_pci.c").write_text(
        "// source: example/linux " + "b" * 40 + " drivers/accel/amdxdna/aie2_pci.c\n"
        "\tif (ndev->priv->protocol_major != fw_major) {\n"
        "\tret = request_firmware(&fw, ndev->priv->fw_path, &pdev->dev);\n"
    )
    (old / "npu5_regs.c").write_text(
        "// source: example/linux c npu5_regs.c\n"
        '\t.fw_path        = "amdnpu/17f0_11/npu.sbin",\n'
        "\t.protocol_major = 0x6,\n\t.protocol_minor = 12,\n"
    )
    (old / "amdxdna_gem.c").write_text("#define XDNA_MAX_CMD_BO_SIZE\tSZ_32K\n")
    (linux / "drm-0.6-7.0").mkdir()
    (linux / "drm-0.6-7.0/amdxdna_pci_drv.c").write_text(
        'MODULE_FIRMWARE("amdnpu/17f0_11/npu_7.sbin");\n'
        "#define AMDXDNA_DRIVER_MAJOR\t\t0\n#define AMDXDNA_DRIVER_MINOR\t\t6\n"
    )
    (linux / "drm-0.0").mkdir()
    (linux / "drm-0.0/amdxdna_pci_drv.c").write_text(
        "// source: example/linux 0 drivers/accel/amdxdna/amdxdna_pci_drv.c\n"
        "\t{ PCI_DEVICE(PCI_VENDOR_ID_AMD, 0x17f0) },\n"
        "\t{ 0x17f0, 0x11, &dev_npu5_info },\n"
        "const struct drm_driver amdxdna_drm_drv = {\n"
        '\t.name = "amdxdna_accel_driver",\n'
    )
    (linux / "drm-0.7").mkdir()
    (linux / "drm-0.7/amdxdna_pci_drv.c").write_text(PCI_DRV.format(sha="7", extra="", minor=7))
    (linux / "drm-0.6").mkdir()
    (linux / "drm-0.6/amdxdna_pci_drv.c").write_text(PCI_DRV.format(sha="6", extra="", minor=6))
    (new / "amdxdna_pci_drv.c").write_text(
        PCI_DRV.format(
            sha="d" * 40, extra='MODULE_FIRMWARE("amdnpu/17f0_11/npu_7.sbin");', minor=10
        )
    )
    (new / "aie2_pci.c").write_text(
        'static char *npu_fw[] = {\n\t"npu_7.sbin",\n\t"npu.sbin"\n};\n'
    )
    (patches / "x-npu4_regs.c").write_text(
        "const struct aie2_fw_feature_tbl npu4_fw_feature_table[] = {\n"
        "\t{ .major = 6, .min_minor = 12 },\n"
        "\t{ .features = BIT_U64(AIE2_NPU_COMMAND), .major = 6, .min_minor = 15 },\n"
        "\t{ .features = GENMASK_ULL(AIE2_TEMPORAL_ONLY, AIE2_NPU_COMMAND), .major = 7 },\n"
        "\t{ 0 }\n};\n"
        '\t.fw_path        = "amdnpu/17f0_10/npu.sbin",\n'
    )
    pin = root / "xdna-driver/1.6-pin"
    (pin / "src/driver/amdxdna").mkdir(parents=True)
    (pin / "src/shim/umq").mkdir(parents=True)
    (pin / "tools").mkdir()
    (pin / "COMMIT").write_text("e" * 40 + "\n")
    (pin / "tools/info.json").write_text(
        json.dumps(
            {
                "xrt": {"version": "202520.2.20.122"},
                "firmwares": [
                    {
                        "device": "npu5",
                        "pci_device_id": "17f0",
                        "pci_revision_id": "11",
                        "version": "1.0.20.31",
                        "fw_name": "npu.dev.sbin",
                    }
                ],
            }
        )
    )
    (pin / "src/driver/amdxdna/npu5_regs.c").write_text(
        '\t.fw_path\t= "amdnpu/17f0_11/npu.dev.sbin",\n'
        "\t.min_fw_version\t= AIE2_FW_VERSION(6, 12),\n"
    )
    (pin / "src/shim/umq/hwq.cpp").write_text(
        "  const size_t umq_sz = 0x8000; // 32k, current cmd_bo max size\n"
    )
    (root / "firmware").mkdir()
    (root / "firmware/observations.txt").write_text(
        "# comment\n1.1.2.65 17f0_11 7.2 a report\n1.0.0.166 17f0_11 6.12+ another report\n"
        "link 17f0_11 npu.sbin npu.sbin.1.0.0.166\n"
    )
    (root / "fastflowlm").mkdir()
    (root / "fastflowlm/main.cpp").write_text(
        "// source: example/flm f" + " src/main.cpp\n"
        "    bool kernel_ok = (major > 6) || (major == 6 && minor >= 17);\n"
        "if (!(drm_v.version_major > 0 || "
        "(drm_v.version_major == 0 && drm_v.version_minor >= 6)))\n"
        "bool fw_ok = (query_fw_version.major > 1 || (query_fw_version.major == 1 && "
        "query_fw_version.minor >= 1));\n"
        "if (query_aie_metadata.cols < 8) {\n"
        "if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 100 * 1024 * 1024) {\n"
    )
    return root


def test_generation_reads_every_kind_of_source_and_names_them(tmp_path: Path) -> None:
    data = generator().generate(synthetic(tmp_path))
    drivers = {d["drm_version"]: d for d in data["drivers"]}
    old, seven, new = drivers["0.1"], drivers["0.7"], drivers["0.10"]
    assert old["firmware_names"] == ["npu.sbin"]
    assert old["protocol"]["npu5"]["rules"] == [
        {"kind": "exact-major", "major": 6, "min_minor": 12}
    ]
    assert old["cmd_bo_limit_bytes"] == 32768
    assert old["ids_from"] == "linux/drm-0.1/amdxdna_pci_drv.c"
    assert new["firmware_names"] == ["npu_7.sbin", "npu.sbin"]
    assert [(r["major"], r["min_minor"]) for r in new["protocol"]["npu4"]["rules"]] == [
        (6, 12),
        (7, 0),
    ]
    assert new["cmd_bo_limit_known"] is False
    # 0.7 states nothing of its own: everything is carried over, and said to be
    assert seven["firmware_names"] == ["npu_7.sbin", "npu.sbin"]
    assert any("carried over from in-tree-0.10" in why for why in seven["inferred"])
    sources = {s["key"]: s for s in data["sources"]}
    assert sources["linux/drm-0.1/amdxdna_pci_drv.c"]["commit"] == "a" * 40
    pin = next(e for e in data["xdna_driver"] if e["label"] == "1.6 (ubuntu26-compat)")
    assert pin["commit"] == "e" * 40
    assert pin["userspace"]["cmd_bo_bytes"] == 32768
    assert pin["out_of_tree_driver"]["protocol"]["npu5"]["rules"] == [
        {"kind": "at-least", "major": 6, "min_minor": 12}
    ]
    assert pin["firmware"][0] == {
        "npu": "npu5",
        "dir": "17f0_11",
        "version": "1.0.20.31",
        "fw_name": "npu.dev.sbin",
    }
    assert data["firmware"][1]["minor_at_least"] is True
    assert data["consumers"][0]["floors"] == {
        "kernel": "6.17",
        "drm_version": "0.6",
        "firmware": "1.1.0.0",
        "columns": 8,
        "memlock_bytes": 100 * 1024 * 1024,
    }


def test_a_generation_whose_file_says_another_drm_version_is_refused(tmp_path: Path) -> None:
    root = synthetic(tmp_path)
    (root / "linux/drm-0.1/amdxdna_pci_drv.c").write_text(
        PCI_DRV.format(sha="a", extra="", minor=2)
    )
    with pytest.raises(ValueError, match=r"defines DRM 0\.2, the generation says 0\.1"):
        generator().generate(root)


def test_a_file_that_only_shows_a_generation_must_agree_with_it(tmp_path: Path) -> None:
    root = synthetic(tmp_path)
    data = generator().generate(root)
    mainline = next(d for d in data["drivers"] if d["id"] == "in-tree-0.6-7.0")
    assert mainline["seen_in"] == "linux/drm-0.6-7.0/amdxdna_pci_drv.c"
    assert mainline["firmware_names"] == ["npu_7.sbin", "npu.sbin"]
    (root / "linux/drm-0.6-7.0/amdxdna_pci_drv.c").write_text(
        'MODULE_FIRMWARE("amdnpu/17f0_11/npu_9.sbin");\n'
        "#define AMDXDNA_DRIVER_MAJOR\t\t0\n#define AMDXDNA_DRIVER_MINOR\t\t6\n"
    )
    with pytest.raises(ValueError, match=r"npu_9\.sbin"):
        generator().generate(root)


def test_a_missing_generation_file_is_named(tmp_path: Path) -> None:
    root = synthetic(tmp_path)
    (root / "linux/drm-0.6/amdxdna_pci_drv.c").unlink()
    with pytest.raises(ValueError, match=r"the file answering ids of DRM 0\.6 is missing"):
        generator().generate(root)


def test_a_bad_observation_line_names_its_line() -> None:
    with pytest.raises(ValueError, match=r"obs\.txt:2: expected"):
        generator().parse_observations("# c\n1.1.2.65 17f0_11\n", "obs.txt")


def test_the_shipped_data_file_names_a_source_for_every_fact() -> None:
    data = facts.load_upstream()
    keys = {s["key"] for s in data["sources"]}
    for driver in data["drivers"]:
        assert driver["ids_from"] in keys
        assert driver["firmware_names_from"] in keys
        assert all(rule["from"] in keys for rule in driver["protocol"].values())
        assert driver["cmd_bo_from"] in keys | {None}
        assert driver["inferred"], "kernel ranges come from reports: said as inferred"
    for line in data["xdna_driver"]:
        assert len(line["commit"]) == 40
    assert {s["repo"] for s in data["sources"]} >= {"torvalds/linux", "amd/xdna-driver"}


def firmware_tree(root: Path, blobs: dict[str, bytes], links: dict[str, str]) -> Path:
    tree = root / "firmware/tree/pkg"
    (tree / "17f0_11").mkdir(parents=True)
    (tree / "SOURCE").write_text("firmware-example 1.0 (linux-firmware 20260916)\n")
    for name, content in blobs.items():
        (tree / "17f0_11" / name).write_bytes(content)
    for name, target in links.items():
        (tree / "17f0_11" / name).symlink_to(target)
    return tree


def test_a_packaged_firmware_tree_gives_the_links_and_the_blobs_release_strings(
    tmp_path: Path,
) -> None:
    root = synthetic(tmp_path)
    firmware_tree(
        root,
        {
            "npu.sbin.1.0.0.166": b"\0hdr\0Release 1.0.0.166\0",
            "npu.sbin.1.1.2.65": b"Release 1.1.2.65",
        },
        {"npu.sbin": "npu.sbin.1.0.0.166", "npu_7.sbin": "npu.sbin.1.1.2.65"},
    )
    data = generator().generate(root)
    package = "firmware-example 1.0 (linux-firmware 20260916)"
    assert data["firmware_links"] == [
        {"dir": "17f0_11", "name": "npu.sbin", "source": package, "target": "npu.sbin.1.0.0.166"},
        {"dir": "17f0_11", "name": "npu_7.sbin", "source": package, "target": "npu.sbin.1.1.2.65"},
    ]
    assert {b["file"]: b["release"] for b in data["firmware_shipped"]} == {
        "npu.sbin.1.0.0.166": "1.0.0.166",
        "npu.sbin.1.1.2.65": "1.1.2.65",
    }
    seen = {b["version"]: b.get("release_seen_in") for b in data["firmware"]}
    assert seen == {"1.1.2.65": package, "1.0.0.166": package}


def test_a_blob_whose_release_string_contradicts_its_name_is_refused(tmp_path: Path) -> None:
    root = synthetic(tmp_path)
    firmware_tree(root, {"npu.sbin.1.1.2.65": b"Release 1.0.0.166"}, {})
    with pytest.raises(
        ValueError, match=re.escape("named 1.1.2.65, but its Release string says 1.0.0.166")
    ):
        generator().generate(root)


def test_a_driver_that_sets_no_drm_version_is_the_0_0_generation(tmp_path: Path) -> None:
    data = generator().generate(synthetic(tmp_path))
    zero = next(d for d in data["drivers"] if d["drm_version"] == "0.0")
    assert zero["id"] == "in-tree-0.0"
    assert zero["kernels"] == ">=6.14, <6.18"
    assert zero["devices"] == [{"pci": "1022:17f0", "revision": "0x11", "npu": "npu5"}]
    # what its files do not say is the 0.1 driver's, and said to be
    assert zero["firmware_names"] == ["npu.sbin"]
    assert zero["protocol"]["npu5"]["rules"][0]["kind"] == "exact-major"
    assert any("carried over from in-tree-0.1" in why for why in zero["inferred"])
    # a file that names .major without defining it is not taken for 0.0
    assert (
        generator().parse_pci_drv(".major = AMDXDNA_DRIVER_MAJOR, amdxdna_drm_drv")["drm_version"]
        is None
    )


def test_a_feature_rows_minimum_is_not_the_devices() -> None:
    regs = generator().parse_regs(
        "\t{ .feature = AIE2_NPU_COMMAND, .min_fw_version = AIE2_FW_VERSION(6, 15) },\n"
        "\t.min_fw_version = AIE2_FW_VERSION(6, 12),\n"
    )
    assert regs["rules"] == [{"kind": "at-least", "major": 6, "min_minor": 12}]


def line(root: Path, label: str, xrt: str, fw_file: str, rule: str) -> None:
    base = root / "xdna-driver" / label
    (base / "src/driver/amdxdna").mkdir(parents=True)
    (base / "tools").mkdir()
    (base / "COMMIT").write_text(label[0] * 40 + "\n")
    (base / "tools/info.json").write_text(json.dumps({"xrt": {"version": xrt}}))
    (base / "src/driver/amdxdna/npu5_regs.c").write_text(
        f'\t.fw_path\t= "amdnpu/17f0_11/{fw_file}",\n{rule}\n'
    )


def test_out_of_tree_drivers_are_told_apart_by_what_they_request_and_accept(
    tmp_path: Path,
) -> None:
    root = synthetic(tmp_path)
    exact = "\t.protocol_major = 0x6,\n\t.protocol_minor = 12,"
    line(root, "1.4", "202510.2.19.72", "npu.sbin", exact)
    line(root, "1.5", "202520.2.20.41", "npu.dev.sbin", exact)
    line(
        root, "1.7", "202610.2.21.75", "npu.dev.sbin", "\t.min_fw_version = AIE2_FW_VERSION(6, 12),"
    )
    eras = generator().generate(root)["out_of_tree"]
    assert [
        (e["firmware_names"], e["first_seen"]["xrt_version"], e["last_seen"]["xrt_version"])
        for e in eras
    ] == [
        (["npu.sbin"], "2.19.72", "2.19.72"),
        (["npu.dev.sbin"], "2.20.41", "2.20.41"),
        # the 1.6 pin (2.20.122) accepts by a minimum as 1.7 does: one era
        (["npu.dev.sbin"], "2.20.122", "2.21.75"),
    ]
    assert eras[2]["protocol"]["npu5"]["rules"][0]["kind"] == "at-least"


def test_a_line_whose_info_lists_no_firmware_is_read_from_whence(tmp_path: Path) -> None:
    root = synthetic(tmp_path)
    line(root, "1.9", "202620.2.26.89", "npu.dev.sbin", "")
    (root / "xdna-driver/1.9/src/driver/amdxdna/amdxdna_pci_drv.c").write_text(
        "\t{ 0x17f1, 0x10,  &dev_npu3_info },\n"
    )
    (root / "xdna-driver/1.9/tools/WHENCE").write_text(
        "File: amdnpu/17f1_10/1.9_npu.sbin.2.14.0.114\n"
        "File: amdnpu/17f1_10/1.9_cert.sbin.1.8.0.46\n"
        "Link: amdnpu/17f1_10/npu.dev.sbin -> 1.9_npu.sbin.2.14.0.114\n"
        "Link: amdnpu/17f1_10/cert.dev.sbin -> 1.9_cert.sbin.1.8.0.46\n"
        "Link: amdnpu/17f2_10/npu.dev.sbin -> ../17f1_10/1.9_npu.sbin.2.14.0.114\n"
    )
    data = generator().generate(root)
    entry = next(e for e in data["xdna_driver"] if e["label"] == "release line 1.9")
    assert entry["firmware_from"] == "xdna-driver/1.9/tools/WHENCE"
    assert [(f["dir"], f["fw_name"], f["version"], f["npu"]) for f in entry["firmware"]] == [
        ("17f1_10", "npu.dev.sbin", "2.14.0.114", "npu3"),
        ("17f1_10", "cert.dev.sbin", "1.8.0.46", "npu3"),
        ("17f2_10", "npu.dev.sbin", "2.14.0.114", None),
    ]
    assert entry["devices"] == [{"pci": "1022:17f1", "revision": "0x10", "npu": "npu3"}]


def test_a_consumer_states_its_npus_its_plugin_and_its_known_failures(tmp_path: Path) -> None:
    root = synthetic(tmp_path)
    with (root / "fastflowlm/main.cpp").open("a") as out:
        out.write('        "libxrt_driver_xdna.so.2",    // Driver\n')
        out.write("    // XDNA2 NPU: AMD vendor 1022, device 17F0\n")
        out.write("LIKE '%VEN_1022&DEV_17F0%'\n")
    (root / "fastflowlm/known_failures.txt").write_text(
        "# c\n1022:17f0 0x20 >0.9.44 CREATE_HWCTX -22 | FastFlowLM issue 655\n"
    )
    consumer = generator().generate(root)["consumers"][0]
    assert consumer["npus"] == {"pci": ["1022:17f0"], "name": "XDNA2"}
    assert consumer["needs_libraries"] == ["libxrt_driver_xdna.so.2"]
    assert consumer["known_failures"] == [
        {
            "pci": "1022:17f0",
            "revision": "0x20",
            "releases": ">0.9.44",
            "symptom": "CREATE_HWCTX -22",
            "source": "FastFlowLM issue 655",
        }
    ]
    with pytest.raises(ValueError, match=r"kf:1: expected"):
        generator().parse_known_failures("1022:17f0 0x20 no source\n", "kf")


def test_a_packaged_tree_read_before_is_carried_with_its_source(tmp_path: Path) -> None:
    root = synthetic(tmp_path)
    package = "firmware-example 1.0"
    earlier = {
        "sources": [
            {
                "key": "firmware/tree/pkg",
                "repo": "(package)",
                "commit": "-",
                "path": "p",
                "note": package,
            }
        ],
        "firmware_links": [
            {"dir": "17f0_11", "name": "npu.sbin", "target": "npu.sbin.1.1.2.65", "source": package}
        ],
        "firmware_shipped": [
            {
                "dir": "17f0_11",
                "file": "npu.sbin.1.1.2.65",
                "release": "1.1.2.65",
                "source": package,
            }
        ],
    }
    data = generator().generate(root, earlier)
    assert data["firmware_links"] == earlier["firmware_links"]  # the package's link wins
    assert data["firmware_shipped"] == earlier["firmware_shipped"]
    assert "firmware/tree/pkg" in {s["key"] for s in data["sources"]}
    assert {b["version"]: b.get("release_seen_in") for b in data["firmware"]}["1.1.2.65"] == package


def test_an_npu_on_anothers_dev_priv_takes_its_rules(tmp_path: Path) -> None:
    root = synthetic(tmp_path)
    (root / "xdna-driver/1.6-pin/src/driver/amdxdna/npu6_regs.c").write_text(
        "const struct amdxdna_dev_info dev_npu6_info = {\n\t.dev_priv = &npu5_dev_priv,\n};\n"
    )
    pin = next(
        e
        for e in generator().generate(root)["xdna_driver"]
        if e["label"] == "1.6 (ubuntu26-compat)"
    )
    protocol = pin["out_of_tree_driver"]["protocol"]
    assert protocol["npu6"]["rules"] == protocol["npu5"]["rules"]
    assert protocol["npu6"]["as"] == "npu5"
    assert protocol["npu6"]["from"] == "xdna-driver/1.6-pin/src/driver/amdxdna/npu6_regs.c"
