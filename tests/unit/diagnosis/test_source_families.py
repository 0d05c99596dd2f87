"""The reviewed source table: where a message is thrown -> its family, and the generated
catalogue held to it."""

from __future__ import annotations

import pytest

from xdnaforge.diagnosis.knowledge import load_families, load_knowledge
from xdnaforge.diagnosis.source_families import family_of, parse_rules, rule_for, rules
from xdnaforge.diagnosis.upstream import catalogue

REPOS = {
    "amdxdna": "amd/xdna-driver",
    "shim": "amd/xdna-driver",
    "example": "amd/xdna-driver",
    "xrt": "Xilinx/XRT",
    "xrt-smi": "Xilinx/XRT",
    "flm": "ROCm/FastFlowLM",
    "lemonade": "lemonade-sdk/lemonade",
}


def test_every_rule_names_a_known_family() -> None:
    families = {f.id for f in load_families()}
    assert {rule.family for rule in rules()} <= families


def test_every_family_a_message_can_get_has_a_generic_entry() -> None:
    generic = {e.family for e in load_knowledge() if e.generic}
    assert {rule.family for rule in rules()} <= generic


@pytest.mark.parametrize(
    ("repo", "path", "function", "template", "family"),
    [
        (
            "amd/xdna-driver",
            "src/driver/amdxdna/aie2_smu.c",
            "aie2_smu_exec",
            "smu cmd %d failed",
            "power",
        ),
        (
            "torvalds/linux",
            "drivers/accel/amdxdna/aie2_pci.c",
            "aie2_check_protocol",
            "Incompatible",
            "versions",
        ),
        (
            "amd/xdna-driver",
            "drivers/accel/amdxdna/aie2_ctx.c",
            "aie2_hwctx_cfg_debug_bo",
            "Get bo %d failed",
            "notes",
        ),
        (
            "amd/xdna-driver",
            "drivers/accel/amdxdna/aie2_ctx.c",
            "aie2_hwctx_init",
            "Alloc hw resource failed",
            "hwctx",
        ),
        ("amd/xdna-driver", "src/shim/buffer.cpp", "mmap_drm_bo", "mmap(...) failed", "memory"),
        (
            "Xilinx/XRT",
            "src/runtime_src/core/common/module_loader.cpp",
            "module_path",
            "No such library '%s'",
            "device-access",
        ),
        (
            "Xilinx/XRT",
            "src/runtime_src/core/tools/xbutil2/SubCmdConfigure.cpp",
            "SubCmdConfigure::execute",
            "ERROR: Suboption missing",
            "usage",
        ),
        ("Xilinx/XRT", "build/build.sh", "", "ERROR: cmake not found", "build"),
        # xclbinutil: its command line's forms are usage, reading a section's file is build
        (
            "Xilinx/XRT",
            "src/runtime_src/tools/xclbinutil/XclBinClass.cxx",
            "XclBin::getKeyValueComponents",
            "ERROR: Expected format [USER | SYS]:<key>:<value> when using adding a key value pair.",
            "usage",
        ),
        (
            "Xilinx/XRT",
            "src/runtime_src/tools/xclbinutil/XclBinUtilMain.cxx",
            "main_",
            "ERROR: The option '--target' and the key 'SYS:mode' are mutually exclusive.",
            "usage",
        ),
        (
            "Xilinx/XRT",
            "src/runtime_src/tools/xclbinutil/XclBinUtilMain.cxx",
            "main_",
            "ERROR: The AIE_PARTITION section in the xclbin is not compliant with IP_LAYOUT",
            "build",
        ),
        (
            "Xilinx/XRT",
            "src/runtime_src/tools/xclbinutil/SectionAIEPartition.cxx",
            "SectionAIEPartition::readXclBinBinary",
            "ERROR: Unable to open the file for reading: '%s'",
            "build",
        ),
    ],
)
def test_a_message_gets_the_family_of_where_it_is_thrown(
    repo: str, path: str, function: str, template: str, family: str
) -> None:
    assert family_of(repo, path, function, template) == family


def test_a_bring_up_caller_is_marked_as_passing_up_its_callees_failure() -> None:
    rule = rule_for(
        "amd/xdna-driver", "src/driver/amdxdna/aie2_pci.c", "aie2_init", "start npu failed, ret %d"
    )
    assert rule is not None
    assert rule.caller
    callee = rule_for(
        "amd/xdna-driver", "src/driver/amdxdna/aie2_smu.c", "aie2_smu_init", "Access power failed"
    )
    assert callee is not None
    assert not callee.caller


def test_the_first_matching_rule_decides() -> None:
    table = parse_rules(
        "rules:\n"
        "  - {path: 'src/*.c', function: 'ctx', family: hwctx}\n"
        "  - {path: 'src/*.c', family: command}\n"
    )
    assert [r.family for r in table if r.matches("x/y", "src/a.c", "create_ctx", "t")] == [
        "hwctx",
        "command",
    ]
    assert next(r for r in table if r.matches("x/y", "src/a.c", "submit", "t")).family == "command"


def test_the_catalogue_is_stamped_with_the_tables_family() -> None:
    # the data file was generated from this table: a changed rule means regenerating it
    stale = []
    for message in catalogue().messages:
        repo = REPOS.get(message.component)
        if (
            message.component == "amdxdna"
            and message.file.startswith("drivers/accel/")
            and not any("xdna" in r for r in message.releases)
        ):
            repo = "torvalds/linux"
        if message.component == "build":
            continue  # any repository's scripts: the path rules decide alone
        if (
            repo
            and family_of(repo, message.file, message.function, message.template) != message.family
        ):
            stale.append(message.describe())
    assert stale == []


def test_every_template_has_a_family() -> None:
    assert [m.describe() for m in catalogue().messages if not m.family] == []
