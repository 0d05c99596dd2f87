"""Audit rules on in-memory packages: each payload caught with its rule, and every place
outside the stack's layout blocked (PATH-001) whatever it holds."""

from __future__ import annotations

import hashlib
import io

import pytest

from tests.debs import (
    DH_PYTHON3_PRERM,
    TAR_END,
    Spec,
    control_tar,
    deb_bytes,
    dkms_source,
    firmware,
    hand_deb,
    kernel_image,
    module_bytes,
    plugin,
    tar_entry,
    tar_header,
    xrt_base,
    xrt_npu,
)
from xdnaforge.debs import admit
from xdnaforge.debs.admit import Entry
from xdnaforge.debs.debfile import TEXT_LIMIT, read_deb_stream
from xdnaforge.debs.policy import Policy, ScriptWaiver, Waiver
from xdnaforge.debs.rules import Verdict, audit, symlinks, wants_text
from xdnaforge.debs.verdicts import format_verdicts

# what a recipe for a real XRT 2.19 build states: its one leftover header (domain notes)
LEFTOVER_HEADER = Entry(
    "usr/src/xrt-*/driver/include/version.h", "recipe", "XRT 2.19's leftover Alveo header"
)


def judge(spec: Spec, waivers: tuple[Waiver, ...] = (), policy: Policy | None = None) -> Verdict:
    deb = read_deb_stream(io.BytesIO(deb_bytes(spec)), f"{spec.package}.deb", wants_text)
    return audit(deb, policy or Policy(waivers=waivers))


def rules(verdict: Verdict, severity: str | None = None) -> set[str]:
    return {f.rule for f in verdict.findings if severity in (None, f.severity)}


def test_clean_xrt_packages_pass() -> None:
    assert judge(xrt_npu()).findings == ()
    assert judge(plugin(nokmod=True)).findings == ()
    # the lone header XRT 2.19 leaves under usr/src is no layout's: it passes only where
    # the recipe admits it, and then it is a warning, not a block
    assert judge(xrt_base()).findings == ()
    alone = judge(xrt_base(leftover=True))
    assert [(f.rule, f.path) for f in alone.findings if f.severity == "block"] == [
        ("PATH-001", "usr/src/xrt-2.20.0/driver/include/version.h")
    ]
    base = judge(xrt_base(leftover=True), policy=Policy(admitted=(LEFTOVER_HEADER,)))
    assert base.verdict == "pass"
    assert rules(base) == {"SRC-001"}
    assert rules(base, "warn") == {"SRC-001"}


def test_plugin_built_without_nokmod_is_blocked_for_every_payload() -> None:
    verdict = judge(plugin(nokmod=False))
    assert verdict.verdict == "block"
    assert rules(verdict) == {
        "PATH-001",  # the firmware under usr/lib/firmware
        "DKMS-001",
        "DKMS-002",
        "FW-001",
        "SCRIPT-001",
        "SCRIPT-002",
        "SCRIPT-003",
        "SCRIPT-004",  # neither script is a known generator's output
    }
    evidence = {(f.rule, f.evidence) for f in verdict.findings}
    assert ("SCRIPT-001", "rmmod amdxdna") in evidence
    assert ("SCRIPT-001", "modprobe amdxdna") in evidence
    assert ("SCRIPT-001", "/opt/xilinx/xrt/share/amdxdna/dkms_driver.sh --install") in evidence
    assert any(r == "SCRIPT-002" and 'MODE="0666"' in e for r, e in evidence)


def test_dkms_source_package() -> None:
    verdict = judge(dkms_source())
    assert rules(verdict) == {
        "PATH-001",
        "DKMS-001",
        "DKMS-003",
        "DEP-001",
        "SCRIPT-001",
        "SCRIPT-004",
    }
    dep = next(f for f in verdict.findings if f.rule == "DEP-001")
    assert dep.evidence.startswith("Depends: dkms (>= 3.0)")


