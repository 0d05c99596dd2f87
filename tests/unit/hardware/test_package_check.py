"""The runtime gate's package expectations: from install.json for this root, else
packages.json, else presence only (and the recipe's plugin_version)."""

from __future__ import annotations

from xdnaforge.hardware.package_check import Expected, compare, expected_packages

ORDER = ("xrt-runtime", "xrt-npu", "xrt_plugin-amdxdna")
PACKAGES = {
    "packages": [
        {"package": "xrt-runtime", "version": "2.19.0"},
        {"package": "xrt-runtime", "version": "2.19.0"},
        {"package": "xrt-npu", "version": "2.19.0"},
        {"package": "xrt_plugin-amdxdna", "version": "2.19.0"},
    ]
}
INSTALL = {
    "root": "/",
    "state": "installed",
    "installed": [{"package": p, "version": "2.19.5"} for p in ORDER],
}


def versions(expected: tuple[Expected, ...]) -> dict[str, tuple[tuple[str, ...], str]]:
    return {e.package: (e.versions, e.source) for e in expected}


def test_install_record_of_this_root_comes_first() -> None:
    found = versions(expected_packages(ORDER, INSTALL, PACKAGES, "/", None))
    assert found["xrt-npu"] == (("2.19.5",), "install.json")
    elsewhere = versions(expected_packages(ORDER, INSTALL, PACKAGES, "/mnt/image", None))
    assert elsewhere["xrt-npu"] == (("2.19.0",), "packages.json")
    rolled_back = {**INSTALL, "state": "rolled back"}
    assert versions(expected_packages(ORDER, rolled_back, PACKAGES, "/", None))["xrt-npu"][1] == (
        "packages.json"
    )


def test_without_records_presence_only_and_the_recipes_plugin_version() -> None:
    found = versions(expected_packages(ORDER, None, None, "/", "2.19.1"))
    assert found == {
        "xrt-runtime": ((), "nothing recorded"),
        "xrt-npu": ((), "nothing recorded"),
        "xrt_plugin-amdxdna": (("2.19.1",), "the recipe"),
    }


def test_compare_names_missing_and_other_versions() -> None:
    expected = expected_packages(ORDER, None, PACKAGES, "/", None)
    assert compare(expected, {"xrt-runtime": "2.19.0", "xrt-npu": "2.20.0"}) == [
        "xrt-npu is 2.20.0, packages.json has 2.19.0",
        "xrt_plugin-amdxdna is not installed",
    ]
    installed = {"xrt-runtime": "2.19.0", "xrt-npu": "2.19.0", "xrt_plugin-amdxdna": "2.19.0"}
    assert compare(expected, installed) == []
