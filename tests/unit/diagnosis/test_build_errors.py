"""Build logs read by the tools' own formats across lines: the compiler a log names,
CMake's error blocks (find_package, pkg_check_modules, add_subdirectory, policy versions,
cmake_minimum_required, compilers, unknown commands, a project's message) and kbuild's
compiler check; and the first real error of each kind named with the fix that follows.

Inputs are short excerpts of real logs from public threads (each URL beside it), all from
threads opened before evaluate.CUTOFF, so the time split stays unseen, or synthetic
excerpts written from the tools' own message formats (the source file named beside each).
"""

from __future__ import annotations

import pytest

from xdnaforge.diagnosis.build_errors import (
    compiler,
    findings,
    kbuild_compilers,
    robot_warning,
    smatch_warning,
)
from xdnaforge.diagnosis.build_log import cmake_command, pkg_config_provider
from xdnaforge.diagnosis.cmake_errors import cmake_errors, cmake_version
from xdnaforge.diagnosis.evaluate import CUTOFF
from xdnaforge.diagnosis.log_verdict import FAILURE, UNKNOWN_FAILURE, judge

# https://github.com/m-tsudo/pt3/issues/19 (opened 2023-06-30): a DKMS make.log
KBUILD_DIFFERS = """make -C /lib/modules/6.4.0-060400-generic/build M=`pwd` V=0 modules
make[1]: Entering directory '/usr/src/linux-headers-6.4.0-060400-generic'
warning: the compiler differs from the one used to build the kernel
  The kernel was built by: x86_64-linux-gnu-gcc-12 (Ubuntu 12.3.0-1ubuntu1) 12.3.0
  You are using:           gcc-12 (Ubuntu 12.1.0-2ubuntu1~22.04) 12.1.0
  CC [M]  /var/lib/dkms/pt3_drv/0.0.1/build/pt3_pci.o
"""
# https://github.com/atar-axis/xpadneo/issues/143 (the load that followed such a build)
RELOCATION = """modprobe: ERROR: could not insert 'hid_xpadneo': Exec format error
[142076.283167] module: x86/modules: Skipping invalid relocation target, existing value \
is nonzero for type 1, loc 000000006152724f, val ffffffffc081da7d
"""
# https://github.com/ClangBuiltLinux/linux/issues/1572 (opened 2022-01-26)
CLANG_KERNEL_GCC_MODULE = """make[1]: Entering directory '/home/felix/kernel/5.16/linux-5.16.2'
warning: the compiler differs from the one used to build the kernel
  The kernel was built by: Debian clang version 13.0.1-+rc1-1~exp4
  You are using:           gcc (Debian 11.2.0-14) 11.2.0
  CC [M]  /var/lib/dkms/v4l2loopback/0.12.5/build/v4l2loopback.o
gcc: error: unrecognized command-line option \u2018-mretpoline-external-thunk\u2019
make[2]: *** [scripts/Makefile.build:287: /var/lib/dkms/v4l2loopback/0.12.5/build/\
v4l2loopback.o] Error 1
"""
# https://github.com/google-coral/edgetpu/issues/228 (opened 2020-10-05)
MODPOST = """  MODPOST 2 modules
ERROR: modpost: "__stack_chk_guard" [/var/lib/dkms/gasket/1.0/build/apex.ko] undefined!
make[1]: *** [scripts/Makefile.modpost:99: __modpost] Error 1
"""
# https://github.com/starfive-tech/linux/issues/64 (opened 2022-07-06)
MODPOST_LICENSE = (
    "ERROR: modpost: missing MODULE_LICENSE() in "
    "drivers/dma/dw-axi-dmac-starfive/starfive_dmaengine_memcpy.o\n"
)
# https://github.com/tomtom-international/cpp-dependencies/issues/67 (opened 2023-11-07)
FPHSA = """CMake Error at \
/usr/share/cmake-3.22/Modules/FindPackageHandleStandardArgs.cmake:230 (message):
  Could NOT find Boost (missing: Boost_INCLUDE_DIR filesystem system)
Call Stack (most recent call first):
  /usr/share/cmake-3.22/Modules/FindPackageHandleStandardArgs.cmake:594 (_FPHSA_FAILURE_MESSAGE)
  /usr/share/cmake-3.22/Modules/FindBoost.cmake:2360 (find_package_handle_standard_args)
  CMakeLists.txt:76 (find_package)
"""
# https://github.com/CoatiSoftware/Sourcetrail/issues/1032 (opened 2020-06-03)
FPHSA_FOUND = """CMake Error at \
/usr/share/cmake-3.16/Modules/FindPackageHandleStandardArgs.cmake:146 (message):
  Could NOT find Boost (missing: system program_options filesystem date_time)
  (found suitable version "1.73.0", minimum required is "1.67")
Call Stack (most recent call first):
  CMakeLists.txt:120 (find_package)
"""
# https://github.com/ara-software/AraSim/issues/5 (opened 2019-11-07)
PIC = (
    "/usr/bin/ld: Efficiencies.o: relocation R_X86_64_32 against .rodata can not be used "
    "when making a shared object; recompile with -fPIC\n"
)
# gcc -Werror inside the OpenCL ICD headers (the shape of Xilinx/XRT#9163, opened
# 2025-08-18: GCC 15.2.1 on Fedora 42), with CMake's compiler identification
GCC15_OPENCL = """-- The CXX compiler identification is GNU 15.2.1
[ 45%] Building CXX object core_common_objects.dir/api/xrt_kernel.cpp.o
In file included from /usr/include/CL/cl_ext.h:29,
/usr/include/CL/cl_icd.h:1247:33: error: 'pfn' declared here [-Werror=unused-parameter]
cc1plus: all warnings being treated as errors
make[2]: *** [core_common_objects.dir/build.make:76: xrt_kernel.cpp.o] Error 1
"""