def test_firmware_and_kernel_image() -> None:
    assert rules(judge(firmware())) == {"FW-001", "PATH-001"}
    assert rules(judge(kernel_image())) == {
        "PATH-001",
        "KMOD-001",
        "KMOD-002",
        "KMOD-003",
        "SCRIPT-001",
        "SCRIPT-004",
    }


def test_udev_rule_files_with_mode_0666() -> None:
    spec = Spec(
        package="udev-open",
        files={
            "lib/udev/rules.d/60-npu.rules": 'KERNEL=="accel*", MODE="0666"\n',
            "etc/udev/rules.d/70-npu.rules": 'KERNEL=="accel*", GROUP="render", MODE="0660"\n',
        },
    )
    verdict = judge(spec)
    assert [(f.rule, f.path) for f in verdict.findings if f.rule != "PATH-001"] == [
        ("UDEV-001", "lib/udev/rules.d/60-npu.rules")
    ]
    # neither place is the stack's: both block, the harmless one too
    assert {f.path for f in verdict.findings if f.rule == "PATH-001"} >= set(spec.files)


def test_module_loading_configuration_blocks() -> None:
    spec = Spec(package="loader", files={"etc/modules-load.d/amdxdna.conf": "amdxdna\n"})
    assert rules(judge(spec)) == {"KMOD-004", "PATH-001"}


def test_a_script_no_generator_wrote_blocks_at_its_first_unknown_line() -> None:
    spec = Spec(
        package="talkative",
        scripts={
            "postinst": (
                "#!/bin/sh\n"
                "set -e\n"
                "# we never call modprobe here\n"
                'echo "if the NPU is missing, run: sudo modprobe amdxdna"\n'
                "ldconfig\n"
            )
        },
    )
    verdict = judge(spec)
    [finding] = verdict.findings
    assert (finding.rule, finding.path) == ("SCRIPT-004", "DEBIAN/postinst")
    assert finding.evidence.startswith("line 3: # we never call modprobe here")


def test_script_commands_behind_prefixes_and_operators_are_found() -> None:
    spec = Spec(
        package="sneaky",
        scripts={
            "postinst": (
                "#!/bin/sh\n"
                "lsmod | grep -q amdxdna && rmmod amdxdna || true\n"
                "X=1 /sbin/depmod -a\n"
                "if true; then sudo /usr/sbin/update-initramfs -u; fi\n"
            )
        },
    )
    evidence = [f.evidence for f in judge(spec).findings if f.rule == "SCRIPT-001"]
    assert evidence == [
        "lsmod | grep -q amdxdna && rmmod amdxdna || true",
        "X=1 /sbin/depmod -a",
        "if true; then sudo /usr/sbin/update-initramfs -u; fi",
    ]


def test_triggers_that_run_update_initramfs_block() -> None:
    spec = Spec(package="trig", scripts={"triggers": "activate-noawait update-initramfs\n"})
    assert rules(judge(spec)) == {"SCRIPT-001", "SCRIPT-004"}
    generated = "# Triggers added by dh_makeshlibs/14.5\nactivate-noawait ldconfig\n"
    assert judge(Spec(package="libs", scripts={"triggers": generated})).findings == ()
    interest = "# Triggers added by dh_makeshlibs/14.5\ninterest-noawait /lib/modules\n"
    assert rules(judge(Spec(package="libs", scripts={"triggers": interest}))) == {"SCRIPT-004"}


def test_dependencies_are_judged_by_package_name() -> None:
    ok = Spec(package="a", depends="libudev1, libdkms-helpers0, linux-libc-dev, linux-base")
    assert judge(ok).findings == ()
    headers = Spec(package="b", depends="libc6, linux-headers-7.0.0-27-generic")
    assert rules(judge(headers)) == {"DEP-001"}
    # kernel flavours no list names are the kernel's all the same
    for name in ("linux-oracle", "linux-intel-iotg", "linux-objects-nvidia-580", "firmware-amd"):
        assert rules(judge(Spec(package="c", depends=f"libc6, {name}"))) == {"DEP-001"}, name


