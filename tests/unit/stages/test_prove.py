"""The "proven on" label: the distro and the GCC, Boost and CMake versions read from the root
the proofs ran in."""

from __future__ import annotations

from xdnaforge.stages.prove import label, versions

TOOLCHAIN = {
    "cc": "gcc (Ubuntu 15.2.0-16ubuntu1) 15.2.0",
    "cxx": "g++ (Ubuntu 15.2.0-16ubuntu1) 15.2.0",
    "cmake": "cmake version 4.2.3",
}
OS_RELEASE = 'PRETTY_NAME="Ubuntu 26.04 LTS"\nNAME="Ubuntu"\nVERSION_ID="26.04"\n'


def test_versions_come_from_the_tools_and_boosts_header() -> None:
    header = "#ifndef BOOST_VERSION_HPP\n#define BOOST_VERSION 109000\n"
    assert versions(TOOLCHAIN, header) == {"GCC": "15.2.0", "Boost": "1.90.0", "CMake": "4.2.3"}
    assert versions({"cc": "gcc: missing", "cmake": "cmake: missing"}, None) == {}


def test_the_label_names_the_distro_and_the_versions() -> None:
    found = versions(TOOLCHAIN, "#define BOOST_VERSION 108900")
    assert label(OS_RELEASE, found) == "Ubuntu 26.04 (GCC 15.2.0, Boost 1.89.0, CMake 4.2.3)"
    twin = 'NAME="Ubuntu"\nVERSION_ID="26.04"\nXDNAFORGE_TWIN_OF="Debian GNU/Linux forky/sid"\n'
    assert label(twin, {}) == "Ubuntu 26.04 (twin on Debian GNU/Linux forky/sid)"