def test_the_inputs_come_from_threads_opened_before_the_cut_off() -> None:
    # the dates in this module's comments; a later thread would tune on the unseen logs
    import re
    from pathlib import Path

    dates = re.findall(r"opened (\d{4}-\d\d-\d\d)", Path(__file__).read_text("utf-8"))
    assert dates
    assert all(date < CUTOFF for date in dates)


def test_kbuild_names_both_compilers_when_they_differ() -> None:
    assert kbuild_compilers(KBUILD_DIFFERS) == (
        "gcc-12 (Ubuntu 12.1.0-2ubuntu1~22.04) 12.1.0",
        "x86_64-linux-gnu-gcc-12 (Ubuntu 12.3.0-1ubuntu1) 12.3.0",
    )
    assert kbuild_compilers(MODPOST) is None


def test_an_invalid_relocation_after_a_build_by_another_compiler_names_both() -> None:
    verdict = judge(KBUILD_DIFFERS + RELOCATION)
    assert verdict.status == FAILURE
    codes = [d.code for d in verdict.diagnoses]
    # the mismatch first, the refused load it explains after it
    assert codes[0] == "module-compiler-differs"
    assert set(codes[1:]) == {"module-relocation", "module-insert-failed"}
    assert "x86_64-linux-gnu-gcc-12 (Ubuntu 12.3.0-1ubuntu1) 12.3.0" in verdict.diagnoses[0].cause
    relocation = next(d for d in verdict.diagnoses if d.code == "module-relocation")
    assert "the compiler differs" in relocation.fix


def test_a_module_compiled_by_another_compiler_than_a_clang_kernel() -> None:
    verdict = judge(CLANG_KERNEL_GCC_MODULE)
    codes = [d.code for d in verdict.diagnoses]
    assert codes[0] == "module-compiler-differs"
    assert "build-unrecognized-option" in codes
    assert "make-target-failed" not in codes  # make's messenger: its cause is named
    assert "Debian clang version 13.0.1" in verdict.diagnoses[0].cause
    unknown = next(d for d in verdict.diagnoses if d.code == "build-unrecognized-option")
    assert "-mretpoline-external-thunk" in unknown.cause


def test_alone_the_compiler_check_is_a_warning() -> None:
    verdict = judge(KBUILD_DIFFERS)
    assert [d.severity for d in verdict.diagnoses] == ["warning"]


def test_modpost_names_the_symbol_and_the_module() -> None:
    first = judge(MODPOST).diagnoses[0]
    assert first.code == "build-modpost-undefined"
    assert "__stack_chk_guard" in first.cause
    assert "apex.ko" in first.cause
    assert judge(MODPOST_LICENSE).diagnoses[0].code == "build-modpost-license"


def test_a_required_find_package_names_the_package_its_caller_and_what_is_missing() -> None:
    assert findings(FPHSA) == [
        "xdnaforge: CMake: find_package(Boost) failed at CMakeLists.txt:76: "
        "missing Boost_INCLUDE_DIR filesystem system"
    ]
    first = judge(FPHSA).diagnoses[0]
    assert first.code == "build-cmake-find-package"
    assert "libboost-dev" in first.cause
    assert "CMakeLists.txt:76" in first.cause


def test_find_package_says_the_version_asked_and_found() -> None:
    (line,) = findings(FPHSA_FOUND)
    assert "find_package(Boost 1.67) failed at CMakeLists.txt:120" in line
    assert "(found version 1.73.0)" in line


