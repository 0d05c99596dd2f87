"""The control-file reader: python-debian's values on every well-formed paragraph, errors
where python-debian passes over damage, and the relation names PkgRelation finds."""

from __future__ import annotations

import pytest
from debian.deb822 import Deb822, PkgRelation
from hypothesis import given
from hypothesis import strategies as st

from xdnaforge.debs.control import ControlError, parse, relation_names

REAL = """\
Package: linux-image-6.1.0-50-cloud-amd64
Source: linux-signed-amd64 (6.1.176+1)
Version: 6.1.176-1
Architecture: amd64
Maintainer: Debian Kernel Team <debian-kernel@lists.debian.org>
Installed-Size: 105283
Depends: kmod, linux-base (>= 4.3~), initramfs-tools (>= 0.120+deb8u2) | linux-initramfs-tool
Recommends: apparmor
Suggests: linux-doc-6.1, debian-kernel-handbook, grub-pc | grub-efi-amd64 | extlinux
Breaks: initramfs-tools (<< 0.120+deb8u2)
Section: kernel
Priority: optional
Homepage: https://www.kernel.org/
Description: Linux 6.1 for x86-64 cloud (signed)
 The Linux kernel 6.1 and modules for use on x86-64 cloud platforms.
 .
 This kernel lacks support for physical hardware.
"""


def python_debian(text: str) -> dict[str, str]:
    return {str(key): str(value) for key, value in Deb822(text).items()}


def test_a_real_control_file_reads_as_python_debian_reads_it() -> None:
    assert parse(REAL) == python_debian(REAL)
    assert parse(REAL)["Description"].endswith(
        "\n .\n This kernel lacks support for physical hardware."
    )


@pytest.mark.parametrize(
    "text",
    [
        "\n\n# made by hand\nPackage: a\nVersion:1\n",  # blank and comment lines first, no space
        "Package: a  \nDescription:   short  \n  long line  \n\tand a tab\n",  # white space kept
        "Package: a\r\nVersion: 1\r\n",  # CRLF
        "Package: a\n# a comment inside\nVersion: 1\n\n\n",  # blank lines after
        "Package : a\nEmpty:\nX-Odd-Name_2: b\n",  # space before the colon, an empty value
    ],
)
def test_edge_cases_read_as_python_debian_reads_them(text: str) -> None:
    assert parse(text) == python_debian(text)


_NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,12}", fullmatch=True)
_WORDS = st.from_regex(r"[!-~]([ !-~]{0,30}[!-~])?", fullmatch=True)


@given(
    st.dictionaries(
        _NAME.map(str.title), st.tuples(_WORDS, st.lists(_WORDS, max_size=3)), min_size=1
    )
)
def test_any_well_formed_paragraph_reads_as_python_debian_reads_it(
    fields: dict[str, tuple[str, list[str]]],
) -> None:
    names = {name.lower() for name in fields}
    if len(names) != len(fields):
        return  # the same name twice in other case is refused here (see below)
    text = "".join(
        f"{name}: {first}\n" + "".join(f" {more}\n" for more in rest)
        for name, (first, rest) in fields.items()
    )
    assert parse(text) == python_debian(text)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("Package: a\nthis is not a field\n", "line 2: not a 'Name: value' field"),
        (" continued\nPackage: a\n", "line 1: a continuation line before any field"),
        ("Package: a\n\nPackage: b\n", "line 3: a second paragraph"),
        ("Package: a\npackage: b\n", "line 2: a second package field"),
    ],
)
def test_damage_python_debian_passes_over_is_an_error_with_its_line(text: str, says: str) -> None:
    with pytest.raises(ControlError, match=says):
        parse(text)


@pytest.mark.parametrize(
    "text",
    [
        "kmod, linux-base (>= 4.3~), initramfs-tools (>= 0.120+deb8u2) | linux-initramfs-tool",
        "libc6:amd64 (>= 2.38) [amd64 arm64] <!nocheck>, python3:any,\n dkms | linux-headers-amd64",
        "a|b|c (<< 2)",
        " x ( >= 1 ) , y [ !i386 ]",
    ],
)
def test_relation_names_are_the_names_pkgrelation_finds(text: str) -> None:
    expected = [r["name"] for group in PkgRelation.parse_relations(text) for r in group]
    assert list(relation_names(text)) == expected
