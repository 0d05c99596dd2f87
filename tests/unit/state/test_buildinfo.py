"""The .buildinfo a build writes: Debian's format 1.0 fields from the records, read back the
same, a Debian .buildinfo read too, and malformed ones refused with the field."""

from __future__ import annotations

import pytest

from xdnaforge.state import buildinfo

PACKAGES = {
    "recipe": {"name": "synthetic", "sha256": "r" * 64},
    "packages": [
        {
            "package": "xrt-base",
            "version": "2.20.0",
            "architecture": "amd64",
            "size": 10,
            "sha256": "a" * 64,
            "file": "debs/xrt_202520.2.20.0_26.04-amd64-base.deb",
        },
        {
            "package": "xrt_plugin-amdxdna",
            "version": "2.20.0",
            "architecture": "amd64",
            "size": 20,
            "sha256": "b" * 64,
            "file": "debs/xrt_plugin.2.20.0_26.04-amd64-amdxdna.deb",
        },
    ],
}
BUILD = {
    "environment": {"name": "ubuntu-26.04", "description": "ubuntu-26.04 (rootfs of resolute)"},
    "steps": {
        "xrt": {
            "environment": {"SOURCE_DATE_EPOCH": "1764547200", "LC_ALL": "C.UTF-8", "HOME": "/h"},
            "tree": {"inside": "/xdnaforge/work"},
            "finished": "2026-12-01T10:00:00+00:00",
        }
    },
}
LOCK = {
    "repositories": [
        {
            "path": ".",
            "name": "xdna-driver",
            "url": "https://github.com/amd/xdna-driver.git",
            "resolved": "c" * 40,
        },
        {"path": "xrt", "url": "https://github.com/Xilinx/XRT.git", "resolved": "d" * 40},
    ],
    "patches": [{"set": "ubuntu26", "file": "0001-x.patch", "sha256": "e" * 64}],
}


def composed() -> buildinfo.BuildInfo:
    return buildinfo.compose(
        target="synthetic",
        packages=PACKAGES,
        build=BUILD,
        lock=LOCK,
        installed={"gcc-15": "15.2.0-16ubuntu1", "cmake": "4.2.3-2ubuntu2"},
        build_origin="Ubuntu",
        build_architecture="amd64",
    )


def test_the_fields_debian_defines_come_from_the_records() -> None:
    text = buildinfo.render(composed())
    assert text.startswith("Format: 1.0\nSource: xdna-driver\n")
    assert "Binary: xrt-base xrt_plugin-amdxdna\n" in text
    base = "xrt_202520.2.20.0_26.04-amd64-base.deb"
    assert f"Checksums-Sha256:\n {'a' * 64} 10 {base}\n {'b' * 64} 20 " in text
    assert "Build-Path: /xdnaforge/work\n" in text
    assert "Build-Date: Tue, 01 Dec 2026 10:00:00 +0000\n" in text
    assert 'Environment:\n LC_ALL="C.UTF-8"\n SOURCE_DATE_EPOCH="1764547200"\n' in text
    assert "HOME" not in text  # not part of what the build was made with
    assert (
        "Installed-Build-Depends:\n cmake (= 4.2.3-2ubuntu2),\n gcc-15 (= 15.2.0-16ubuntu1)\n"
        in text
    )


def test_what_is_written_reads_back_the_same() -> None:
    info = composed()
    assert buildinfo.parse(buildinfo.render(info)) == info
    assert info.package_of("xrt_plugin.2.20.0_26.04-amd64-amdxdna.deb") == "xrt_plugin-amdxdna"
    assert buildinfo.file_name(info) == "xdna-driver_2.20.0_amd64.buildinfo"


def test_a_debian_buildinfo_is_read_through_its_signature() -> None:
    text = (
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n"
        "Format: 1.0\nSource: xrt (2.21.75+dfsg-4)\nBinary: libxrt2 libxrt-npu2\n"
        "Architecture: amd64\nVersion: 1:2.21.75+dfsg-4\nChecksums-Sha256:\n"
        f" {'f' * 64} 1532368 libxrt2_2.21.75+dfsg-4_amd64.deb\n"
        "Build-Origin: Ubuntu\nBuild-Architecture: amd64\n"
        "Installed-Build-Depends:\n autoconf (= 2.72-3.1ubuntu1),\n libc6:amd64 (= 2.42-2ubuntu2)\n"
        "\n-----BEGIN PGP SIGNATURE-----\nxyz\n-----END PGP SIGNATURE-----\n"
    )
    info = buildinfo.parse(text)
    assert info.source == "xrt"
    assert info.package_of("libxrt2_2.21.75+dfsg-4_amd64.deb") == "libxrt2"
    assert info.installed_build_depends == (
        ("autoconf", "2.72-3.1ubuntu1"),
        ("libc6", "2.42-2ubuntu2"),
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Source: x\n", "no Format field"),
        ("Format: 0.2\nSource: x\nBinary: a\nVersion: 1\nChecksums-Sha256:\n x 1 a.deb\n", "0.2"),
        ("Format: 1.0\nSource: x\nBinary: a\nVersion: 1\nChecksums-Sha256:\n xyz\n", "size file"),
        (
            "Format: 1.0\nSource: x\nBinary: a\nVersion: 1\nChecksums-Sha256:\n a 1 a.deb\n"
            "Installed-Build-Depends:\n gcc (>= 15)\n",
            "gcc has no exact version",
        ),
        (" continued\n", "continuation line before any field"),
    ],
)
def test_a_malformed_buildinfo_is_refused_with_its_field(text: str, said: str) -> None:
    with pytest.raises(buildinfo.BuildInfoError, match=said):
        buildinfo.parse(text)