def test_cmake_blocks_behind_a_prefix_keep_their_message() -> None:
    prefixed = "".join(f"[2023-06-09T18:42:13.630Z] {line}\n" for line in FPHSA.splitlines())
    (error,) = cmake_errors(prefixed)
    assert error.caller == "CMakeLists.txt:76"
    assert error.message.startswith("Could NOT find Boost")


def test_an_optional_package_cmake_did_not_find_is_no_error() -> None:
    status = "-- Could NOT find GTest (missing: GTEST_LIBRARY GTEST_MAIN_LIBRARY)\n"
    assert findings(status) == []
    assert judge(status).diagnoses == ()


def test_a_non_pic_object_in_a_shared_object() -> None:
    first = judge(PIC).diagnoses[0]
    assert first.code == "build-ld-relocation"
    assert "R_X86_64_32" in first.cause
    assert "shared object" in first.cause
    assert "-fPIC" in first.fix


def test_gcc15_werror_in_the_opencl_headers_names_the_compiler() -> None:
    first = judge(GCC15_OPENCL).diagnoses[0]
    assert first.code == "build-werror-in-dependency"
    assert "GCC 15.2.1" in first.cause
    assert "-Wunused-parameter" in first.cause
    assert "opencl-headers" in first.cause


@pytest.mark.parametrize(
    ("log", "named"),
    [
        ("-- The CXX compiler identification is GNU 13.2.0\n", "GCC 13.2.0"),
        ("-- The C compiler identification is Clang 18.1.3\n", "Clang 18.1.3"),
        ("gcc version 14.2.0 (Debian 14.2.0-19)\n", "GCC 14.2.0"),
        ("cc1plus: all warnings being treated as errors\n", "GCC's C++ compiler (cc1plus)"),
        ("x.c:1:5: error: unused variable 'x' [-Werror,-Wunused-variable]\n", "Clang"),
        ("i586-slackware-linux-gcc -O2 -Werror -c -o a.o a.c\n", "i586-slackware-linux-gcc"),
        ("make: *** [all] Error 2\n", ""),
    ],
)
def test_the_compiler_a_log_names(log: str, named: str) -> None:
    assert compiler(log).startswith(named)


def test_clangs_werror_format_names_the_warning() -> None:
    line = "src/a.cpp:3:9: error: unused variable 'x' [-Werror,-Wunused-variable]\n"
    first = judge(line).diagnoses[0]
    assert first.code == "build-werror"
    assert "-Wunused-variable" in first.cause
    assert "Clang" in first.cause


def test_a_compiler_the_log_does_not_name_is_said_to_be_unnamed() -> None:
    line = "src/a.c:3:9: error: unused variable 'x' [-Werror=unused-variable]\n"
    assert "does not name the compiler" in judge(line).diagnoses[0].cause
    assert "{compiler}" not in judge(line).diagnoses[0].cause


def test_an_error_gcc14_makes_by_default_names_the_release() -> None:
    line = "a.c:9:12: error: initialization of 'int *' from 'long' [-Wint-conversion]\n"
    first = judge(line).diagnoses[0]
    assert first.code == "build-error-by-default"
    assert "GCC 14" in first.cause


def test_a_header_a_release_moved_names_the_release() -> None:
    # Xilinx/XRT#8982 (c015): boost/process/search_path.hpp after Boost 1.88
    line = (
        "xrt/a.cpp:20:10: fatal error: boost/process/search_path.hpp: No such file or directory\n"
    )
    cause = judge(line).diagnoses[0].cause
    assert "Boost 1.88" in cause
    assert "boost/process/v1/" in cause


@pytest.mark.parametrize(
    ("symbol", "library"),
    [
        ("std::filesystem::__cxx11::path::_M_split_cmpts()", "-lstdc++fs"),
        ("std::__cxx11::basic_string<char>::_M_create(unsigned long&, unsigned long)", "ABI"),
        ("clGetPlatformIDs", "libOpenCL"),
        ("testing::internal::AssertHelper::~AssertHelper()", "libgtest"),
    ],
)
def test_an_undefined_reference_names_its_library(symbol: str, library: str) -> None:
    line = f"/usr/bin/ld: main.o: in function `main': undefined reference to `{symbol}'\n"
    first = judge(line).diagnoses[0]
    assert first.code == "build-undefined-symbol"
    assert library in first.cause


def test_a_header_no_table_knows_is_said_to_be_unknown() -> None:
    cause = judge("a.c:1:10: fatal error: frobnicate.h: No such file or directory\n")
    assert "table does not name" in cause.diagnoses[0].cause
    assert "{provider}" not in cause.diagnoses[0].cause


