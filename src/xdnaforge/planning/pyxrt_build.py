"""The compile of one pyxrt binding, as data: the compiler argv for XRT's pybind11 target
(src/python/pybind11: `pybind11_add_module(pyxrt src/pyxrt.cpp)` linked with xrt_coreutil,
uuid and pthread), the binding's file name, the XRT version a package version names. Pure.

XRT's own CMakeLists cannot be configured on its own: it uses the in-tree xrt_coreutil target,
XRT's LINUX_FLAVOR and install directory, and sets Python3_EXECUTABLE to $VIRTUAL_ENV/bin/python3
or /usr/bin/python3 over any choice (src/python/pybind11/CMakeLists.txt, XRT 2.21 and 2.25).
So the same target is compiled directly, for the interpreter the user names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# pybind11_add_module's defaults (hidden visibility, a shared module) with XRT's C++17;
# -g0: a binding installed into an environment carries no build paths in debug info
CXX_FLAGS = ("-std=c++17", "-O2", "-DNDEBUG", "-g0", "-fPIC", "-fvisibility=hidden", "-shared")
# XRT's CMakeLists: target_link_libraries(pyxrt PRIVATE xrt_coreutil uuid pthread)
LINK_AFTER = ("-luuid", "-pthread")
COMPILE_TIMEOUT_S = 3600.0
# a header the compile could not find -> what brings it (Debian/Ubuntu names), by prefix
HEADER_PACKAGES = (
    ("uuid/", "uuid-dev (XRT's xrt_uuid.h includes uuid/uuid.h)"),
    ("Python.h", "the interpreter's headers (python3.X-dev)"),
    ("pybind11/", "pybind11 (`PYTHON -m pip install pybind11`) or pybind11-dev"),
    ("xrt/", "the stack's headers: libxrt-dev, or the -dev package built with the stack"),
)
MISSING_RE = re.compile(r"fatal error: ([^:\s]+): No such file or directory")


@dataclass(frozen=True, slots=True, kw_only=True)
class BindingCompile:
    argv: tuple[str, ...]
    output: Path  # pyxrt<EXT_SUFFIX> in the work directory
    rpath: Path | None  # where the binding finds libxrt_coreutil when the loader would not


def binding_name(ext_suffix: str) -> str:
    """pyxrt.cpython-312-x86_64-linux-gnu.so: the name the interpreter imports."""
    return f"pyxrt{ext_suffix}"


def compile_binding(
    *,
    compiler: str,
    source: Path,
    work: Path,
    ext_suffix: str,
    include_dirs: Sequence[Path],
    library: Path,
    rpath: Path | None,
) -> BindingCompile:
    """The one compile-and-link of pyxrt.cpp against the installed libxrt_coreutil.

    The library is linked by its path (a distro's runtime package ships only the .so.2, the
    unversioned link is -dev's); its SONAME is what the binding records.
    """
    output = work / binding_name(ext_suffix)
    argv = [compiler, *CXX_FLAGS]
    argv += [f"-I{d}" for d in include_dirs]
    argv += [str(source), "-o", str(output), str(library), *LINK_AFTER]
    if rpath is not None:
        argv.append(f"-Wl,-rpath,{rpath}")
    return BindingCompile(argv=tuple(argv), output=output, rpath=rpath)


def missing_header(output: str) -> tuple[str, str] | None:
    """(header, what brings it) for the first header a failed compile did not find."""
    found = MISSING_RE.search(output)
    if found is None:
        return None
    header = found.group(1)
    brings = next((p for prefix, p in HEADER_PACKAGES if header.startswith(prefix)), None)
    return (header, brings or "the package that ships it")


def upstream_version(package_version: str) -> str | None:
    """The XRT release a package version is of: 1:2.25.0-4+b1 and 2.25.0 give 2.25.0,
    1:2.21.75+dfsg-4 gives 2.21.75; None when it names no X.Y.Z."""
    without_epoch = package_version.split(":", 1)[-1]
    found = re.match(r"(\d+\.\d+\.\d+)", without_epoch)
    return found.group(1) if found else None


def version_tags(version: str) -> tuple[str, ...]:
    """The tag names XRT's repository uses for a release (2.25.0; older ones as 202610.2.21.x
    carry a build number the package version does not, so they cannot be named from it)."""
    return (version, f"v{version}")
