"""What a build log's first real error names: the package behind a missing header, a
CMake package, a pkg-config module or a `std::` name, the library behind an undefined
symbol, the compiler package CMake did not find, and where a command CMake does not know
comes from.

Pure. Knowledge entries for build failures capture the header (`{header}`), symbol
(`{symbol}`) or CMake package (`{package}`) a compiler, linker or CMake line names;
`provider` says which library or package ships it, so a diagnosis reads
"boost/process/search_path.hpp: Boost" instead of "compilation failed". The tables are by
path prefix (headers) and name prefix (symbols), longest match first, and say where each
fact was read; what they do not know is said to be unknown, never guessed.

Sources: Debian/Ubuntu package names from Debian's package file lists; the rows marked
`dpkg -S` were checked on a Debian 13 machine (`dpkg -S /usr/include/<header>`). A header
a release moved names the thread that showed it and the release (Boost.Process v1 under
boost/process/v1/ from 1.88: Xilinx/XRT#8982, and the `BOOST_VERSION >= 108800` guards of
downstream ports).
The standard headers of `std::` names and the standard that added a header: cppreference,
https://en.cppreference.com/w/cpp/header.
pkg-config modules (`<module>.pc`): Debian's file lists (packages.debian.org/<release>/
amd64/<package>/filelist) or `dpkg -S '*.pc'` on a Debian 12 machine, as each row says;
the compilers: `dpkg -S /usr/bin/g++ /usr/bin/gcc` and build-essential's Depends there.
CMake's commands: the module that defines each (`function(<name>` in Kitware/CMake's
Modules/ at 03676b05) and the release that added a built-in one (`.. versionadded::` of
its Help/command/<name>.rst there).
"""

from __future__ import annotations