def test_a_werror_of_a_leveled_warning_names_it() -> None:
    # GCC writes a warning with levels as -Werror=overloaded-virtual= (its '=' kept)
    line = "a.h:80:30: error: 'virtual void f()' was hidden [-Werror=overloaded-virtual=]\n"
    first = judge(line).diagnoses[0]
    assert first.code == "build-werror"
    assert "-Woverloaded-virtual," in first.cause
    inside = judge("/usr/include/CL/cl_icd.h:10:3: error: hidden [-Werror=overloaded-virtual=]\n")
    assert inside.diagnoses[0].code == "build-werror-in-dependency"


def test_a_tail_with_only_gccs_werror_summary_says_where_the_warning_is() -> None:
    verdict = judge("cc1plus: all warnings being treated as errors\nmake[2]: *** [x.o] Error 1\n")
    first = verdict.diagnoses[0]
    assert first.code == "build-werror-unnamed"
    assert "GCC's C++ compiler (cc1plus)" in first.cause
    # beside the warning's own line it only follows it
    codes = [d.code for d in judge(GCC15_OPENCL).diagnoses]
    assert codes.index("build-werror-in-dependency") < codes.index("build-werror-unnamed")


# Synthetic CMake error blocks in CMake's own formats (Kitware/CMake 03676b05: the message
# texts of Source/cm*.cxx and Modules/FindPkgConfig.cmake, laid out by cmMessenger: the
# header, the message indented by two, preformatted lines by four, then the Call Stack).
# cmMakefile.cxx ConfigureSubDirectory
NO_CMAKELISTS = """-- The CXX compiler identification is GNU 13.2.0
CMake Error at CMakeLists.txt:36 (add_subdirectory):
  The source directory

    /home/user/XRT/src/runtime_src/core/common/aiebu

  does not contain a CMakeLists.txt file.


-- Configuring incomplete, errors occurred!
"""
# cmAddSubDirectoryCommand.cxx, the message wrapped at CMake's 77 columns
NOT_A_DIRECTORY = """CMake Error at src/CMakeLists.txt:12 (add_subdirectory):
  add_subdirectory given source "third_party/googletest" which is not an
  existing directory.


-- Configuring incomplete, errors occurred!
"""
# cmPolicies.cxx (CMake 4.0 on), after `cmake --version`
POLICY_REMOVED = """cmake version 4.0.2

CMake suite maintained and supported by Kitware (kitware.com/cmake).
CMake Error at build/_deps/json-src/CMakeLists.txt:1 (cmake_minimum_required):
  Compatibility with CMake < 3.5 has been removed from CMake.

  Update the VERSION argument <min> value.  Or, use the <min>...<max> syntax
  to tell CMake that the project requires at least <min> but has been updated
  to work with policies introduced by <max> or earlier.

  Or, add -DCMAKE_POLICY_VERSION_MINIMUM=3.5 to try configuring anyway.


-- Configuring incomplete, errors occurred!
"""
# cmCMakeMinimumRequired.cxx
TOO_OLD = """CMake Error at CMakeLists.txt:4 (cmake_minimum_required):
  CMake 3.21 or higher is required.  You are running version 3.16.3


-- Configuring incomplete, errors occurred!
"""
# cmGlobalGenerator.cxx EnableLanguage
NO_CXX = """-- The CXX compiler identification is unknown
CMake Error at CMakeLists.txt:2 (project):
  No CMAKE_CXX_COMPILER could be found.

  Tell CMake where to find the compiler by setting either the environment
  variable "CXX" or the CMake cache entry CMAKE_CXX_COMPILER to the full path
  to the compiler, or to the compiler name if it is in the PATH.


-- Configuring incomplete, errors occurred!
"""
C_NOT_IN_PATH = """CMake Error at CMakeLists.txt:2 (project):
  The CMAKE_C_COMPILER:

    clang-19

  is not a full path and was not found in the PATH.
"""
# FindPkgConfig before 3.28, after pkg-config's --short-errors line (freedesktop pkg-config)
PKG_BEFORE_328 = """-- Checking for module 'libdrm'
--   No package 'libdrm' found
CMake Error at /usr/share/cmake-3.22/Modules/FindPkgConfig.cmake:603 (message):
  A required package was not found
Call Stack (most recent call first):
  /usr/share/cmake-3.22/Modules/FindPkgConfig.cmake:825 (_pkg_check_modules_internal)
  src/CMake/nativeLnx.cmake:30 (pkg_check_modules)
  CMakeLists.txt:102 (include)
"""
# FindPkgConfig 3.28 on, after pkgconf's lines (the second line of its error has no "-- ")
PKG_328 = """-- Checking for modules 'libdrm>=2.4.120;frob'
--   Package dependency requirement 'libdrm >= 2.4.120' could not be satisfied.
Package 'libdrm' has version '2.4.110', required version is '>= 2.4.120'
--   Package 'frob', required by 'virtual:world', not found
CMake Error at /usr/share/cmake-3.28/Modules/FindPkgConfig.cmake:619 (message):
  The following required packages were not found:

   - libdrm>=2.4.120
   - frob

Call Stack (most recent call first):
  /usr/share/cmake-3.28/Modules/FindPkgConfig.cmake:841 (_pkg_check_modules_internal)
  CMakeLists.txt:20 (pkg_check_modules)
"""
PKG_SEARCH = """-- Checking for one of the modules 'libudev'
CMake Error at /usr/share/cmake-3.25/Modules/FindPkgConfig.cmake:891 (message):
  None of the required 'libudev' found
Call Stack (most recent call first):
  CMakeLists.txt:8 (pkg_search_module)
"""
# cmMakefile.cxx ExecuteCommand
UNKNOWN_MODULE_COMMAND = """CMake Error at CMakeLists.txt:12 (check_cxx_compiler_flag):
  Unknown CMake command "check_cxx_compiler_flag".


-- Configuring incomplete, errors occurred!
"""
UNKNOWN_NEWER_COMMAND = """CMake Error at src/CMakeLists.txt:40 (cmake_path):
  Unknown CMake command "cmake_path".
Call Stack (most recent call first):
  /usr/share/cmake-3.16/Modules/CMakeDetermineSystem.cmake:1 (include)
"""
# a project's message(FATAL_ERROR): XRT's src/CMake/nativeLnx.cmake text, and one no
# catalogue knows
XRT_MESSAGE = """-- Looking for DRM
CMake Error at src/CMake/nativeLnx.cmake:20 (message):
  Looking for DRM - not found
Call Stack (most recent call first):
  CMakeLists.txt:102 (include)


-- Configuring incomplete, errors occurred!
"""
OWN_MESSAGE = """CMake Error at cmake/platform.cmake:33 (message):
  Frobnicator support requires a 64-bit build; configure with
  -DFROB_ENABLE=OFF
Call Stack (most recent call first):
  CMakeLists.txt:9 (include)
"""
# CMake's own module's message (CMakeTestCXXCompiler.cmake): no project check
CMAKE_MODULE_MESSAGE = """CMake Error at \
/usr/share/cmake-3.28/Modules/CMakeTestCXXCompiler.cmake:60 (message):
  The C++ compiler

    "/usr/bin/c++"

  is not able to compile a simple test program.
"""


