"""The stack's layout: what it admits, as narrowly as the real packages allow."""

from __future__ import annotations

import pytest

from xdnaforge.debs import admit
from xdnaforge.debs.admit import Entry

# every payload path of Debian forky's seven XRT 2.25.0 packages, by kind of place
FORKY = [
    ("libxrt2", "usr/lib/x86_64-linux-gnu/libxrt_coreutil.so.2.25.00"),
    ("libxrt2", "usr/lib/x86_64-linux-gnu/libxilinxopencl.so.2"),
    ("libxrt2", "usr/share/doc/libxrt2/changelog.Debian.gz"),
    ("libxrt2", "usr/share/lintian/overrides/libxrt2"),
    ("libxrt-npu2", "usr/lib/x86_64-linux-gnu/libxrt_driver_xdna.so.2"),
    ("libxrt-npu2", "usr/lib/x86_64-linux-gnu/xrt/module/libxdp_core.so.2.25.00"),
    ("libxrt-utils", "etc/OpenCL/vendors/amdxrt.icd"),
    ("libxrt-utils", "usr/bin/xrt-smi"),
    ("libxrt-utils", "usr/bin/xclbinutil"),
    ("libxrt-utils", "usr/share/bash-completion/completions/xrt-smi"),
    ("libxrt-utils", "usr/share/man/man1/xrt-smi.1.gz"),
    ("libxrt-utils-npu", "usr/bin/aiebu-asm"),
    ("python3-xrt", "usr/bin/xbtop"),
    ("python3-xrt", "usr/lib/python3/dist-packages/_xbtop/XBUtil.py"),
    ("python3-xrt", "usr/lib/python3/dist-packages/pyxrt.cpython-314-x86_64-linux-gnu.so"),
    ("libxrt-alveo2", "usr/lib/x86_64-linux-gnu/libsched_em.so.2.25.00"),
    ("libxrt-dev", "usr/include/xrt/xrt_device.h"),
    ("libxrt-dev", "usr/include/xrt/detail/abi.h"),
    ("libxrt-dev", "usr/include/CL/cl_ext_xilinx.h"),
    ("libxrt-dev", "usr/include/hip/hip_xrt.h"),
    ("libxrt-dev", "usr/lib/x86_64-linux-gnu/pkgconfig/xrt.pc"),
    ("libxrt-dev", "usr/share/cmake/XRT/xrt-config.cmake"),
    ("libxrt-dev", "usr/lib/x86_64-linux-gnu/libxrt_core.a"),
]
# what a real XRT 2.19 -npu build's packages ship (domain notes)
OPT = [
    "opt/xilinx/xrt/lib/libxrt_coreutil.so.2.19.0",
    "opt/xilinx/xrt/share/amdxdna/bins/17f0_10/validate.xclbin",
    "opt/xilinx/include/xrt.h",
    "opt/xilinx/lib/libxrt_core.so",
    "opt/xilinx/aiebu/bin/aiebu-asm",
    "usr/share/pkgconfig/xrt.pc",
    "etc/OpenCL/vendors/xilinx.icd",
]


@pytest.mark.parametrize(("package", "path"), FORKY)
def test_every_file_of_the_distro_stack_is_admitted(package: str, path: str) -> None:
    assert admit.layout(package, "amd64").admits(path)


@pytest.mark.parametrize("path", OPT)
def test_every_file_of_a_real_opt_build_is_admitted(path: str) -> None:
    assert admit.layout("xrt-npu", "amd64").admits(path)


