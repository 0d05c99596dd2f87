from __future__ import annotations

from xdnaforge.tools.git import (
    cache_name,
    is_local,
    normalize_url,
    parse_apply_error,
    parse_gitlinks,
    parse_gitmodules,
    resolve_url,
)

# .gitmodules of XRT 2.20 (021204355e), shortened to three entries
GITMODULES = """[submodule "src/runtime_src/core/pcie/driver/linux/xocl/lib/libqdma"]
	path = src/runtime_src/core/pcie/driver/linux/xocl/lib/libqdma
	url = https://github.com/Xilinx/dma_ip_drivers.git
[submodule "src/runtime_src/core/common/aiebu"]
	path = src/runtime_src/core/common/aiebu
	url = https://github.com/Xilinx/aiebu.git
        branch = main-ge
[submodule "broken"]
	url = https://example.invalid/no-path.git
"""


def test_parse_gitmodules_reads_name_path_url() -> None:
    entries = parse_gitmodules(GITMODULES)
    assert [(e.name, e.path, e.url) for e in entries] == [
        (
            "src/runtime_src/core/pcie/driver/linux/xocl/lib/libqdma",
            "src/runtime_src/core/pcie/driver/linux/xocl/lib/libqdma",
            "https://github.com/Xilinx/dma_ip_drivers.git",
        ),
        (
            "src/runtime_src/core/common/aiebu",
            "src/runtime_src/core/common/aiebu",
            "https://github.com/Xilinx/aiebu.git",
        ),
    ]


def test_parse_gitlinks_keeps_only_submodules() -> None:
    listing = (
        "160000 commit 447f55f98fbad028024d67cef1d543a566da1037\tsrc/aiebu\n"
        "100644 blob 751aae2e3c7d1f0b6b5b4a1c2d3e4f5a6b7c8d9e\tsrc/CMakeLists.txt\n"
        "040000 tree 0123456789012345678901234567890123456789\tsrc/dir with space\n"
    )
    assert parse_gitlinks(listing) == {"src/aiebu": "447f55f98fbad028024d67cef1d543a566da1037"}


def test_relative_submodule_urls_resolve_against_the_parent() -> None:
    assert resolve_url("../aiebu.git", "https://github.com/Xilinx/XRT.git") == (
        "https://github.com/Xilinx/aiebu.git"
    )
    assert resolve_url("./sub", "/srv/m/xrt") == "/srv/m/xrt/sub"
    assert resolve_url("https://x/y.git", "https://a/b") == "https://x/y.git"


def test_normalize_url_ignores_dot_git_slash_and_host_case() -> None:
    assert normalize_url("https://GitHub.com/amd/xdna-driver.git/") == normalize_url(
        "https://github.com/amd/xdna-driver"
    )


def test_local_sources() -> None:
    assert is_local("/srv/mirrors/xrt.git")
    assert is_local("file:///srv/mirrors/xrt.git")
    assert is_local("mirrors/xrt")
    assert not is_local("https://github.com/Xilinx/XRT.git")
    assert not is_local("git@github.com:Xilinx/XRT.git")


def test_cache_names_are_stable_and_distinct() -> None:
    a = cache_name("https://github.com/Xilinx/XRT.git")
    assert a == cache_name("https://github.com/Xilinx/XRT")
    assert a == "github.com_Xilinx_XRT.git"
    assert a != cache_name("https://github.com/Xilinx/aiebu.git")


def test_parse_apply_error_names_file_and_hunk() -> None:
    stderr = (
        "error: patch failed: src/CMake/boostUtil.cmake:11\n"
        "error: src/CMake/boostUtil.cmake: patch does not apply\n"
    )
    failure = parse_apply_error(stderr)
    assert (failure.file, failure.line) == ("src/CMake/boostUtil.cmake", "11")
    missing = parse_apply_error("error: src/gone.h: No such file or directory\n")
    assert (missing.file, missing.line) == ("src/gone.h", None)