def _first(log: str) -> tuple[str, str, str]:
    first = judge(log).diagnoses[0]
    return first.code, first.cause, first.fix


@pytest.mark.parametrize(
    ("log", "directory"),
    [
        (NO_CMAKELISTS, "/home/user/XRT/src/runtime_src/core/common/aiebu"),
        (NOT_A_DIRECTORY, "third_party/googletest"),
    ],
)
def test_a_missing_subdirectory_is_a_submodule_not_checked_out(log: str, directory: str) -> None:
    code, cause, fix = _first(log)
    assert code == "build-cmake-subdirectory-missing"
    assert directory in cause
    assert "CMakeLists.txt:36" in cause or "src/CMakeLists.txt:12" in cause
    assert "submodule" in cause
    assert "git submodule update --init --recursive" in fix


def test_cmake4_refuses_a_policy_version_below_3_5_and_names_the_cmake() -> None:
    (line,) = findings(POLICY_REMOVED)
    assert "cmake_minimum_required at build/_deps/json-src/CMakeLists.txt:1" in line
    code, cause, fix = _first(POLICY_REMOVED)
    assert code == "build-cmake-policy-version-removed"
    assert "build/_deps/json-src/CMakeLists.txt:1" in cause
    assert "CMake 4.0.2 (cmake version 4.0.2)" in cause
    assert "-DCMAKE_POLICY_VERSION_MINIMUM=3.5" in fix
    assert "CMake 3.x" in fix
    unnamed = POLICY_REMOVED.split("CMake suite maintained", 1)[1]
    assert "does not name the CMake version" in _first(unnamed)[1]


def test_a_cmake_older_than_the_sources_need_names_both_versions() -> None:
    code, cause, fix = _first(TOO_OLD)
    assert code == "build-cmake-too-old"
    assert "CMakeLists.txt:4" in cause
    assert "3.21 or higher" in cause
    assert "3.16.3" in cause
    assert "3.21" in fix


