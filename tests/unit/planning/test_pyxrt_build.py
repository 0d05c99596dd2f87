"""The pyxrt compile as data: XRT's pybind11 target's flags and libraries, the rpath only
where the loader would not look, the XRT release a package version names."""

from __future__ import annotations

from pathlib import Path

import pytest

from xdnaforge.planning.pyxrt_build import (
    compile_binding,
    missing_header,
    upstream_version,
    version_tags,
)


def test_the_compile_links_the_installed_coreutil_by_path_with_uuid_and_pthread() -> None:
    built = compile_binding(
        compiler="c++",
        source=Path("/src/xrt/src/python/pybind11/src/pyxrt.cpp"),
        work=Path("/b/pyxrt/cpython-312"),
        ext_suffix=".cpython-312-x86_64-linux-gnu.so",
        include_dirs=(Path("/usr/include"), Path("/v/pybind11/include"), Path("/py/include")),
        library=Path("/usr/lib/x86_64-linux-gnu/libxrt_coreutil.so.2"),
        rpath=None,
    )
    assert built.output == Path("/b/pyxrt/cpython-312/pyxrt.cpython-312-x86_64-linux-gnu.so")
    assert built.argv == (
        "c++",
        "-std=c++17",
        "-O2",
        "-DNDEBUG",
        "-g0",
        "-fPIC",
        "-fvisibility=hidden",
        "-shared",
        "-I/usr/include",
        "-I/v/pybind11/include",
        "-I/py/include",
        "/src/xrt/src/python/pybind11/src/pyxrt.cpp",
        "-o",
        "/b/pyxrt/cpython-312/pyxrt.cpython-312-x86_64-linux-gnu.so",
        "/usr/lib/x86_64-linux-gnu/libxrt_coreutil.so.2",
        "-luuid",
        "-pthread",
    )


def test_an_opt_stack_is_recorded_in_the_binding() -> None:
    built = compile_binding(
        compiler="c++",
        source=Path("/s/pyxrt.cpp"),
        work=Path("/w"),
        ext_suffix=".so",
        include_dirs=(),
        library=Path("/opt/xilinx/xrt/lib/libxrt_coreutil.so"),
        rpath=Path("/opt/xilinx/xrt/lib"),
    )
    assert built.argv[-1] == "-Wl,-rpath,/opt/xilinx/xrt/lib"


@pytest.mark.parametrize(
    ("package", "release"),
    [
        ("1:2.25.0-4+b1", "2.25.0"),  # Debian forky
        ("1:2.21.75+dfsg-4", "2.21.75"),  # Ubuntu 26.04
        ("2.20.0", "2.20.0"),  # ours (XRT's CPack version)
        ("unknown", None),
    ],
)
def test_the_release_a_package_version_names(package: str, release: str | None) -> None:
    assert upstream_version(package) == release


def test_release_tags() -> None:
    assert version_tags("2.25.0") == ("2.25.0", "v2.25.0")


def test_a_missing_header_names_what_brings_it() -> None:
    # g++ 12's wording, as a host without uuid-dev prints it
    output = (
        "In file included from /usr/include/xrt/xrt_uuid.h:12,\n"
        "/usr/include/xrt/detail/xrt_uuid.h:21:12: fatal error: uuid/uuid.h: "
        "No such file or directory\ncompilation terminated.\n"
    )
    found = missing_header(output)
    assert found is not None
    assert found[0] == "uuid/uuid.h"
    assert found[1].startswith("uuid-dev")
    assert missing_header("undefined reference to `xrt::bo::bo'") is None
