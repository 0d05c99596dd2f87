"""Host contamination: run paths, pkg-config and CMake files that name the build host warn."""

from __future__ import annotations

import io
from pathlib import Path

from tests.debs import Spec, deb_bytes, elf_bytes
from xdnaforge.debs.debfile import read_deb_stream
from xdnaforge.debs.host_rules import host_paths
from xdnaforge.debs.rules import audit, wants_text

HOST = host_paths(
    [
        (Path("/srv/forge/build/synthetic/src"), "the source tree of synthetic"),
        (Path("/srv/forge/build"), "the build directory"),
    ]
)
CLEAN_CMAKE = (
    "set_target_properties(XRT::xrt_coreutil PROPERTIES\n"
    '  INTERFACE_INCLUDE_DIRECTORIES "${_IMPORT_PREFIX}/include"\n)\n'
)
PC = "prefix=/opt/xilinx/xrt\nCflags: -I${prefix}/include\n"


def findings(files: dict[str, str | bytes]) -> list[tuple[str, str, str, str]]:
    spec = Spec(package="xrt-base", files=files)
    deb = read_deb_stream(io.BytesIO(deb_bytes(spec)), "xrt-base.deb", wants_text)
    verdict = audit(deb, host=HOST)
    assert verdict.verdict == "pass"  # contamination warns; it is not a kernel payload
    return [(f.rule, f.severity, f.path, f.evidence) for f in verdict.findings]


def test_a_clean_package_has_no_host_findings() -> None:
    assert (
        findings(
            {
                "opt/xilinx/xrt/lib/libxrt_coreutil.so.2": elf_bytes(
                    "$ORIGIN/../lib:/opt/xilinx/xrt/lib"
                ),
                "opt/xilinx/xrt/bin/xrt-smi": elf_bytes(None),
                "opt/xilinx/xrt/lib/pkgconfig/xrt.pc": PC,
                "opt/xilinx/xrt/share/cmake/XRT/XRTConfig.cmake": CLEAN_CMAKE,
                "opt/xilinx/xrt/share/cmake/XRT/notes.cmake": "# made in /home/dev/xrt/build\n",
            }
        )
        == []
    )


def test_a_run_path_into_the_build_tree_names_the_most_specific_place() -> None:
    library = elf_bytes("/opt/xilinx/xrt/lib:/srv/forge/build/synthetic/src/xrt/build/Release/lib")
    assert findings({"opt/xilinx/xrt/lib/libxrt_core.so.2": library}) == [
        (
            "HOST-001",
            "warn",
            "opt/xilinx/xrt/lib/libxrt_core.so.2",
            "RUNPATH /opt/xilinx/xrt/lib:/srv/forge/build/synthetic/src/xrt/build/Release/lib: "
            "/srv/forge/build/synthetic/src/xrt/build/Release/lib "
            "is in the source tree of synthetic",
        )
    ]


def test_home_tmp_relative_and_empty_run_path_entries_are_host_paths() -> None:
    found = findings(
        {
            "usr/bin/xrt-a": elf_bytes("/home/dev/lib", "RPATH"),
            "usr/bin/xrt-b": elf_bytes("build/lib"),
            "usr/bin/xrt-c": elf_bytes("/opt/x/lib::/tmp/x"),
        }
    )
    assert [(rule, path, evidence) for rule, _, path, evidence in found] == [
        ("HOST-001", "usr/bin/xrt-a", "RPATH /home/dev/lib: /home/dev/lib is in a home directory"),
        (
            "HOST-001",
            "usr/bin/xrt-b",
            "RUNPATH build/lib: "
            "build/lib is a relative path, resolved against the current directory",
        ),
        (
            "HOST-001",
            "usr/bin/xrt-c",
            "RUNPATH /opt/x/lib::/tmp/x: (empty) is an empty entry, which means the current "
            "directory (and 1 more)",
        ),
    ]


def test_pkg_config_and_cmake_files_with_host_paths_warn_with_the_line() -> None:
    found = findings(
        {
            "usr/lib/x86_64-linux-gnu/pkgconfig/xrt.pc": (
                "prefix=/opt/xilinx/xrt\nLibs: -L/srv/forge/build/xrt/lib -lxrt_coreutil\n"
            ),
            "opt/xilinx/xrt/share/cmake/XRT/XRTTargets.cmake": (
                CLEAN_CMAKE
                + 'set(_dirs "/opt/xilinx/xrt/include;/tmp/xrt-stage/include")\n'
                + 'set(_more "/tmp/other")\n'
            ),
        }
    )
    assert [(rule, path, evidence) for rule, _, path, evidence in found] == [
        (
            "HOST-002",
            "usr/lib/x86_64-linux-gnu/pkgconfig/xrt.pc",
            "line 2: Libs: -L/srv/forge/build/xrt/lib -lxrt_coreutil "
            "(/srv/forge/build/xrt/lib: the build directory)",
        ),
        (
            "HOST-003",
            "opt/xilinx/xrt/share/cmake/XRT/XRTTargets.cmake",
            'line 4: set(_dirs "/opt/xilinx/xrt/include;/tmp/xrt-stage/include") '
            "(/tmp/xrt-stage/include: a temporary directory) (and 1 more lines)",
        ),
    ]


def test_an_unreadable_library_is_a_warning_not_a_pass_in_silence() -> None:
    damaged = elf_bytes("/opt/xilinx/xrt/lib")[:150]
    found = findings({"opt/xilinx/xrt/lib/libbroken.so": damaged})
    assert [(rule, path) for rule, _, path, _ in found] == [
        ("HOST-004", "opt/xilinx/xrt/lib/libbroken.so")
    ]
    assert found[0][3].endswith("its run paths were not checked")


def test_large_texts_and_libraries_are_read_in_one_pass() -> None:
    # the decompressed stream only moves forward: a text or library bigger than what it keeps
    # behind must still be read whole, once (a second read would have to seek back)
    cmake = CLEAN_CMAKE * 200 + 'set(_x "/home/dev/stage/include")\n'
    library = elf_bytes("/tmp/stage/lib") + bytes(50_000)
    found = findings(
        {
            "usr/lib/x86_64-linux-gnu/cmake/XRT/BigTargets.cmake": cmake,
            "usr/lib/x86_64-linux-gnu/libxrt_big.so.1": library,
        }
    )
    assert [(rule, path) for rule, _, path, _ in found] == [
        ("HOST-001", "usr/lib/x86_64-linux-gnu/libxrt_big.so.1"),
        ("HOST-003", "usr/lib/x86_64-linux-gnu/cmake/XRT/BigTargets.cmake"),
    ]


def test_usr_local_is_a_host_path_in_a_run_path_but_a_search_location_in_a_pc_file() -> None:
    found = findings(
        {
            "usr/bin/xrt-tool": elf_bytes("/usr/local/lib"),
            "usr/share/pkgconfig/xrt-sd.pc": "unit_path=/etc/systemd/system:/usr/local/lib/x\n",
        }
    )
    assert [(rule, path) for rule, _, path, _ in found] == [("HOST-001", "usr/bin/xrt-tool")]
    assert found[0][3].endswith("/usr/local/lib is in the host's locally installed software")