def test_no_cxx_compiler_says_to_install_one() -> None:
    code, cause, fix = _first(NO_CXX)
    assert code == "build-cmake-no-compiler"
    assert "C++" in cause
    assert "CMAKE_CXX_COMPILER" in cause
    assert "g++" in cause
    assert "build-essential" in fix
    code, cause, _ = _first(C_NOT_IN_PATH)
    assert code == "build-cmake-no-compiler"
    assert "clang-19 is not a full path and was not found in the PATH" in cause
    assert "gcc" in cause


def test_pkg_check_modules_names_the_module_its_caller_and_the_package() -> None:
    assert findings(PKG_BEFORE_328) == [
        "xdnaforge: CMake: pkg_check_modules at src/CMake/nativeLnx.cmake:30 found no "
        "pkg-config module libdrm (pkg-config: No package 'libdrm' found); libdrm.pc is in "
        "libdrm-dev (apt-file search libdrm.pc, Debian bug #996811)"
    ]
    code, cause, _ = _first(PKG_BEFORE_328)
    assert code == "build-cmake-pkg-config"
    assert "src/CMake/nativeLnx.cmake:30" in cause
    assert "libdrm-dev" in cause


def test_pkg_check_modules_of_cmake_3_28_says_the_versions_and_every_module() -> None:
    code, cause, _ = _first(PKG_328)
    assert code == "build-cmake-pkg-config"
    assert "CMakeLists.txt:20" in cause
    assert "modules libdrm (pkg-config: Package 'libdrm' has version '2.4.110'" in cause
    assert "frob (pkg-config: Package 'frob', required by 'virtual:world', not found)" in cause
    assert "apt-file search frob.pc" in cause  # a module the table does not know
    code, cause, _ = _first(PKG_SEARCH)
    assert code == "build-cmake-pkg-config"
    assert "pkg_search_module in CMakeLists.txt:8" in cause
    assert "libudev-dev" in cause


def test_an_unknown_command_names_it_and_where_it_comes_from() -> None:
    code, cause, fix = _first(UNKNOWN_MODULE_COMMAND)
    assert code == "build-cmake-unknown-command"
    assert "CMakeLists.txt:12 calls check_cxx_compiler_flag" in cause
    assert "include(CheckCXXCompilerFlag)" in cause
    assert "check_cxx_compiler_flag" in fix
    code, cause, _ = _first(UNKNOWN_NEWER_COMMAND)
    assert "cmake_path is a command of CMake 3.20 and later" in cause
    assert "CMake 3.16" in cause  # the modules' path names the CMake running


def test_a_projects_message_names_where_and_what_and_the_upstream_file() -> None:
    code, cause, fix = _first(XRT_MESSAGE)
    assert code == "build-cmake-project-error"
    assert "src/CMake/nativeLnx.cmake:20" in cause
    assert '"Looking for DRM - not found"' in cause
    # the catalogue places XRT's text in the very file that printed it
    assert "upstream: src/CMake/nativeLnx.cmake" in cause
    assert "XRT" in cause
    code, cause, fix = _first(OWN_MESSAGE)
    assert code == "build-cmake-project-error"
    assert "cmake/platform.cmake:33" in cause
    assert "configure with -DFROB_ENABLE=OFF" in cause
    assert "not in xdnaforge's upstream catalogue" in cause
    assert "cmake/platform.cmake:33" in fix


def test_cmakes_own_module_messages_stay_generic() -> None:
    assert findings(CMAKE_MODULE_MESSAGE) == []
    assert _first(CMAKE_MODULE_MESSAGE)[0] == "build-cmake-failed"


@pytest.mark.parametrize(
    "log",
    [NO_CMAKELISTS, POLICY_REMOVED, TOO_OLD, NO_CXX, PKG_328, UNKNOWN_MODULE_COMMAND, OWN_MESSAGE],
)
def test_a_named_cmake_error_leaves_out_the_generic_one(log: str) -> None:
    verdict = judge(log)
    assert verdict.status == FAILURE
    codes = [d.code for d in verdict.diagnoses]
    assert "build-cmake-failed" not in codes
    assert all("{" not in d.cause and "{" not in d.fix for d in verdict.diagnoses)


def test_cmake_blocks_behind_a_prefix_keep_pkg_configs_lines() -> None:
    prefixed = "".join(f"[cmake] {line}\n" for line in PKG_BEFORE_328.splitlines())
    (error,) = cmake_errors(prefixed)
    assert error.pkg_config == (("libdrm", "No package 'libdrm' found"),)
    assert error.called(("pkg_check_modules",)) == "src/CMake/nativeLnx.cmake:30"


