"""The XRT layout from the installed packages' file lists: /opt/xilinx/xrt, Debian's
multiarch /usr, a container's root; site.yaml's prefix; the default only when nothing says."""

from __future__ import annotations

from pathlib import Path

from xdnaforge.hardware.xrt_layout import find_layout, layout_from_files, system_lib_dir

MULTIARCH = "/usr/lib/x86_64-linux-gnu"
# Debian forky's 1:2.25.0-4+b1 file lists (dpkg-deb -c of the archive's packages), abridged
FORKY = {
    "libxrt2": [f"{MULTIARCH}/libxrt_coreutil.so.2.25.00", f"{MULTIARCH}/libxrt_coreutil.so.2"],
    "libxrt-npu2": [
        f"{MULTIARCH}/libxrt_driver_xdna.so.2",
        f"{MULTIARCH}/xrt/module/libxdp_core.so.2.25.00",
    ],
    "libxrt-utils": ["/usr/bin/xclbinutil", "/usr/bin/xrt-smi", "/usr/share/man/man1/xrt-smi.1.gz"],
    "python3-xrt": ["/usr/lib/python3/dist-packages/pyxrt.cpython-314-x86_64-linux-gnu.so"],
}
# ours / AMD's: a wrapper in bin/, the real tool in bin/unwrapped/, the plugin's validate data
OPT = {
    "xrt-base": [
        "/opt/xilinx/xrt/bin/unwrapped/xrt-smi",
        "/opt/xilinx/xrt/bin/xrt-smi",
        "/opt/xilinx/xrt/lib/libxrt_coreutil.so.2.20.0",
        "/opt/xilinx/xrt/python/pyxrt.cpython-312-x86_64-linux-gnu.so",
    ],
    "xrt_plugin-amdxdna": [
        "/opt/xilinx/xrt/lib/libxrt_driver_xdna.so.2.20.0",
        "/opt/xilinx/xrt/share/amdxdna/bins/xrt_smi_strx.a",
    ],
}


def test_debian_multiarch_layout() -> None:
    layout = layout_from_files(FORKY)
    assert layout is not None
    assert layout.bin_dir == Path("/usr/bin")
    assert layout.lib_dir == layout.plugin_dir == Path(MULTIARCH)
    assert layout.python_dir == Path("/usr/lib/python3/dist-packages")
    assert layout.pythons == ("pyxrt.cpython-314-x86_64-linux-gnu.so",)
    assert layout.archive_dir == Path("/usr/share/amdxdna/bins")
    assert layout.archives == ()  # Debian ships no xrt-smi validate archives
    assert layout.from_packages
    assert layout.source == "dpkg file lists of libxrt-npu2, libxrt-utils, libxrt2, python3-xrt"


def test_opt_layout_takes_the_wrapper_not_the_unwrapped_tool() -> None:
    layout = layout_from_files(OPT)
    assert layout is not None
    assert layout.xrt_smi == Path("/opt/xilinx/xrt/bin/xrt-smi")
    assert layout.plugin_dir == layout.lib_dir == Path("/opt/xilinx/xrt/lib")
    assert layout.archives == ("/opt/xilinx/xrt/share/amdxdna/bins/xrt_smi_strx.a",)


def test_a_stack_without_the_plugin_says_so() -> None:
    # Ubuntu 25.10's 2.19: libxrt2 and xrt-smi, no libxrt_driver_xdna (field log 045)
    layout = layout_from_files({k: v for k, v in FORKY.items() if k != "libxrt-npu2"})
    assert layout is not None
    assert layout.plugin_dir is None
    assert layout_from_files({"libfoo": ["/usr/lib/libfoo.so"]}) is None


def write_lists(root: Path, lists: dict[str, list[str]], arch: str = "") -> None:
    info = root / "var/lib/dpkg/info"
    info.mkdir(parents=True, exist_ok=True)
    for package, paths in lists.items():
        (info / f"{package}{arch}.list").write_text("/.\n" + "".join(f"{p}\n" for p in paths))


def test_found_under_a_root_from_dpkg_lists(tmp_path: Path) -> None:
    write_lists(tmp_path, FORKY, ":amd64")  # multi-arch packages' lists carry the arch
    layout = find_layout(tmp_path, ["libxrt2", "libxrt-npu2", "libxrt-utils"], site_prefix=None)
    assert layout.plugin_dir == Path(MULTIARCH)
    assert layout.source == "dpkg file lists of libxrt-npu2, libxrt-utils, libxrt2"


def test_the_recipes_packages_win_over_another_stack(tmp_path: Path) -> None:
    write_lists(tmp_path, {**FORKY, **OPT})
    ours = find_layout(tmp_path, ["xrt-base", "xrt_plugin-amdxdna"], site_prefix=None)
    assert ours.bin_dir == Path("/opt/xilinx/xrt/bin")
    theirs = find_layout(tmp_path, ["libxrt2", "libxrt-utils"], site_prefix=None)
    assert theirs.bin_dir == Path("/usr/bin")


def test_site_prefix_and_the_default(tmp_path: Path) -> None:
    write_lists(tmp_path, FORKY)
    named = find_layout(tmp_path, ["libxrt2"], site_prefix=Path("/srv/xrt"))
    assert (named.bin_dir, named.python_dir, named.source) == (
        Path("/srv/xrt/bin"),
        Path("/srv/xrt/python"),
        "site.yaml xrt_prefix",
    )
    assert not named.from_packages
    empty = find_layout(tmp_path / "nothing", ["xrt-base"], site_prefix=None)
    assert empty.lib_dir == Path("/opt/xilinx/xrt/lib")
    assert empty.source.startswith("assumed: no installed package")


def test_the_headers_and_the_package_holding_coreutil_are_found() -> None:
    with_dev = {**FORKY, "libxrt-dev": ["/usr/include/xrt/xrt_device.h"]}
    layout = layout_from_files(with_dev)
    assert layout is not None
    assert layout.include_dir == Path("/usr/include")
    assert layout.version_package == "libxrt2"
    opt = layout_from_files(OPT)
    assert opt is not None
    assert opt.include_dir is None  # xrt-base-dev not installed


def test_the_loaders_own_directories() -> None:
    assert system_lib_dir(Path("/usr/lib/x86_64-linux-gnu"))
    assert system_lib_dir(Path("/lib"))
    assert not system_lib_dir(Path("/opt/xilinx/xrt/lib"))
    assert not system_lib_dir(Path("/tmp/root/usr/lib/x86_64-linux-gnu"))