def test_lone_usr_src_file_warns_but_module_tree_blocks() -> None:
    tree = Spec(
        package="src",
        files={
            "usr/src/foo-1/Makefile": "obj-$(CONFIG_FOO) += foo.o\n",
            "usr/src/foo-1/foo.c": "int x;\n",
        },
    )
    assert rules(judge(tree)) == {"DKMS-003", "PATH-001"}


def test_waiver_marks_the_finding_and_shows_its_reason() -> None:
    waivers = tuple(
        Waiver(rule=rule, package="amdnpu-firmware", justification="lab image")
        for rule in ("FW-001", "PATH-001")
    )
    verdict = judge(firmware(), waivers)
    assert verdict.verdict == "pass"
    assert [(f.severity, f.waiver) for f in verdict.findings] == [("waived", "lab image")] * 2
    other = Waiver(rule="FW-001", package="someone-else", justification="x")
    assert judge(firmware(), (other,)).verdict == "block"
    # one rule waived: the other still blocks
    assert judge(firmware(), waivers[:1]).verdict == "block"


def test_report_groups_repeated_findings() -> None:
    spec = kernel_image()
    for index in range(5):
        spec.files[f"lib/modules/7.0.0-27-generic/kernel/m{index}.ko"] = b"\x00"
    text = format_verdicts([judge(spec)], [], shown_per_rule=2)
    lines = text.splitlines()
    assert lines[0].startswith("BLOCK linux-image-7.0.0-27-generic 7.0.0-27.27")
    assert "      KMOD-001: 4 more like these" in lines
    # each blocking rule says once what a packager does about it
    assert sum(line.startswith("      fix PATH-001: ") for line in lines) == 1
    assert lines[-1] == "audit: 1 of 1 package(s) carry a kernel payload: BLOCKED"


def test_relation_fields_are_found_whatever_their_case() -> None:
    # dpkg folds field names: "depends: dkms" is enforced like "Depends: dkms"
    for field in ("depends", "PRE-DEPENDS", "Pre-depends"):
        spec = Spec(package="folded", depends="libc6")
        control = spec.control().replace("Depends: libc6", f"{field}: linux-headers-generic")
        deb = read_deb_stream(
            io.BytesIO(hand_deb(control_tar(control), tar_entry("./", b"5") + TAR_END)),
            "f.deb",
            wants_text,
        )
        assert rules(audit(deb)) == {"DEP-001"}, field