@pytest.mark.parametrize(
    ("log", "named"),
    [
        (POLICY_REMOVED, "CMake 4.0.2"),
        (TOO_OLD, "CMake 3.16.3"),
        (PKG_BEFORE_328, "CMake 3.22"),
        (NO_CXX, ""),
    ],
)
def test_the_cmake_a_log_names(log: str, named: str) -> None:
    assert cmake_version(log).startswith(named)
    assert bool(cmake_version(log)) == bool(named)


def test_the_tables_say_what_they_do_not_know() -> None:
    assert pkg_config_provider("libdrm").startswith("libdrm-dev")
    assert "apt-file search frob.pc" in pkg_config_provider("frob")
    assert "include(FetchContent)" in cmake_command("FetchContent_Declare")  # any case
    assert "find_package(PkgConfig)" in cmake_command("pkg_check_modules")
    assert "does not say where frob_add comes from" in cmake_command("frob_add")


@pytest.mark.parametrize(
    "line",
    [
        # MLIR's tools and TableGen print the compilers' file:line:col format on any source
        "/src/mlir-aie/include/aie/Dialect/AIEVec/IR/AIEVecOps.td:453:11: error: Variable "
        "not defined: 'InferTypeOpAdaptor'",
        "module.aiecc.mlir:995:11: error: failed to legalize operation 'vector.contract'",
        "LLVM ERROR: unable to legalize instruction: %512:_(<2 x s32>) = G_MUL %378:_, %390:_",
        # Windows: cl.exe, MSBuild, the linker
        r"C:\xrt\src\device.cpp(118,5): error C2065: 'ENOTSUP': undeclared identifier",
        "LINK : fatal error LNK1181: cannot open input file 'xrt_coreutil.lib'",
        "C:\\VS\\Microsoft.CppCommon.targets(166,5): error MSB3073: The command exited",
        "ERROR: Failed building wheel for pyxrt",
        "configure: error: C++ compiler cannot create executables",
        "error: failed to legalize operation 'airrt.dma_memcpy_nd' that was explicitly marked "
        "illegal",
        "Error linking with xbridge",
    ],
)
def test_the_compilers_and_build_tools_own_error_formats_are_build_failures(line: str) -> None:
    verdict = judge(line + "\n")
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].family == "build"


@pytest.mark.parametrize(
    "line",
    [
        # clang's backend failure and LLVM's crash banner (Peano, the NPU's clang)
        "fatal error: error in backend: unable to legalize instruction: %14:_(<64 x s8>) = G_SHL",
        "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include"
        " the crash backtrace, preprocessed source, and associated run script.",
        # an LLVM, MLIR or NPU toolchain tool's own error line (WithColor::error)
        "opt: error: expected type",
        "aie-opt: error: unknown pass 'aie-localize-locks'",
        "ld.lld: error: undefined symbol: foo",
        # an MLIR diagnostic at an unknown location
        "<unknown>:0: error: 'aie.device' op Failed to lower to LLVM",
        # MLIR's Python bindings (aiecc.py, IRON): MLIRError's diagnostics
        "error: \"-\":27:19: 'aie.core' op When `elf_file` attribute is specified, core body"
        " must be empty",
    ],
)
def test_the_llvm_toolchains_own_failures_are_build_errors(line: str) -> None:
    verdict = judge(line)
    assert [d.family for d in verdict.diagnoses if d.severity == "error"][:1] == ["build"]


def test_aiecc_naming_the_step_that_failed_and_a_missing_chess_license_are_build_errors() -> None:
    step = "Error encountered while running: opt -O2 -strip -S prj/core_1_3.ll -o prj/x.ll\n"
    verdict = judge(step)
    assert [d.code for d in verdict.diagnoses] == ["build-aiecc-step-failed"]
    assert "ran opt for one step" in verdict.diagnoses[0].cause
    # another program's same words about a command that is not a compiler: no such finding
    other = judge("Error encountered while running: lm_eval --model hf\n")
    assert "build-aiecc-step-failed" not in [d.code for d in other.diagnoses]
    license = (
        "ERROR: License check out failed (nowait)\nNo such feature exists.\n"
        "Feature:       tct_chess_ipp\nFlexNet Licensing error:-5,234\n"
    )
    assert [d.code for d in judge(license).diagnoses] == ["build-toolchain-license"]