# header path prefix -> who provides it (Debian/Ubuntu package names in brackets)
HEADERS = (
    (
        "boost/process/",
        "Boost (libboost-dev); Boost 1.88 made Boost.Process v2 the default, and v1's headers "
        "(search_path.hpp, child.hpp, ...) are under boost/process/v1/ (Xilinx/XRT#8982)",
    ),
    ("boost/", "Boost (libboost-dev); a newer Boost may have moved or dropped it"),
    ("CL/", "the OpenCL headers (opencl-headers / ocl-icd-opencl-dev)"),
    ("pybind11/", "pybind11 (pybind11-dev or pip pybind11)"),
    ("Python.h", "the CPython headers (python3-dev; dpkg -S: libpython3.X-dev)"),
    (
        "linux/",
        "the kernel's headers: linux-libc-dev for a program (dpkg -S), "
        "linux-headers-$(uname -r) for a kernel module",
    ),
    ("drm/", "libdrm or the kernel's DRM uapi headers (libdrm-dev)"),
    ("openssl/", "OpenSSL (libssl-dev; dpkg -S)"),
    ("zlib.h", "zlib (zlib1g-dev; dpkg -S)"),
    ("libxml/", "libxml2 (libxml2-dev; dpkg -S)"),
    ("yaml.h", "libyaml (libyaml-dev; dpkg -S)"),
    ("curl/", "libcurl (libcurl4-openssl-dev or libcurl4-gnutls-dev)"),
    ("gtest/", "GoogleTest (libgtest-dev)"),
    ("yaml-cpp/", "yaml-cpp (libyaml-cpp-dev)"),
    ("rapidjson/", "RapidJSON (rapidjson-dev)"),
    ("elf.h", "the C library headers (libc6-dev; dpkg -S)"),
    ("libelf", "libelf (libelf-dev)"),
    ("gelf.h", "libelf (libelf-dev)"),
    ("ncurses", "ncurses (libncurses-dev; dpkg -S)"),
    ("curses.h", "ncurses (libncurses-dev; dpkg -S)"),
    ("uuid/", "libuuid (uuid-dev; dpkg -S)"),
    (
        "sys/endian.h",
        "a BSD C library: glibc has <endian.h> instead (libbsd-dev ships <bsd/sys/endian.h>)",
    ),
    ("sys/", "the C library headers of this platform (libc6-dev)"),
)
# CMake package name -> who provides it (find_package's first argument)
PACKAGES = (
    ("Boost", "Boost (libboost-dev, and libboost-<component>-dev for each component)"),
    ("boost_", "a Boost component (libboost-<component>-dev); Boost 1.89 dropped boost_system"),
    (
        "pybind11",
        "pybind11 (pybind11-dev, whose pybind11Config.cmake CMake reads, or pip pybind11)",
    ),
    ("GTest", "GoogleTest (libgtest-dev)"),
    ("OpenSSL", "OpenSSL (libssl-dev)"),
    ("OpenCL", "the OpenCL loader and headers (ocl-icd-opencl-dev, opencl-headers)"),
    ("PkgConfig", "pkg-config (pkgconf; dpkg -S /usr/bin/pkg-config)"),
    ("Python", "CPython (python3-dev for its Development component)"),
    ("ZLIB", "zlib (zlib1g-dev)"),
    ("LibXml2", "libxml2 (libxml2-dev)"),
    ("CURL", "libcurl (libcurl4-openssl-dev)"),
    ("Protobuf", "Protocol Buffers (libprotobuf-dev, protobuf-compiler)"),
    ("RapidJSON", "RapidJSON (rapidjson-dev)"),
    ("yaml-cpp", "yaml-cpp (libyaml-cpp-dev)"),
)
# a std:: name -> the standard header that declares it (cppreference)
STD_NAMES = {
    **dict.fromkeys(
        (
            "out_of_range",
            "runtime_error",
            "logic_error",
            "invalid_argument",
            "length_error",
            "range_error",
            "overflow_error",
            "domain_error",
        ),
        "stdexcept",
    ),
    **dict.fromkeys(
        ("unique_ptr", "shared_ptr", "weak_ptr", "make_unique", "make_shared"), "memory"
    ),
    **dict.fromkeys(
        (
            "uint8_t",
            "uint16_t",
            "uint32_t",
            "uint64_t",
            "int8_t",
            "int16_t",
            "int32_t",
            "int64_t",
            "uintptr_t",
            "intptr_t",
        ),
        "cstdint",
    ),
    "function": "functional",
    "numeric_limits": "limits",
    "optional": "optional",
    "string_view": "string_view",
    "variant": "variant",
    "thread": "thread",
    **dict.fromkeys(("mutex", "lock_guard", "unique_lock"), "mutex"),
    **dict.fromkeys(("ostringstream", "istringstream", "stringstream"), "sstream"),
    "array": "array",
    "setw": "iomanip",
}
# standard headers added after C++11, with their standard (cppreference)
STD_HEADERS_SINCE = {
    **dict.fromkeys(
        ("optional", "variant", "any", "string_view", "filesystem", "charconv"), "C++17"
    ),
    **dict.fromkeys(("version", "span", "format", "ranges", "concepts", "bit", "numbers"), "C++20"),
    **dict.fromkeys(("expected", "print", "stacktrace"), "C++23"),
}
UNKNOWN = "a package xdnaforge's table does not name (apt-file search {name} says which)"
# symbol prefix -> the library that defines it
SYMBOLS = (
    # libstdc++'s manual: std::filesystem needs -lstdc++fs before GCC 9, and a library
    # built with the other _GLIBCXX_USE_CXX11_ABI has std::__cxx11 names the caller lacks
    # (https://gcc.gnu.org/onlinedocs/libstdc++/manual/using.html, using_dual_abi.html)
    ("std::filesystem::", "libstdc++'s filesystem library (-lstdc++fs with GCC 8 and older)"),
    (
        "std::__cxx11::",
        "libstdc++ with the other C++ ABI (a library built with another "
        "_GLIBCXX_USE_CXX11_ABI or another compiler)",
    ),
    ("testing::", "GoogleTest's libgtest (-lgtest, libgtest-dev)"),
    ("google::protobuf::", "Protocol Buffers' libprotobuf (-lprotobuf, libprotobuf-dev)"),
    *(
        (prefix, "the OpenCL ICD loader's libOpenCL (-lOpenCL, ocl-icd-opencl-dev)")
        for prefix in ("clGet", "clCreate", "clEnqueue", "clRelease", "clBuildProgram")
    ),
    ("xrt::", "XRT's libxrt_coreutil (link with -lxrt_coreutil after the objects)"),
    ("xrt_core::", "XRT's libxrt_core / libxrt_coreutil"),
    ("xcl", "XRT's libxrt_core (the shim)"),
    ("boost::", "Boost (link the Boost component that defines it)"),
    ("OPENSSL_", "OpenSSL's libcrypto (libssl-dev; headers and library of one version)"),
    ("BIO_", "OpenSSL's libcrypto (libssl-dev)"),
    ("PEM_", "OpenSSL's libcrypto (libssl-dev)"),
    ("EVP_", "OpenSSL's libcrypto (libssl-dev)"),
    ("Py", "libpython (the module was built for another Python than the one loading it)"),
    ("_Py", "libpython (the module was built for another Python than the one loading it)"),
    ("pthread_", "libpthread (-pthread)"),
    ("dlopen", "libdl (-ldl)"),
    ("uuid_", "libuuid (-luuid)"),
    ("drm", "libdrm (-ldrm)"),
)