def test_a_rules_file_over_the_read_limit_is_blocked_not_judged_by_its_start() -> None:
    rule = b'KERNEL=="accel*", MODE="0660"\n'
    text = rule * (TEXT_LIMIT // len(rule) + 1) + b'KERNEL=="mem", MODE="0666"\n'
    verdict = judge(Spec(package="big-rules", files={"lib/udev/rules.d/60-big.rules": text}))
    assert [(f.rule, f.severity) for f in verdict.findings if f.rule != "PATH-001"] == [
        ("AUDIT-001", "block")
    ]


def test_a_module_is_found_by_its_content_whatever_it_is_called() -> None:
    # inside the layout, the content rule is what finds it
    name = "opt/xilinx/xrt/share/amdxdna/amdxdna.bin"
    verdict = judge(Spec(package="renamed", files={name: module_bytes()}))
    assert [(f.rule, f.path) for f in verdict.findings] == [("KMOD-005", name)]
    name = "usr/share/x/AMDXDNA.KO"
    verdict = judge(Spec(package="renamed", files={name: module_bytes()}))
    assert [(f.rule, f.path) for f in verdict.findings] == [("KMOD-005", name), ("PATH-001", name)]


@pytest.mark.parametrize(
    ("path", "content", "rule"),
    [
        ("usr/local/lib/modprobe.d/npu.conf", "install amdxdna /bin/sh -c 'x'\n", "KMOD-004"),
        ("run/modules-load.d/npu.conf", "amdxdna\n", "KMOD-004"),
        ("etc/modules", "amdxdna\n", "KMOD-004"),
        ("etc/depmod.d/npu.conf", "override amdxdna * extra\n", "KMOD-004"),
        ("usr/lib/systemd/system-generators/npu", "#!/bin/sh\n", "LOAD-001"),
        ("etc/kernel/postinst.d/npu", "#!/bin/sh\n", "LOAD-001"),
        ("usr/lib/kernel/install.d/50-npu.install", "#!/bin/sh\n", "LOAD-001"),
        ("usr/share/initramfs-tools/hooks/npu", "#!/bin/sh\n", "LOAD-001"),
        ("usr/lib/dracut/dracut.conf.d/npu.conf", 'add_drivers+=" amdxdna "\n', "LOAD-001"),
        ("etc/cron.d/npu", "@reboot root modprobe amdxdna\n", "LOAD-001"),
        (
            "usr/lib/systemd/system/npu.service",
            "[Service]\nExecStart=-/sbin/modprobe amdxdna\n",
            "LOAD-002",
        ),
        ("etc/systemd/system/npu.service", "[Unit]\nWants=modprobe@amdxdna.service\n", "LOAD-002"),
        (
            "usr/local/lib/udev/rules.d/60-npu.rules",
            'ACTION=="add", RUN+="/bin/sh -c x"\n',
            "LOAD-002",
        ),
        ("etc/apt/apt.conf.d/99npu", 'DPkg::Post-Invoke { "modprobe amdxdna"; };\n', "LOAD-002"),
        ("usr/lib/udev/rules.d/60-npu.rules", 'KERNEL=="accel*", MODE="0777"\n', "UDEV-001"),
        ("lib/udev/rules.d/60-npu.rules", 'KERNEL=="accel*", MODE="00666"\n', "UDEV-001"),
        ("run/udev/rules.d/60-npu.rules", 'KERNEL=="accel*", MODE="0606"\n', "UDEV-001"),
        ("usr/lib/tmpfiles.d/npu.conf", "z /dev/accel/accel0 0666 - - -\n", "DEV-001"),
        ("usr/lib/tmpfiles.d/mem.conf", "c! /dev/mymem 0600 - - - 1:1\n", "DEV-001"),
    ],
)
def test_module_loading_and_device_access_outside_the_six_directories(
    path: str, content: str, rule: str
) -> None:
    verdict = judge(Spec(package="loader", files={path: content}))
    assert rule in rules(verdict, "block"), verdict.findings
    assert verdict.verdict == "block"


def test_places_outside_the_layout_block_however_harmless_their_content() -> None:
    verdict = judge(
        Spec(
            package="quiet",
            files={
                "usr/lib/systemd/system/xrt.service": "[Service]\nExecStart=/opt/xrt/bin/xrtd\n",
                "usr/lib/udev/rules.d/60-npu.rules": (
                    '# KERNEL=="accel*", MODE="0666" was the old rule\n'
                    'KERNEL=="accel*", GROUP="render", MODE="0660"\n'
                ),
                "usr/lib/tmpfiles.d/xrt.conf": "d /run/xrt 0755 root root -\n",
                "usr/lib/x86_64-linux-gnu/libfoo.so": "x",
            },
        )
    )
    blocked = {f.path for f in verdict.findings if f.rule == "PATH-001"}
    assert {
        "usr/lib/systemd/system/xrt.service",
        "usr/lib/udev/rules.d/60-npu.rules",
        "usr/lib/tmpfiles.d/xrt.conf",
        "usr/lib/x86_64-linux-gnu/libfoo.so",  # not one of the stack's libraries
    } <= blocked
    assert rules(verdict) == {"PATH-001"}  # the content rules find nothing in them


def test_a_device_node_and_links_into_kernel_trees_are_blocked() -> None:
    data = (
        tar_entry("./", b"5")
        + tar_entry("./dev/", b"5")
        + tar_header("./dev/mem-for-all", b"3", 0, mode=0o666)
        + tar_entry("./usr/", b"5")
        + tar_entry("./usr/share/", b"5")
        + tar_entry("./usr/share/npu", b"2", link="../../lib/firmware/amdnpu")
        + tar_entry("./usr/share/mods", b"2", link="/usr/lib/modules")
        + TAR_END
    )
    deb = read_deb_stream(
        io.BytesIO(hand_deb(control_tar(Spec(package="dev").control()), data)), "d.deb", wants_text
    )
    found = {(f.rule, f.path) for f in audit(deb).findings}
    assert found >= {
        ("DEV-001", "dev/mem-for-all"),
        ("KMOD-006", "usr/share/npu"),
        ("KMOD-006", "usr/share/mods"),
        ("PATH-001", "dev/mem-for-all"),
    }


@pytest.mark.parametrize(
    "relation",
    [
        "Depends: amdxdna-dkms",
        "Depends: linux-generic",
        "Depends: linux-oem-24.04",
        "Pre-Depends: linux-image-generic",
        "Recommends: dkms",
        "Recommends: linux-headers-amd64",
    ],
)
def test_kernel_relations_block_recommends_too(relation: str) -> None:
    field, _, value = relation.partition(": ")
    control = Spec(package="rel").control().replace("Description", f"{field}: {value}\nDescription")
    deb = read_deb_stream(
        io.BytesIO(hand_deb(control_tar(control), tar_entry("./", b"5") + TAR_END)), "r.deb"
    )
    assert audit(deb).verdict == "block"


def test_packages_are_judged_together_through_directory_symlinks() -> None:
    # one package links a directory of the layout to the firmware tree, the other ships a
    # file under it: each alone is admitted, together the file lands in lib/firmware
    link = tar_entry("./", b"5") + tar_entry("./opt/", b"5") + tar_entry("./opt/xilinx/", b"5")
    link += tar_entry("./opt/xilinx/xrt/", b"5")
    link += tar_entry("./opt/xilinx/xrt/npu", b"2", link="../../../lib/firmware") + TAR_END
    file = tar_entry("./", b"5") + tar_entry("./opt/xilinx/xrt/npu/", b"5")
    file += tar_entry("./opt/xilinx/xrt/npu/amdnpu/npu.sbin", data=b"\0fw") + TAR_END
    first, second = (
        read_deb_stream(
            io.BytesIO(hand_deb(control_tar(Spec(package=name).control()), data)), f"{name}.deb"
        )
        for name, data in (("links", link), ("files", file))
    )
    assert audit(second).findings == ()
    together = audit(second, links=symlinks([first, second]))
    assert {(f.rule, f.path, f.evidence) for f in together.findings} == {
        (
            "KMOD-006",
            "opt/xilinx/xrt/npu/amdnpu/npu.sbin",
            "lands in usr/lib/firmware/amdnpu/npu.sbin (the firmware tree) through symlinks",
        ),
        (
            "PATH-002",
            "opt/xilinx/xrt/npu/amdnpu/npu.sbin",
            "lands in usr/lib/firmware/amdnpu/npu.sbin through symlinks",
        ),
    }
    assert rules(audit(first)) == {"KMOD-006"}  # the link itself points into a kernel tree


def test_links_are_followed_physically_through_merged_usr() -> None:
    # on merged-/usr, bin is usr/bin, so bin/.. is usr: the target is usr/local/lib/modprobe.d,
    # which text alone (bin/.. = the root) reads as local/lib/modprobe.d
    data = tar_entry("./", b"5") + tar_entry("./opt/xilinx/xrt/", b"5")
    data += tar_entry("./opt/xilinx/xrt/conf", b"2", link="../../../bin/../local/lib/modprobe.d")
    data += TAR_END
    deb = read_deb_stream(
        io.BytesIO(hand_deb(control_tar(Spec(package="m").control()), data)), "m.deb"
    )
    assert {(f.rule, f.path) for f in audit(deb).findings} == {("KMOD-006", "opt/xilinx/xrt/conf")}


def test_printed_names_cannot_redraw_the_terminal() -> None:
    fake = "\r\x1b[2K\x1b[32mPASS xrt-base 2.20.0\x1b[0m"
    # the control file splits at "\r" (it is one field per line), the rest keeps it
    spec = Spec(package="evil", version="1\x1b[2K", files={f"lib/modules/x{fake}.ko": "m"})
    text = format_verdicts([judge(spec)], [(f"y{fake}.deb", f"bad{fake}")])
    assert "\x1b" not in text
    assert "\r" not in text
    assert "\\r\\x1b[2K\\x1b[32mPASS" in text
    assert text.splitlines()[0] == "BLOCK evil 1\\x1b[2K (evil.deb)"


def python_package(path: str, named: str = "python3-xrt") -> Spec:
    return Spec(
        package="python3-xrt",
        files={path: "pass\n"},
        scripts={"prerm": DH_PYTHON3_PRERM.replace("PACKAGE", named)},
    )


def test_dh_python3s_prerm_passes_for_its_own_package() -> None:
    verdict = judge(python_package("usr/lib/python3/dist-packages/pyxrt/__init__.py"))
    assert verdict.findings == ()


def test_a_file_name_that_would_run_as_shell_in_the_generated_prerm_blocks() -> None:
    # sed's e flag hands `rm "DIR/__pycache__/NAME".*` to the shell: $(...) in NAME runs
    hostile = judge(python_package("usr/lib/python3/dist-packages/pyxrt/$(modprobe evil).py"))
    assert [(f.rule, f.path) for f in hostile.findings] == [
        ("PATH-003", "usr/lib/python3/dist-packages/pyxrt/$(modprobe evil).py")
    ]
    # naming another package: not this package's generator output
    other = judge(python_package("usr/lib/python3/dist-packages/pyxrt/x.py", named="python3-x"))
    assert rules(other) == {"SCRIPT-004"}


def test_a_pth_file_is_never_admitted_even_by_the_recipe() -> None:
    path = "usr/lib/python3/dist-packages/pyxrt-hook.pth"
    everything = Policy(admitted=(Entry("usr/lib/python3/dist-packages/**", "recipe", "x"),))
    verdict = judge(Spec(package="p", files={path: "import os\n"}), policy=everything)
    assert [(f.rule, f.path) for f in verdict.findings] == [("PATH-001", path)]


def test_replaces_and_conflicts_name_only_the_stack() -> None:
    spec = Spec(package="libxrt2", depends="libc6")
    control = spec.control().replace(
        "Description", "Replaces: libxrt1, linux-headers-7.0.0-27-generic\nDescription"
    )
    deb = read_deb_stream(
        io.BytesIO(hand_deb(control_tar(control), tar_entry("./", b"5") + TAR_END)), "r.deb"
    )
    [finding] = audit(deb).findings
    assert (finding.rule, finding.evidence) == (
        "DEP-003",
        "Replaces: linux-headers-7.0.0-27-generic",
    )


def test_a_script_is_waived_by_its_exact_sha256_only() -> None:
    text = "#!/bin/sh\nset -e\nldconfig\n"
    spec = Spec(package="plugin", scripts={"postinst": text})
    digest = hashlib.sha256(text.encode()).hexdigest()
    read = ScriptWaiver("plugin", "postinst", digest, "runs ldconfig only")
    verdict = judge(spec, policy=Policy(scripts=(read,)))
    assert verdict.verdict == "pass"
    [finding] = verdict.findings
    assert (finding.rule, finding.severity) == ("SCRIPT-004", "waived")
    assert finding.waiver == f"sha256 {digest}: runs ldconfig only"
    # one byte more and the waiver no longer covers it; nor for another package or script
    spec.scripts["postinst"] = text + "\n"
    assert judge(spec, policy=Policy(scripts=(read,))).verdict == "block"
    for other in (
        ScriptWaiver("other", "postinst", digest, "x"),
        ScriptWaiver("plugin", "prerm", digest, "x"),
    ):
        assert (
            judge(
                Spec(package="plugin", scripts={"postinst": text}), policy=Policy(scripts=(other,))
            ).verdict
            == "block"
        )


def test_control_members_and_conffiles_are_admitted_by_name() -> None:
    control = Spec(package="libxrt2").control()
    extra = control_tar(
        control,
        conffiles=b"/etc/OpenCL/vendors/amdxrt.icd\n/etc/modprobe.d/xrt.conf\n",
        amdxdna=b"\x7fELF",
    )
    data = tar_entry("./", b"5") + TAR_END
    deb = read_deb_stream(io.BytesIO(hand_deb(extra, data)), "c.deb", wants_text)
    assert {(f.rule, f.path, f.evidence) for f in audit(deb).findings} >= {
        ("CTRL-001", "DEBIAN/amdxdna", "installed under var/lib/dpkg/info/, unreviewed"),
        ("CTRL-002", "DEBIAN/conffiles", "/etc/modprobe.d/xrt.conf"),
    }
    assert "/etc/OpenCL/vendors/amdxrt.icd" not in {f.evidence for f in audit(deb).findings}


def test_an_unknown_scripts_line_is_shown_bounded() -> None:
    text = "#!/bin/sh\nset -e\n" + "x" * 100_000 + "\n"
    [finding] = judge(Spec(package="long", scripts={"postinst": text})).findings
    assert finding.evidence.startswith("line 3: xxx")
    assert "... (100000 characters): not a known generator's output" in finding.evidence
    assert len(finding.evidence) < 300


def test_a_set_id_program_in_the_layout_blocks() -> None:
    data = tar_entry("./", b"5") + tar_entry("./opt/xilinx/xrt/bin/", b"5")
    data += tar_entry("./opt/xilinx/xrt/bin/xrt-smi", data=b"\x7fELF", mode=0o4755)
    data += tar_entry("./opt/xilinx/xrt/bin/xbutil", data=b"\x7fELF", mode=0o2755)
    data += tar_entry("./opt/xilinx/xrt/bin/xbmgmt", data=b"\x7fELF", mode=0o755) + TAR_END
    deb = read_deb_stream(
        io.BytesIO(hand_deb(control_tar(Spec(package="xrt-base").control()), data)), "s.deb"
    )
    assert {(f.rule, f.path, f.evidence) for f in audit(deb).findings} == {
        ("PATH-004", "opt/xilinx/xrt/bin/xrt-smi", "file with mode 4755"),
        ("PATH-004", "opt/xilinx/xrt/bin/xbutil", "file with mode 2755"),
    }


def test_a_package_name_that_is_a_pattern_admits_no_one_elses_documentation() -> None:
    for name in ("*", "{kmod,xrt}", "x/../kmod"):
        layout = admit.layout(name, "amd64")
        assert not layout.admits("usr/share/doc/kmod/copyright"), name
    assert admit.layout("xrt_plugin-amdxdna", "amd64").admits(
        "usr/share/doc/xrt_plugin-amdxdna/copyright"
    )


def test_a_program_of_the_stack_that_links_to_a_module_tool_blocks() -> None:
    data = tar_entry("./", b"5") + tar_entry("./usr/bin/", b"5")
    data += tar_entry("./usr/bin/xrt-smi", b"2", link="/usr/sbin/modprobe")
    data += tar_entry("./usr/bin/xbutil", b"2", link="../../bin/kmod")
    data += tar_entry("./usr/bin/xbmgmt", b"2", link="xrt-smi") + TAR_END
    deb = read_deb_stream(
        io.BytesIO(hand_deb(control_tar(Spec(package="libxrt-utils").control()), data)), "t.deb"
    )
    found = {(f.rule, f.path) for f in audit(deb).findings}
    assert found == {
        ("KMOD-006", "usr/bin/xrt-smi"),
        ("KMOD-006", "usr/bin/xbutil"),
        ("KMOD-006", "usr/bin/xbmgmt"),  # through xrt-smi, the package's own link
    }