def test_a_build_sources_own_message_gets_the_familys_plain_entry() -> None:
    # a template the catalogue places in XRT's build.sh, a CMake file or xclbinutil, whose
    # words no generic entry of the family has: a build step, not the kernel's API
    for line, source in (
        ("Neither wget nor curl is installed; cannot download boost.tar.gz", "build.sh"),
        ("Failed to create symlink: /opt/xilinx/xrt/lib/libx.so", ".cmake"),
        ("ERROR: Unable to open the file for reading: 'mem_topology.json'", ".cxx"),
    ):
        found = judge(line + "\n").diagnoses[0]
        assert (found.code, found.family) == ("build-step-failed", "build"), line
        assert source in found.source, found.source
    # a located line with a generic entry's words still gets that entry
    assert judge("CMake Error at CMakeLists.txt:4 (find_package):\n").diagnoses[0].code != (
        "build-step-failed"
    )


def test_a_compiler_crash_without_an_error_line_is_a_build_error() -> None:
    log = (
        "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include"
        " the crash backtrace, preprocessed source, and associated run script.\n"
        "Stack dump:\n0.      Program arguments: clang++ -O2 --target=aie2-none-unknown-elf\n"
    )
    assert [d.code for d in judge(log).diagnoses] == ["build-toolchain-crashed"]


def test_another_programs_error_line_is_not_the_toolchains() -> None:
    # argparse's refusal keeps its own entry; a program named like no tool is not a build
    assert judge("flm: error: unrecognized arguments: --x").diagnoses[0].family == "usage"
    assert "build" not in {d.family for d in judge("optimizer: error: no input").diagnoses}


def test_an_unnamed_error_after_a_build_tools_lines_is_a_build_step_failing() -> None:
    # synthetic, from CPack's log (cmCPackGenerator) and a build script's own message after it
    log = (
        "CPack: Create package using DEB\n"
        "CPack: - package: /b/Release/xrt_plugin.2.20.0_24.04-amd64-amdxdna.deb generated.\n"
        "Installing XDNA plugin...\n"
        "Error: Could not find plugin package matching suffix: ubuntu24.04-x86_64-amdxdna.deb\n"
    )
    verdict = judge(log)
    assert verdict.status == FAILURE
    assert [d.code for d in verdict.diagnoses] == ["build-step-failed"]
    # the same error with no build before it has no family; a program's own step counter
    # ("[1/6] Generating test audio...") is no build tool's line
    assert judge(log.split("Installing", 1)[1]).status == UNKNOWN_FAILURE
    counted = "[1/6] Generating test audio...\nError: Could not find plugin package x\n"
    assert judge(counted).status == UNKNOWN_FAILURE


def test_the_kernel_test_robots_new_warning_is_the_changes_build_defect() -> None:
    report = (
        "All warnings (new ones prefixed by >>):\n\n"
        "   drivers/accel/amdxdna/aie2_pci.c:12:5: warning: no previous prototype "
        "[-Wmissing-prototypes]\n"
        ">> drivers/accel/amdxdna/amdxdna_ubuf.c:86:42: warning: unused variable "
        "'amdxdna_ubuf_vm_ops' [-Wunused-const-variable]\n"
        "      86 | static const struct vm_operations_struct amdxdna_ubuf_vm_ops = {\n"
    )
    assert robot_warning(report) == (
        "drivers/accel/amdxdna/amdxdna_ubuf.c:86:42: unused variable 'amdxdna_ubuf_vm_ops' "
        "[-Wunused-const-variable]"
    )
    verdict = judge(report)
    assert [d.code for d in verdict.diagnoses] == ["build-robot-new-warning"]
    assert "amdxdna_ubuf.c:86:42" in verdict.diagnoses[0].cause
    # the same warning in a build's own output is no robot's report of a new one
    assert robot_warning(report.replace("All warnings (new ones prefixed by >>):", "")) is None
    assert judge(report.split("\n", 2)[2].replace(">> ", "")).status != "failure"


def test_smatchs_warning_is_read_on_one_line_and_as_a_bug_report_quotes_it() -> None:
    mailed = (
        "leads to the following Smatch static checker warning:\n\n"
        "\tdrivers/accel/amdxdna/aie2_pci.c:904 aie2_query_ctx_status_array()\n"
        "\twarn: potential user controlled sizeof overflow\n"
    )
    said = (
        "drivers/accel/amdxdna/aie2_pci.c:904 aie2_query_ctx_status_array() warn: "
        "potential user controlled sizeof overflow"
    )
    assert smatch_warning(mailed) == said
    assert smatch_warning(said + "\n") == said
    verdict = judge(mailed)
    assert [d.code for d in verdict.diagnoses] == ["build-static-checker-warning"]
    # a compiler's error names its column, and GCC's "warning:" is no Smatch line
    assert smatch_warning("aie2_pci.c:904:5: error: 'x' undeclared\n") is None
    assert smatch_warning("aie2_pci.c:904 f() warning: x\n") is None