# pkg-config module (the name pkg_check_modules asks for) -> the Debian/Ubuntu package that
# ships its .pc file, and where that was read
PKG_CONFIG_MODULES = {
    "libdrm": "libdrm-dev (apt-file search libdrm.pc, Debian bug #996811)",
    "OpenCL": "ocl-icd-opencl-dev (Debian's file list: pkgconfig/OpenCL.pc)",
    "ocl-icd": "ocl-icd-dev (Debian's file list: pkgconfig/ocl-icd.pc)",
    "libudev": "libudev-dev (Debian's file list: pkgconfig/libudev.pc)",
    "libelf": "libelf-dev (Debian's file list: pkgconfig/libelf.pc)",
    **{
        module: f"{package} (dpkg -S {module}.pc)"
        for module, package in (
            ("zlib", "zlib1g-dev"),
            ("libffi", "libffi-dev"),
            ("openssl", "libssl-dev"),
            ("libssl", "libssl-dev"),
            ("libcrypto", "libssl-dev"),
            ("libxml-2.0", "libxml2-dev"),
            ("yaml-0.1", "libyaml-dev"),
            ("uuid", "uuid-dev"),
            ("python3", "libpython3-dev"),
            ("python3-embed", "libpython3-dev"),
            ("ncurses", "libncurses-dev"),
            ("ncursesw", "libncurses-dev"),
            ("libpng", "libpng-dev"),
            ("sqlite3", "libsqlite3-dev"),
            ("expat", "libexpat1-dev"),
            ("readline", "libreadline-dev"),
            ("liblzma", "liblzma-dev"),
            ("systemd", "systemd"),
        )
    },
}
PKG_CONFIG_UNKNOWN = (
    "a package xdnaforge's table does not name (apt-file search {name}.pc says which)"
)
# CMake's language -> (its name, the compiler and the Debian/Ubuntu packages that provide it)
COMPILERS = {
    "CXX": ("C++", "g++ (the g++ package, or build-essential, which depends on it; dpkg -S)"),
    "C": ("C", "gcc (the gcc package, or build-essential, which depends on it; dpkg -S)"),
}
# a command one of CMake's own modules defines -> how a CMakeLists makes it known
CMAKE_MODULE_COMMANDS = {
    **{
        name: f"include({module})"
        for module, names in (
            ("CheckCXXCompilerFlag", ("check_cxx_compiler_flag",)),
            ("CheckCCompilerFlag", ("check_c_compiler_flag",)),
            ("CheckIncludeFile", ("check_include_file",)),
            ("CheckIncludeFileCXX", ("check_include_file_cxx",)),
            ("CheckSymbolExists", ("check_symbol_exists",)),
            ("CheckCXXSourceCompiles", ("check_cxx_source_compiles",)),
            ("CheckFunctionExists", ("check_function_exists",)),
            ("CheckLibraryExists", ("check_library_exists",)),
            ("CheckIPOSupported", ("check_ipo_supported",)),
            ("CMakeDependentOption", ("cmake_dependent_option",)),
            (
                "CMakePackageConfigHelpers",
                ("write_basic_package_version_file", "configure_package_config_file"),
            ),
            ("ExternalProject", ("externalproject_add",)),
            ("FetchContent", ("fetchcontent_declare", "fetchcontent_makeavailable")),
            ("GoogleTest", ("gtest_discover_tests", "gtest_add_tests")),
            ("FindPackageHandleStandardArgs", ("find_package_handle_standard_args",)),
            ("CPackComponent", ("cpack_add_component",)),
        )
        for name in names
    },
    # FindPkgConfig defines them: find_package(PkgConfig) (pkg-config itself: pkgconf)
    "pkg_check_modules": "find_package(PkgConfig)",
    "pkg_search_module": "find_package(PkgConfig)",
}
# a built-in command -> the CMake release that added it
CMAKE_COMMANDS_SINCE = {
    "target_sources": "3.1",
    "include_guard": "3.10",
    "add_compile_definitions": "3.12",
    "add_link_options": "3.13",
    "target_link_options": "3.13",
    "target_precompile_headers": "3.16",
    "cmake_language": "3.18",
    "cmake_path": "3.20",
    "block": "3.25",
    "cmake_pkg_config": "3.31",
}


