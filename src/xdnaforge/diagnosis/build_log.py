"""What a build log's first real error names: the package behind a missing header, the
library behind an undefined symbol.

Pure. Knowledge entries for build failures capture the header (`{header}`) or symbol
(`{symbol}`) a compiler or linker line names; `provider` says which library or package
ships it, so a diagnosis reads "boost/process/search_path.hpp: Boost" instead of
"compilation failed". The table is by path prefix (headers) and name prefix (symbols),
longest match first; what it does not know is left unnamed.
"""

from __future__ import annotations

# header path prefix -> who provides it (Debian/Ubuntu package names in brackets)
HEADERS = (
    ("boost/", "Boost (libboost-dev); a newer Boost may have moved or dropped it"),
    ("CL/", "the OpenCL headers (opencl-headers / ocl-icd-opencl-dev)"),
    ("pybind11/", "pybind11 (pybind11-dev or pip pybind11)"),
    ("Python.h", "the CPython headers (python3-dev)"),
    ("linux/", "the kernel headers of the running kernel (linux-headers-$(uname -r))"),
    ("drm/", "libdrm or the kernel's DRM uapi headers (libdrm-dev)"),
    ("openssl/", "OpenSSL (libssl-dev)"),
    ("gtest/", "GoogleTest (libgtest-dev)"),
    ("yaml-cpp/", "yaml-cpp (libyaml-cpp-dev)"),
    ("rapidjson/", "RapidJSON (rapidjson-dev)"),
    ("elf.h", "the C library headers (libc6-dev)"),
    ("libelf", "libelf (libelf-dev)"),
    ("gelf.h", "libelf (libelf-dev)"),
    ("ncurses", "ncurses (libncurses-dev)"),
    ("curses.h", "ncurses (libncurses-dev)"),
    ("uuid/", "libuuid (uuid-dev)"),
    ("sys/", "the C library headers of this platform (libc6-dev)"),
)
# symbol prefix -> the library that defines it
SYMBOLS = (
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


def provider(header: str = "", symbol: str = "") -> str:
    """Who provides `header` or `symbol`; "" when the table does not know."""
    if header:
        name = header.strip("<>\"' ")
        for prefix, who in sorted(HEADERS, key=lambda item: -len(item[0])):
            if name.startswith(prefix) or f"/{prefix}" in name:
                return who
    if symbol:
        name = symbol.strip("`'\u2018\u2019\" ")
        for prefix, who in sorted(SYMBOLS, key=lambda item: -len(item[0])):
            if name.startswith(prefix):
                return who
    return ""
