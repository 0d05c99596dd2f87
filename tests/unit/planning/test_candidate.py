"""The pure half of `doit track`: reading the pinned upstream files, carrying a recipe."""

from __future__ import annotations

import json
from typing import Any

from xdnaforge.planning.candidate import (
    Changes,
    Provenance,
    TreeFacts,
    apt_installs,
    candidate_document,
    candidate_header,
    carry_depends,
    compare,
    debian_packages,
    released_firmware,
    script_options,
    xrt_line,
    xrt_version,
)
from xdnaforge.tools.git import Gitlink

# the shape of XRT's xrtdeps.sh: several distros' lists, the Debian one with conditions
XRTDEPS = """#!/bin/bash
rh_package_list()
{
    RH_LIST=(\\
     boost-devel \\
     cmake \\
    )
}

ub_package_list()
{
    UB_LIST=(\\
     cmake \\
     dkms \\
     libncurses5-dev \\
     libtiff5-dev \\
    )

    if [ $docker == 0 ] && [ $sysroot == 0 ]; then
        UB_LIST+=(linux-headers-$(uname -r))
    fi
}

install_pybind11()
{
    if [ $FLAVOR == "ubuntu" ] && [ $MAJOR -ge 23 ]; then
        apt-get install -y pybind11-dev
    fi
}
"""

WHENCE_19 = """# whence-commit: 0019ea94d427219072a9522cc0f688a36240c4bc
Driver: amdxdna - AMD Inference processor

File: amdnpu/17f0_10/1.7_npu.sbin.1.1.2.64
File: amdnpu/17f1_10/1.9_cert.sbin.1.8.0.46
Link: amdnpu/17f0_10/npu.dev.sbin -> 1.7_npu.sbin.1.1.2.64
Link: amdnpu/17f0_20/npu.dev.sbin -> ../17f0_10/1.7_npu.sbin.1.1.2.64
Link: amdnpu/17f1_10/cert.dev.sbin -> 1.9_cert.sbin.1.8.0.46
Link: amdnpu/17f1_10/npu.dev.sbin -> 1.9_npu.sbin.2.14.0.114
"""


def facts(**changes: object) -> TreeFacts:
    base: dict[str, object] = {
        "commit": "a" * 40,
        "gitlinks": (
            Gitlink(path="xrt", url="u/xrt", commit="1" * 40, available=True, fetched_from="m"),
            Gitlink(
                path="xrt/src/qdma", url="u/q", commit="2" * 40, available=True, fetched_from="m"
            ),
        ),
        "xrt_describe": "2.21.75",
        "xrt_version": "2.21.0",
        "upstream_depends": ("cmake", "libncurses5-dev"),
        "firmware": {"17f0_10": "1.0.20.31"},
        "options": {"shim": frozenset({"-release", "-nokmod", "-j"})},
    }
    base.update(changes)
    return TreeFacts(**base)  # type: ignore[arg-type]


def test_debian_list_is_the_unconditional_ub_list_plus_apt_pybind11() -> None:
    assert debian_packages(XRTDEPS) == (
        "cmake",
        "dkms",
        "libncurses5-dev",
        "libtiff5-dev",
        "pybind11-dev",
    )
    assert debian_packages("#!/bin/bash\necho no lists\n") == ()


def test_apt_installs_reads_the_packages_not_the_options() -> None:
    script = 'if [ -x "$(command -v apt-get)" ]; then\n    apt-get install -y jq\nfi\n'
    assert apt_installs(script) == ("jq",)
    assert apt_installs("apt-get install -y --no-install-recommends jq curl\n") == ("jq", "curl")


def test_firmware_from_whence_links_and_from_info_json() -> None:
    assert released_firmware(WHENCE_19, None) == {
        "17f0_10": "1.1.2.64",
        "17f0_20": "1.1.2.64",  # Krackan loads 17f0_10's blob
        "17f1_10": "2.14.0.114",
    }
    info = json.dumps(
        {
            "firmwares": [
                {
                    "pci_device_id": "17f0",
                    "pci_revision_id": "10",
                    "version": "1.1.2.64",
                    "fw_name": "npu.dev.sbin",
                },
                {
                    "pci_device_id": "17f1",
                    "pci_revision_id": "10",
                    "version": "1.5.0.39",
                    "fw_name": "cert.dev.sbin",
                },
            ]
        }
    )
    assert released_firmware(None, info) == {"17f0_10": "1.1.2.64"}  # the cert blob is not it
    assert released_firmware(None, "{not json") == {}