def pkg_config_provider(module: str) -> str:
    """The package that ships `module`.pc, or that the table does not know it."""
    return PKG_CONFIG_MODULES.get(module) or PKG_CONFIG_UNKNOWN.format(name=module)


def compiler_provider(language: str) -> tuple[str, str]:
    """(the language's name, the compiler and its packages) for CMake's CMAKE_<LANG>_COMPILER."""
    return COMPILERS.get(
        language, (language, f"the {language} compiler (xdnaforge's table names C and C++ only)")
    )


def cmake_command(name: str) -> str:
    """Where a command CMake did not know comes from, or that the tables do not know it."""
    key = name.lower()  # CMake's command names are case-insensitive
    if key in CMAKE_MODULE_COMMANDS:
        how = CMAKE_MODULE_COMMANDS[key]
        return f"CMake defines {name} in a module: {how} before the call makes it known"
    if key in CMAKE_COMMANDS_SINCE:
        return f"{name} is a command of CMake {CMAKE_COMMANDS_SINCE[key]} and later"
    return (
        f"xdnaforge's table does not say where {name} comes from: a CMake module, a "
        "dependency's CMake files or one of the project's own"
    )


def provider(header: str = "", symbol: str = "", package: str = "") -> str:
    """Who provides `header`, `symbol` or the CMake `package`; "" when the tables do not
    know (a header they do not know is said to be unknown: unknown_provider)."""
    if header:
        name = header.strip("<>\"' ")
        for prefix, who in sorted(HEADERS, key=lambda item: -len(item[0])):
            if name.startswith(prefix) or f"/{prefix}" in name:
                return who
        if "/" not in name and "." not in name:  # <version>, <cstdint>: the C++ library
            since = STD_HEADERS_SINCE.get(name)
            if since is None:
                return "the C++ standard library (libstdc++, with g++)"
            return (
                f"the C++ standard library (libstdc++, with g++); <{name}> is a {since} "
                f"header, which a compiler or a -std older than {since} does not have"
            )
    if package:
        for prefix, who in sorted(PACKAGES, key=lambda item: -len(item[0])):
            if package.startswith(prefix):
                return who
    if symbol:
        name = symbol.strip("`'\u2018\u2019\" ")
        for prefix, who in sorted(SYMBOLS, key=lambda item: -len(item[0])):
            if name.startswith(prefix):
                return who
    return ""


def unknown_provider(name: str) -> str:
    """What a diagnosis says of a header or package the tables do not know."""
    return UNKNOWN.format(name=name)


def std_header(name: str) -> str:
    """The standard header that declares `std::name` ("" when the table does not know)."""
    return STD_NAMES.get(name.removeprefix("std::"), "")
