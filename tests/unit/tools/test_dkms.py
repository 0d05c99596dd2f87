"""DKMS builds and installs of amdxdna, in DKMS 3's and DKMS 2's shapes."""

from __future__ import annotations

from xdnaforge.tools.dkms import stack_module_installed

DKMS3 = """Building module(s)......... done.
Signing module /var/lib/dkms/amdxdna/2.21.0/build/amdxdna.ko
Installing /lib/modules/6.17.0-14-generic/updates/dkms/amdxdna.ko.zst
Running depmod... done.
"""


def test_a_dkms3_build_and_install_of_amdxdna() -> None:
    assert stack_module_installed(DKMS3) == "DKMS built and installed amdxdna for 6.17.0-14-generic"


def test_a_failed_build_or_another_module_is_no_evidence() -> None:
    failed = (
        "Building module(s)...(bad exit status: 2)\nError! Bad return status for module build\n"
    )
    assert stack_module_installed(failed + DKMS3) is None
    assert stack_module_installed(DKMS3.replace("amdxdna.ko.zst", "wl.ko.xz")) is None
    assert stack_module_installed("Installing /lib/modules/6.8/updates/dkms/amdxdna.ko\n") is None


def test_dkms2_install_completed() -> None:
    text = "amdxdna.ko:\nRunning module version sanity check.\n\nDKMS: install completed.\n"
    assert stack_module_installed(text) == "DKMS built and installed amdxdna"
    # XRT's own modules, built by its package's postinst (an edge board's zocl)
    zocl = "Loading new xrt-2.6.0 DKMS files...\n\nzocl:\nRunning module version sanity check.\n"
    assert stack_module_installed(zocl + "DKMS: install completed.\n") == (
        "DKMS built and installed zocl"
    )
    assert stack_module_installed("wl.ko:\nDKMS: install completed.\n") is None


def test_xdna_drivers_own_dkms_script_says_it_installed_the_driver() -> None:
    # src/driver/tools/dkms_driver.sh, as 1.x and 2.21 spell it, and main
    for said in ("intalled", "installed"):
        text = f"depmod.....\nSuccessfully {said} and enabled DKMS for xrt-amdxdna/2.17.0\n"
        found = stack_module_installed(text)
        assert found == "xdna-driver's dkms_driver.sh installed and enabled xrt-amdxdna/2.17.0"
    assert stack_module_installed("Successfully installed and enabled DKMS for other/1.0\n") is None