def test_xrt_version_and_line_names() -> None:
    settings = "set(XRT_VERSION_MAJOR 2)\nset(XRT_VERSION_MINOR 25)\n"
    assert xrt_version(settings) == "2.25.0"
    assert xrt_version("VERSION 2.25\n") is None
    assert xrt_line("2.25.0", "2.25.0") == "2.25.0"
    assert xrt_line("2.21.75-6-g8661761775", "2.21.0") == "2.21.75 + 6"
    # the newest release tag before a 2.26 commit is 2.21.70: the line says more
    assert xrt_line("2.21.70-356-ge9db9ab15f", "2.26.0") == "2.26 line"
    assert xrt_line(None, None) is None


def test_carrying_depends_applies_upstreams_difference_in_the_distros_names() -> None:
    lists = {"ubuntu-26.04": ["cmake", "jq", "libncurses-dev"], "fedora-44": ["cmake"]}
    new, added, removed = carry_depends(
        lists, ["cmake", "libncurses5-dev", "dkms"], ["cmake", "elfutils", "dkms"]
    )
    assert (added, removed) == (("elfutils",), ("libncurses5-dev",))
    # dkms stays out (the recipe left it out on purpose), jq (amdxdna_deps) stays in
    assert new == {"ubuntu-26.04": ["cmake", "elfutils", "jq"], "fedora-44": ["cmake", "elfutils"]}


def test_compare_names_every_difference() -> None:
    old = facts()
    new = facts(
        commit="b" * 40,
        gitlinks=(
            Gitlink(path="xrt", url="u/xrt", commit="3" * 40, available=True, fetched_from="m"),
            Gitlink(
                path="xrt/src/xdp",
                url="u/xdp",
                commit="4" * 40,
                available=False,
                fetched_from="/mirrors/xdp",
            ),
        ),
        xrt_describe="2.25.0",
        xrt_version="2.25.0",
        upstream_depends=("cmake", "elfutils"),
        firmware={"17f0_10": "1.1.2.64", "17f0_20": "1.1.2.64"},
        options={"shim": frozenset({"-release", "-j"})},
    )
    changes = compare(
        old,
        new,
        ahead="9 commits ahead",
        depends=(
            {"ubuntu-26.04": ["cmake", "libncurses-dev"]},
            {"ubuntu-26.04": ["cmake", "elfutils"]},
        ),
        unused=(["xrt/src/qdma"], []),
        argv={"shim": ["./build.sh", "-release", "-nokmod", "-j", "{jobs}"]},
    )
    text = changes.text()
    assert "pin: xdna-driver aaaaaaaaaaaa -> bbbbbbbbbbbb (9 commits ahead)" in text
    assert "pin: xrt 111111111111 -> 333333333333 (XRT 2.21.75 -> 2.25.0)" in text
    assert "submodule added: xrt/src/xdp at 444444444444 (u/xdp)" in text
    assert "submodule gone: xrt/src/qdma (was 222222222222)" in text
    assert "unused_submodules: xrt/src/qdma dropped" in text
    assert "dependency: upstream adds elfutils" in text
    assert "dependency: upstream drops libncurses5-dev" in text
    assert "dependency: build.depends.ubuntu-26.04: +elfutils -libncurses-dev" in text
    assert "firmware: 17f0_10 released with 1.1.2.64 (was 1.0.20.31)" in text
    assert "firmware: 17f0_20 released with 1.1.2.64 (was nothing)" in text
    assert "xrt version: a build from source reports 2.21.0 -> 2.25.0" in text
    assert "options: step shim: the script no longer accepts -nokmod" in text
    assert "the carried argv passes -nokmod, which the pinned script does not accept" in text
    assert f"missing: xrt/src/xdp {'4' * 40} is in no mirror (/mirrors/xdp)" in text
    same = compare(
        old, old, ahead="the same commit", depends=({}, {}), unused=([], []), argv={}
    ).text()
    assert "upstream's lists (xrtdeps.sh, amdxdna_deps.sh) unchanged" in same
    assert "released with 17f0_10 1.0.20.31 (the same as before)" in same


def test_missing_ignores_what_lies_under_an_unused_submodule() -> None:
    tree = facts(
        gitlinks=(
            Gitlink(path="xrt/a", url="u", commit="1" * 40, available=False, fetched_from="m"),
            Gitlink(path="xrt/a/b", url="u", commit="2" * 40, available=False, fetched_from="m"),
            Gitlink(path="xrt/c", url="u", commit="3" * 40, available=False, fetched_from="m"),
        )
    )
    assert [g.path for g in tree.missing(["xrt/a"])] == ["xrt/c"]


