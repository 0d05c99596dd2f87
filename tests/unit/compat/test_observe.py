"""compat/observe.py: the plugin and the kernel log's lines read under a sysroot."""

from __future__ import annotations

from pathlib import Path

from xdnaforge.compat import observe


def test_the_plugin_is_read_where_xrt_installs_it(tmp_path: Path) -> None:
    assert observe.read_plugin(tmp_path) is None  # no XRT: nothing to judge
    lib = tmp_path / "usr/lib/x86_64-linux-gnu"
    lib.mkdir(parents=True)
    (lib / "libxrt_coreutil.so.2").write_bytes(b"")
    assert observe.read_plugin(tmp_path) is False  # XRT without the amdxdna plugin
    opt = tmp_path / "opt/xilinx/xrt/lib"
    opt.mkdir(parents=True)
    (opt / "libxrt_driver_xdna.so.2.21.75").write_bytes(b"")
    assert observe.read_plugin(tmp_path) is True


def test_the_saved_kernel_log_lines_are_kept_as_evidence(tmp_path: Path) -> None:
    (tmp_path / "var/log").mkdir(parents=True)
    (tmp_path / "var/log/kern.log").write_text(
        "kernel: usb 1-1: new device\n"
        "kernel: amdxdna 0000:c7:00.1: [drm] *ERROR* aie2_check_protocol: Incompatible "
        "firmware protocol major 7 minor 2\n"
    )
    host = observe.observe(tmp_path)
    assert len(host.kernel_log) == 1
    assert "minor 2" in host.kernel_log[0]


def test_the_installed_fastflowlm_release_is_read_for_its_known_failures(tmp_path: Path) -> None:
    (tmp_path / "var/lib/dpkg").mkdir(parents=True)
    (tmp_path / "var/lib/dpkg/status").write_text(
        "Package: fastflowlm\nStatus: install ok installed\nVersion: 0.9.50\n\n"
        "Package: vim\nStatus: install ok installed\nVersion: 9.1\n"
    )
    assert observe.read_userspace(tmp_path) == {"fastflowlm": "0.9.50"}
