"""Audit rules on in-memory packages: each payload caught with its rule, nothing else."""

from __future__ import annotations

import io

from tests.debs import (
    TAR_END,
    Spec,
    control_tar,
    deb_bytes,
    dkms_source,
    firmware,
    hand_deb,
    kernel_image,
    plugin,
    tar_entry,
    xrt_base,
    xrt_npu,
)
from xdnaforge.audit import Verdict, Waiver, audit, format_verdicts, wants_text
from xdnaforge.debfile import TEXT_LIMIT, read_deb_stream


def judge(spec: Spec, waivers: tuple[Waiver, ...] = ()) -> Verdict:
    deb = read_deb_stream(io.BytesIO(deb_bytes(spec)), f"{spec.package}.deb", wants_text)
    return audit(deb, waivers)


def rules(verdict: Verdict, severity: str | None = None) -> set[str]:
    return {f.rule for f in verdict.findings if severity in (None, f.severity)}


def test_clean_xrt_packages_pass() -> None:
    base = judge(xrt_base())
    assert base.verdict == "pass"
    # the lone header XRT leaves under usr/src is a warning, not a block
    assert rules(base) == {"SRC-001"}
    assert rules(base, "warn") == {"SRC-001"}
    assert judge(xrt_npu()).findings == ()
    assert judge(plugin(nokmod=True)).findings == ()


def test_plugin_built_without_nokmod_is_blocked_for_every_payload() -> None:
    verdict = judge(plugin(nokmod=False))
    assert verdict.verdict == "block"
    assert rules(verdict) == {
        "DKMS-001",
        "DKMS-002",
        "FW-001",
        "SCRIPT-001",
        "SCRIPT-002",
        "SCRIPT-003",
    }
    evidence = {(f.rule, f.evidence) for f in verdict.findings}
    assert ("SCRIPT-001", "rmmod amdxdna") in evidence
    assert ("SCRIPT-001", "modprobe amdxdna") in evidence
    assert ("SCRIPT-001", "/opt/xilinx/xrt/share/amdxdna/dkms_driver.sh --install") in evidence
    assert any(r == "SCRIPT-002" and 'MODE="0666"' in e for r, e in evidence)


def test_dkms_source_package() -> None:
    verdict = judge(dkms_source())
    assert rules(verdict) == {"DKMS-001", "DKMS-003", "DEP-001", "SCRIPT-001"}
    dep = next(f for f in verdict.findings if f.rule == "DEP-001")
    assert dep.evidence.startswith("Depends: dkms (>= 3.0)")


def test_firmware_and_kernel_image() -> None:
    assert rules(judge(firmware())) == {"FW-001"}
    assert rules(judge(kernel_image())) == {"KMOD-001", "KMOD-002", "KMOD-003", "SCRIPT-001"}


def test_udev_rule_files_with_mode_0666() -> None:
    spec = Spec(
        package="udev-open",
        files={
            "lib/udev/rules.d/60-npu.rules": 'KERNEL=="accel*", MODE="0666"\n',
            "etc/udev/rules.d/70-npu.rules": 'KERNEL=="accel*", GROUP="render", MODE="0660"\n',
        },
    )
    verdict = judge(spec)
    assert [(f.rule, f.path) for f in verdict.findings] == [
        ("UDEV-001", "lib/udev/rules.d/60-npu.rules")
    ]


def test_module_loading_configuration_blocks() -> None:
    spec = Spec(package="loader", files={"etc/modules-load.d/amdxdna.conf": "amdxdna\n"})
    assert rules(judge(spec)) == {"KMOD-004"}


def test_scripts_that_only_mention_tools_are_not_blocked() -> None:
    spec = Spec(
        package="talkative",
        scripts={
            "postinst": (
                "#!/bin/sh\n"
                "set -e\n"
                "# we never call modprobe here\n"
                'echo "if the NPU is missing, run: sudo modprobe amdxdna"\n'
                "if [ -d /etc/dracut.conf.d ]; then :; fi\n"
                "ldconfig\n"
            )
        },
    )
    assert judge(spec).findings == ()


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
    evidence = [f.evidence for f in judge(spec).findings]
    assert evidence == [
        "lsmod | grep -q amdxdna && rmmod amdxdna || true",
        "X=1 /sbin/depmod -a",
        "if true; then sudo /usr/sbin/update-initramfs -u; fi",
    ]


def test_triggers_that_run_update_initramfs_block() -> None:
    spec = Spec(package="trig", scripts={"triggers": "activate-noawait update-initramfs\n"})
    assert rules(judge(spec)) == {"SCRIPT-001"}
    spec = Spec(package="libs", scripts={"triggers": "activate-noawait ldconfig\n"})
    assert judge(spec).findings == ()


def test_dependencies_are_judged_by_package_name() -> None:
    ok = Spec(package="a", depends="libudev1, libdkms-helpers0, linux-libc-dev-ish")
    assert judge(ok).findings == ()
    headers = Spec(package="b", depends="libc6, linux-headers-7.0.0-27-generic")
    assert rules(judge(headers)) == {"DEP-001"}


def test_lone_usr_src_file_warns_but_module_tree_blocks() -> None:
    tree = Spec(
        package="src",
        files={
            "usr/src/foo-1/Makefile": "obj-$(CONFIG_FOO) += foo.o\n",
            "usr/src/foo-1/foo.c": "int x;\n",
        },
    )
    assert rules(judge(tree)) == {"DKMS-003"}


def test_waiver_marks_the_finding_and_shows_its_reason() -> None:
    waiver = Waiver(rule="FW-001", package="amdnpu-firmware", justification="lab image")
    verdict = judge(firmware(), (waiver,))
    assert verdict.verdict == "pass"
    assert [(f.severity, f.waiver) for f in verdict.findings] == [("waived", "lab image")]
    other = Waiver(rule="FW-001", package="someone-else", justification="x")
    assert judge(firmware(), (other,)).verdict == "block"


def test_report_groups_repeated_findings() -> None:
    spec = kernel_image()
    for index in range(5):
        spec.files[f"lib/modules/7.0.0-27-generic/kernel/m{index}.ko"] = b"\x00"
    text = format_verdicts([judge(spec)], [], shown_per_rule=2)
    lines = text.splitlines()
    assert lines[0].startswith("BLOCK linux-image-7.0.0-27-generic 7.0.0-27.27")
    assert "      KMOD-001: 4 more like these" in lines
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
    assert [(f.rule, f.severity) for f in verdict.findings] == [("AUDIT-001", "block")]