START: dict[str, Any] = {
    "schema": 1,
    "name": "ubuntu26-compat",
    "description": "the 1.6 line",
    "hosts": {"distro": {"id": "ubuntu", "version": "26.04"}},
    "driver": {
        "driver": "amdxdna (in-tree, Linux 7.0)",
        "cmd_bo_max_bytes": 32768,
        "notes": "stays below 32 KiB.",
    },
    "source": {
        "name": "xdna-driver",
        "url": "https://github.com/amd/xdna-driver.git",
        "commit": "f" * 40,
        "ref": "1.6",
        "submodules": [{"path": "xrt", "commit": "0" * 40, "ref": "2.20"}],
        "unused_submodules": [
            {"path": "xrt/src/qdma", "reason": "Alveo only"},
            {"path": "xrt/src/aie-rt", "reason": "Windows only"},
        ],
    },
    "patches": ["ubuntu26"],
    "build": {
        "steps": [
            {
                "name": "xrt",
                "cwd": "xrt/build",
                "argv": ["./build.sh"],
                "ctest": {"total": 70, "skipped": 2},
            }
        ],
        "depends": {"ubuntu-26.04": ["cmake"]},
        "known_test_failures": [],
    },
    "validate": {"gates": ["host"], "xrt_version": "2.20.0", "baseline": {"gemm_tops": 51.0}},
}


def test_candidate_carries_the_recipe_with_new_pins_and_drops_what_was_proven_for_the_old() -> None:
    provenance = Provenance(
        line="xdna-1.9",
        how="branch 1.9",
        started_from="ubuntu26-compat",
        when="2026-12-01",
        xrt_describe="2.26 line",
    )
    new = facts(commit="c" * 40, xrt_describe="2.26 line", xrt_version="2.26.0")
    doc = candidate_document(
        START,
        new,
        provenance,
        ref="1.9",
        track="1.9",
        depends={"ubuntu-26.04": ["cmake", "elfutils"]},
    )
    assert doc["name"] == "xdna-1.9"
    assert doc["source"]["commit"] == "c" * 40
    assert (doc["source"]["ref"], doc["source"]["track"]) == ("1.9", "1.9")
    assert doc["source"]["submodules"] == [{"path": "xrt", "commit": "1" * 40, "ref": "2.26 line"}]
    # qdma still exists in the new tree, aie-rt does not
    assert doc["source"]["unused_submodules"] == [{"path": "xrt/src/qdma", "reason": "Alveo only"}]
    assert "patches" not in doc
    assert "ctest" not in doc["build"]["steps"][0]
    assert "known_test_failures" not in doc["build"]
    assert doc["build"]["depends"] == {"ubuntu-26.04": ["cmake", "elfutils"]}
    assert "baseline" not in doc["validate"]
    assert doc["validate"]["xrt_version"] == "2.26.0"
    # the driver contract is carried, and says so
    assert doc["driver"]["cmd_bo_max_bytes"] == 32768
    assert doc["driver"]["notes"].startswith("Carried unchanged from recipe ubuntu26-compat")
    assert doc["driver"]["notes"].endswith("stays below 32 KiB.")
    assert START["source"]["commit"] == "f" * 40  # the starting document is not touched
    # re-tracking the candidate keeps the first origin instead of stacking notes
    again = candidate_document(doc, new, provenance, ref="1.9", track="1.9", depends={})
    assert again["driver"]["notes"] == doc["driver"]["notes"]
    changes = Changes()
    changes.add("pin", "xrt a -> b")
    missing = [Gitlink(path="xrt/x", url="u", commit="9" * 40, available=False, fetched_from="m")]
    header = candidate_header(provenance, changes, "could not run: x", missing)
    assert header.startswith("# Candidate written by `doit track --line xdna-1.9` (branch 1.9)")
    assert all(line.startswith("#") for line in header.splitlines())
    assert f"xrt/x {'9' * 40}" in header
    assert "#   pin: xrt a -> b" in header


def test_script_options_reads_each_steps_script() -> None:
    script = (
        'while [ $# -gt 0 ]; do\n  case "$1" in\n    -release) ;;\n    -nokmod) ;;\n  esac\ndone\n'
    )
    options = script_options({"shim": script, "xrt": None})
    assert options["shim"] == frozenset({"-release", "-nokmod"})
    assert options["xrt"] is None