@pytest.mark.parametrize(
    "path",
    [
        # beside the stack's libraries in the multiarch directory
        "usr/lib/x86_64-linux-gnu/security/pam_npu.so",
        "usr/lib/x86_64-linux-gnu/gconv/gconv-modules",
        "usr/lib/x86_64-linux-gnu/libkmod.so.2",
        "usr/lib/x86_64-linux-gnu/libc.so.6",
        # another architecture's directory for an amd64 package
        "usr/lib/aarch64-linux-gnu/libxrt_core.so.2",
        # the module tools and their configuration, under any name
        "usr/bin/modprobe",
        "usr/sbin/xrt-smi",
        "etc/modprobe.d/npu.conf",
        "etc/modprob.d/npu.conf",
        "etc/systemd/system.control/npu.service",
        "etc/sysctl.d/50-npu.conf",
        "etc/network/if-pre-up.d/npu",
        "boot/grub/custom.cfg",
        "etc/default/grub.d/npu.cfg",
        "usr/src/linux-headers-7.0.0-27/scripts/sign-file",
        # another package's documentation
        "usr/share/doc/kmod/copyright",
        # a Python start-up hook beside pyxrt
        "usr/lib/python3/dist-packages/pyxrt.pth",
        "usr/lib/python3/dist-packages/sitecustomize.py",
        "usr/lib/python3/dist-packages/zz.pth",
        # directories that hold nothing admitted
        "var/lib",
        "etc/OpenCL/vendors/../../modprobe.d/x.conf",
    ],
)
def test_what_no_layout_names_is_not_admitted(path: str) -> None:
    assert not admit.layout("libxrt2", "amd64").admits(path)


def test_directories_are_admitted_when_they_hold_admitted_paths() -> None:
    layout = admit.layout("libxrt2", "amd64")
    for directory in (
        "usr",
        "usr/lib",
        "usr/lib/x86_64-linux-gnu",
        "etc",
        "etc/OpenCL",
        "usr/share/man/man1",
    ):
        assert layout.admits(directory, directory=True), directory
    assert not layout.admits("etc/modprobe.d", directory=True)
    assert not layout.admits("usr", directory=False)  # a file called usr is not a directory


def test_a_recipe_entry_admits_its_path_for_its_package_only() -> None:
    header = Entry("usr/src/xrt-*/driver/include/version.h", "recipe", "leftover", "xrt-npu")
    path = "usr/src/xrt-2.19.0/driver/include/version.h"
    assert admit.layout("xrt-npu", "amd64", (header,)).admits(path)
    assert not admit.layout("xrt-base", "amd64", (header,)).admits(path)
    assert not admit.layout("xrt-npu", "amd64").admits(path)
    below = Entry("usr/share/xrt/**", "recipe", "data")
    assert admit.layout("x", "amd64", (below,)).admits("usr/share/xrt/a/b/c")
    assert not admit.layout("x", "amd64", (below,)).admits("usr/share/xrt")


def test_an_architecture_independent_package_may_use_any_multiarch_directory() -> None:
    layout = admit.layout("libxrt-data", "all")
    assert layout.admits("usr/lib/aarch64-linux-gnu/xrt/module/x.so")
    assert layout.admits("usr/lib/x86_64-linux-gnu/xrt/module/x.so")


def test_landings_follow_links_physically_on_merged_and_split_usr() -> None:
    # bin/.. is usr on merged-/usr (bin -> usr/bin), the root on a split /usr
    merged, split = admit.landings("bin/../local/lib/modprobe.d/x.conf", {})
    assert (merged, split) == ("usr/local/lib/modprobe.d/x.conf", "local/lib/modprobe.d/x.conf")
    # a package's own directory link is followed
    links = {"opt/xilinx/xrt/conf": "/etc/modprobe.d"}
    assert admit.landings("opt/xilinx/xrt/conf/x.conf", links) == ("etc/modprobe.d/x.conf",) * 2
    # the last component is written, not followed
    assert admit.landings("opt/xilinx/xrt/conf", links) == ("opt/xilinx/xrt/conf",) * 2
    # a loop is reported as None, not followed for ever
    assert admit.landings("a/b/c", {"a": "a/b", "a/b": "a"}) == (None, None)


def test_link_targets_are_resolved_from_the_links_directory() -> None:
    targets = admit.link_targets("opt/xilinx/xrt/conf", "../../../bin/../local/lib/modprobe.d", {})
    assert targets[0] == "usr/local/lib/modprobe.d"
