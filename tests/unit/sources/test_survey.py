"""The survey on a synthetic tree of nested CMake projects, one finding each."""

from __future__ import annotations

from xdnaforge.sources.cmake import evaluate, parse_commands
from xdnaforge.sources.survey import flag_variables, link_findings, survey_tree
from xdnaforge.stages.survey import dependency_closure, parse_dpkg_search

TREE = {
    "top/src/CMakeLists.txt": """
cmake_minimum_required(VERSION 3.5...3.28)  # a range: fine with CMake 4
project(top)
include(CMake/settings.cmake)
if (XRT_ENABLE_WERROR)
  list(APPEND WARN_OPTS "-Werror")
endif()
if (WIN32)
  add_subdirectory(windows_only)
else()
  add_subdirectory(lib)
endif()
add_subdirectory(nested)
add_subdirectory(unused)
add_subdirectory(partial)
find_package(Boost REQUIRED COMPONENTS system filesystem)
""",
    "top/src/CMake/settings.cmake": "cmake_policy(VERSION 2.8)\n",
    "top/src/windows_only/CMakeLists.txt": "cmake_minimum_required(VERSION 2.6)\n",
    "top/src/lib/CMakeLists.txt": """
add_library(core x.c)
target_link_libraries(core PRIVATE crypt -luuid core_helpers ${VAR} Boost::filesystem)
add_library(core_helpers y.c)
""",
    "top/src/nested/CMakeLists.txt": """
cmake_minimum_required(VERSION 3.0)
include(cmake/linux.cmake)
function(enable_warnings)
  set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} -Werror")  # only if called
endfunction()
""",
    "top/src/nested/cmake/linux.cmake": "add_compile_options(-Wall -Wextra -Werror)\n",
    "top/src/unused/CMakeLists.txt": "cmake_minimum_required(VERSION 2.4)\n",
}
VARIABLES = flag_variables(("./build.sh", "-npu", "-opt", "-disable-werror"))


def _survey() -> tuple[list[tuple[str, str, bool]], object]:
    survey = survey_tree(
        ["top/src"],
        TREE.get,
        variables=VARIABLES,
        skip=("top/src/unused",),
        switches=("XRT_ENABLE_WERROR",),
    )
    return [(f.kind, f.where, f.warning) for f in survey.findings], survey


def test_build_sh_flags_become_cmake_variables() -> None:
    assert VARIABLES["XRT_NPU"] == "1"
    assert VARIABLES["XRT_ENABLE_WERROR"] == "0"
    assert VARIABLES["CMAKE_BUILD_TYPE"] == "Release"
    assert flag_variables(("cmake", "-DFOO:BOOL=ON"))["FOO"] == "ON"


def test_each_finding_of_the_nested_tree() -> None:
    findings, survey = _survey()
    assert findings == [
        ("cmake-policy", "top/src/CMake/settings.cmake:1", True),
        ("werror", "top/src/CMakeLists.txt:6", False),
        ("cmake-minimum", "top/src/nested/CMakeLists.txt:2", True),
        ("werror", "top/src/nested/cmake/linux.cmake:1", True),
        ("boost", "top/src/CMakeLists.txt:16", False),
    ]
    messages = {f.where: f.message for f in survey.findings}  # type: ignore[attr-defined]
    assert (
        "switched off by the recipe's flags (XRT_ENABLE_WERROR)"
        in messages["top/src/CMakeLists.txt:6"]
    )
    assert "do not reach it" in messages["top/src/nested/cmake/linux.cmake:1"]
    assert messages["top/src/CMakeLists.txt:16"] == "Boost components: system, filesystem"


def test_unused_submodules_false_branches_and_missing_files() -> None:
    _, survey = _survey()
    read = survey.files_read  # type: ignore[attr-defined]
    assert "top/src/unused/CMakeLists.txt" not in read
    assert "top/src/windows_only/CMakeLists.txt" not in read
    assert survey.not_found == ["top/src/partial/CMakeLists.txt"]  # type: ignore[attr-defined]


def test_linked_libraries_are_mapped_and_checked_against_the_dependency_list() -> None:
    _, survey = _survey()
    assert sorted(survey.libraries) == ["core_helpers", "crypt", "uuid"]  # type: ignore[attr-defined]
    findings = link_findings(
        survey,  # type: ignore[arg-type]
        {"crypt": "libcrypt-dev", "uuid": "uuid-dev", "core_helpers": None},
        provided={"uuid-dev"},
        how="static table",
    )
    assert [(f.message, f.warning) for f in findings] == [
        ("-lcrypt needs libcrypt-dev (static table); the recipe's dependency list lacks it", True),
        ("-luuid needs uuid-dev (static table)", False),
    ]


def test_conditions_three_valued() -> None:
    known = {"A": "1", "B": "0", "FLAVOR": "ubuntu"}
    assert evaluate(("A", "AND", "NOT", "B"), known) is True
    assert evaluate(("(", "A", "AND", "B", ")", "OR", "A"), known) is True
    assert evaluate(("${FLAVOR}", "MATCHES", "^(Ubuntu)"), known) is False
    assert evaluate(("UNKNOWN",), known) is None
    assert evaluate(("UNKNOWN", "AND", "B"), known) is False
    assert evaluate(("WIN32",), known) is False


def test_commands_span_lines_and_ignore_comments() -> None:
    commands = parse_commands('# foo(bar)\nset(X "a (b)"\n  c) # set(Y)\n')
    assert [(c.name, c.args, c.line) for c in commands] == [("set", ("X", "a (b)", "c"), 2)]


def test_dpkg_search_and_dependency_closure() -> None:
    found = parse_dpkg_search(
        "libcrypt-dev:amd64: /usr/lib/x86_64-linux-gnu/libcrypt.so\n"
        "libc6-dev:amd64: /usr/lib/x86_64-linux-gnu/libdl.a\n"
    )
    assert found == {"crypt": "libcrypt-dev", "dl": "libc6-dev"}
    status = (
        "libboost-filesystem-dev\tlibboost-filesystem1.92-dev, \t\n"
        "libboost-filesystem1.92-dev\tlibboost1.92-dev (= 1.92.0-1), \t\n"
        "g++\tg++-15 (>= 15), \t\n"
        "libc6-dev\tlibc6 (= 2.43), libcrypt-dev | libxcrypt-dev\t\n"
    )
    closure = dependency_closure(status, ["libboost-filesystem-dev"])
    assert "libboost-filesystem1.92-dev" in closure
    assert "libboost1.92-dev" in closure
    assert "libcrypt-dev" not in closure
