from __future__ import annotations

from tests.conftest import REPO
from xdnaforge.hardware.host_checks import (
    MEMLOCK_FILES,
    distro_xrt,
    memlock,
    parse_memlock,
    stale_library_path,
)

# /proc/self/limits as Linux prints it (field 043: a non-root user with the 8 MiB default)
LIMITS_8M = """Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max locked memory         8388608              8388608              bytes
Max address space         unlimited            unlimited            bytes
"""
LIMITS_UNLIMITED = LIMITS_8M.replace(
    "8388608              8388608", "unlimited            unlimited"
)


def test_stale_xrt_ahead_of_opt_is_found() -> None:
    check = stale_library_path("/home/me/XRT/build/Release/opt/xilinx/xrt/lib:/opt/xilinx/xrt/lib")
    assert check is not None
    assert "/home/me/XRT/build/Release/opt/xilinx/xrt/lib" in check.message
    assert not check.blocking


def test_library_path_without_other_xrt_is_fine() -> None:
    assert stale_library_path("/opt/xilinx/xrt/lib:/home/me/xrt-old/lib") is None
    assert stale_library_path("/usr/local/cuda/lib64") is None
    assert stale_library_path("") is None


def test_distro_xrt_blocks_with_the_remove_command() -> None:
    check = distro_xrt({"libxrt2": "2.19.0-1", "xrt-base": "2.20.0"})
    assert check is not None
    assert check.blocking
    assert check.fix == "remove it first: sudo apt-get remove libxrt2"
    assert "without the amdxdna plugin" in check.message
    assert distro_xrt({"xrt-base": "2.20.0"}) is None


FORKY_FILES = {
    "libxrt2": ["/usr/lib/x86_64-linux-gnu/libxrt_coreutil.so.2"],
    "libxrt-npu2": ["/usr/lib/x86_64-linux-gnu/libxrt_driver_xdna.so.2"],
    "libxrt-utils": ["/usr/bin/xrt-smi"],
}


def test_a_distro_stack_with_the_plugin_is_a_stack_ours_would_conflict_with() -> None:
    installed = dict.fromkeys(FORKY_FILES, "1:2.25.0-4+b1")
    check = distro_xrt(installed, FORKY_FILES, distro_targets=("debian-forky-archive",))
    assert check is not None
    assert check.code == "distro-xrt-stack"
    assert "plugin /usr/lib/x86_64-linux-gnu/libxrt_driver_xdna.so.2" in check.message
    assert "programs load /usr/lib/x86_64-linux-gnu/libxrt_coreutil" in check.message
    assert "/usr/bin/xrt-smi comes first on PATH" in check.message
    assert check.fix.startswith(
        "to keep it, validate it instead of installing this build: "
        "`doit build --target debian-forky-archive`"
    )
    assert check.fix.endswith("sudo apt-get remove libxrt-npu2 libxrt-utils libxrt2")
    # installing the distro stack itself (or upgrading it) is no conflict
    assert distro_xrt(installed, FORKY_FILES, installing_distro=True) is None


def test_the_same_names_without_the_plugin_are_the_no_devices_trap() -> None:
    # Ubuntu 25.10's 2.19 (field log 045): judged by the files, not the names
    files = {k: v for k, v in FORKY_FILES.items() if k != "libxrt-npu2"}
    check = distro_xrt(dict.fromkeys(files, "2.19.0-1"), files)
    assert check is not None
    assert check.code == "distro-xrt"
    assert "xrt-smi finds no devices" in check.message


def test_memlock_parsing_and_verdicts() -> None:
    assert parse_memlock(LIMITS_8M) == (8388608, 8388608)
    assert parse_memlock(LIMITS_UNLIMITED) == (None, None)
    assert parse_memlock("nothing") is None
    low = memlock(parse_memlock(LIMITS_8M), None)
    assert low is not None
    assert "soft 8192 KiB, hard 8192 KiB; the NPU needs unlimited" in low.message
    for path in MEMLOCK_FILES:
        assert path in low.fix
    assert memlock(parse_memlock(LIMITS_UNLIMITED), None) is None
    assert memlock(parse_memlock(LIMITS_8M), 4096) is None
    assert memlock(parse_memlock(LIMITS_8M), 65536) is not None


def test_compat_warnings_name_the_rejected_firmware_and_the_fix() -> None:
    from xdnaforge import yamlfile
    from xdnaforge.compat import facts, resolver
    from xdnaforge.config.project import load_project
    from xdnaforge.hardware.host_checks import compat_warnings

    text = (
        'kernel: "6.18.9"\nnpu: {pci: "1022:17f0", revision: "0x11"}\n'
        'driver: {source: in-tree, drm_version: "0.1"}\nfirmware:\n'
        "  - {path: amdnpu/17f0_11/npu.sbin, target: npu.sbin.1.1.2.65}\n"
        '  - {path: amdnpu/17f0_11/npu.sbin.1.1.2.65, version: "1.1.2.65"}\n'
    )
    host = facts.parse_facts(yamlfile.parse(text, "facts.yaml"))
    recipes = load_project(REPO, {}).recipes
    verdict = resolver.resolve(host, facts.load_upstream(), [recipes["ubuntu26-compat"]])
    checks = compat_warnings(verdict, "ubuntu26-compat")
    assert [c.code for c in checks] == ["firmware-not-accepted", "contract-not-held"]
    assert not any(c.blocking for c in checks)
    assert "rejects protocol 7.2" in checks[0].message
    assert checks[0].fix.startswith("install firmware 1.0.0.166 for 17f0_11")
