"""The maintainer-script judge: what debhelper and CPack write is proven clean; every way
the review slipped a module tool past the old pattern match is a problem with its line."""

from __future__ import annotations

import pytest

from tests.debs import DH_PYTHON3_PRERM
from xdnaforge.debs.rules import sensitive_word
from xdnaforge.debs.shell import judge

DEBHELPER = """#!/bin/sh
set -e
# Automatically added by dh_installsystemd/13.11.4
IF_CONFIGURE
	# This will only remove masks created by d-s-h on package removal.
	deb-systemd-helper unmask 'xrt-npu.service' >/dev/null || true
	if deb-systemd-helper --quiet was-enabled 'xrt-npu.service'; then
		deb-systemd-helper enable 'xrt-npu.service' >/dev/null || true
	else
		deb-systemd-helper update-state 'xrt-npu.service' >/dev/null || true
	fi
fi
case "$1" in
    configure|abort-upgrade)
        ldconfig
        update-alternatives --install /usr/bin/xrt-smi xrt-smi /opt/xilinx/xrt/bin/xrt-smi 50
        ;;
    remove)
        rm -rf /opt/xilinx/xrt/python/__pycache__ 2>/dev/null
        ;;
    *)
        echo "postinst called with unknown argument \\`$1'" >&2
        ;;
esac
for dir in /opt/xilinx/xrt/lib /opt/xilinx/xrt/share; do
    [ -d "$dir" ] && chmod 755 "$dir"
done
dpkg-trigger --no-await xrt-icd
if command -v py3compile >/dev/null 2>&1; then py3compile -p python3-xrt; fi
if dpkg --compare-versions "$2" lt-nl 2.20.0; then rm -f /etc/xrt/old.conf; fi
getent group render >/dev/null || addgroup --system render
if [ -x "$(command -v systemd-tmpfiles)" ]; then systemd-tmpfiles --create xrt.conf || true; fi
if [ -d /etc/dracut.conf.d ]; then :; fi
exit 0
""".replace(
    "IF_CONFIGURE",
    'if [ "$1" = "configure" ] || [ "$1" = "abort-upgrade" ] || [ "$1" = "abort-deconfigure" ]'
    ' || [ "$1" = "abort-remove" ] ; then',
)


def problems(script: str) -> list[tuple[int, str]]:
    return [(p.line, p.reason) for p in judge(script, sensitive_word)]


def test_what_debhelper_and_cpack_generate_is_proven_clean() -> None:
    assert problems(DEBHELPER) == []
    assert problems("") == []
    assert problems("#!/bin/sh -e\nldconfig\n") == []


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("sudo -n modprobe amdxdna", "runs 'sudo'"),
        ("env -i modprobe amdxdna", "runs 'env'"),
        ("sh -c 'modprobe amdxdna'", "runs 'sh'"),
        ("( modprobe amdxdna )", "runs 'modprobe'"),
        ("{ modprobe amdxdna; }", "runs 'modprobe'"),
        ("load() { modprobe amdxdna; }; load", "runs 'modprobe'"),
        ('case "$1" in configure) modprobe amdxdna ;; esac', "runs 'modprobe'"),
        ("timeout 5 modprobe amdxdna", "runs 'timeout'"),
        ("echo amdxdna | xargs modprobe", "runs 'xargs'"),
        ("busybox modprobe amdxdna", "runs 'busybox'"),
        ("mod\\\nprobe amdxdna", "runs 'modprobe'"),
        ("make -C /lib/modules/$(uname -r)/build M=$PWD modules_install", "substitution"),
        ("make -C /lib/modules/6.8/build M=/tmp/x modules_install", "runs 'make'"),
        ("cp amdxdna.ko /lib/modules/6.8/extra/", "the kernel's module tree"),
        ("install -m 644 npu.sbin /lib/firmware/amdnpu/", "the firmware tree"),
        ("m=modprobe; $m amdxdna", "not a literal"),
        ("$(printf 'mod%s' probe) amdxdna", "substitution"),
        ("echo bW9kcHJvYmUK | base64 -d | sh", "runs 'base64'"),
        ('eval "modprobe amdxdna"', "runs 'eval'"),
        (". /usr/lib/evil/helper.sh", "sources"),
        ("/opt/xilinx/xrt/share/amdxdna/dkms_driver.sh --install", "a program the audit"),
        ("echo 'install amdxdna /bin/true' > /etc/modprobe.d/x.conf", "writes to"),
        ("echo x > $TARGET", "writes to"),
        ("systemctl start modprobe@amdxdna.service", "mentions"),
        ("exec modprobe amdxdna", "runs 'exec'"),
        ("'modprobe' amdxdna", "runs 'modprobe'"),
        ("udevadm trigger", "runs 'udevadm'"),
        ("command modprobe amdxdna", "runs 'command'"),
        ("dpkg -i /opt/xilinx/extra/amdxdna-dkms.deb", "runs 'dpkg'"),
    ],
)
def test_every_way_around_the_pattern_match_is_a_problem(line: str, reason: str) -> None:
    found = problems(f"#!/bin/sh\nset -e\n{line}\nexit 0\n")
    assert found, line
    assert found[0][0] == 3
    assert reason in found[0][1]


def test_a_nul_byte_and_other_interpreters_are_problems() -> None:
    assert problems("#!/bin/sh\nmod\0probe amdxdna\n") == [
        (2, "a NUL byte (dash drops it from a command name)")
    ]
    assert problems("#!/usr/bin/perl\nsystem('modprobe amdxdna');\n")[0][0] == 1
    assert problems("#!/usr/bin/python3\nimport os\n")[0][1].startswith("not a POSIX shell")
    assert problems('#!/bin/sh\necho "unterminated\n')[0][1] == "a line the audit cannot read"


def test_the_problem_shows_the_line() -> None:
    found = judge("#!/bin/sh\nldconfig\n  sudo modprobe amdxdna  \n", sensitive_word)
    assert [(p.line, p.text) for p in found] == [(3, "sudo modprobe amdxdna")]


def test_dh_python3s_generated_lines_are_known_and_the_sed_one_is_left_to_the_audit() -> None:
    [problem] = judge(DH_PYTHON3_PRERM.replace("PACKAGE", "python3-xrt"), sensitive_word)
    assert problem.line == 8
    assert problem.own_py_names == "python3-xrt"
    # one character off the generated text and the line is judged like any other
    edited = DH_PYTHON3_PRERM.replace("PACKAGE", "python3-xrt").replace("-empty", "-newer /x")
    assert "runs 'find'" in " ".join(p.reason for p in judge(edited, sensitive_word))
