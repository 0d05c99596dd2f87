"""Where the installed XRT lives: the directory of `xrt-smi`, of `libxrt_coreutil` and of the
amdxdna plugin, of pyxrt, and where `xrt-smi validate` looks for its test archives; read from
the installed packages' file lists (dpkg's info/<package>.list), never assumed.

AMD's packages and ours put everything under /opt/xilinx/xrt ({bin,lib,python}); Debian and
Ubuntu's own (libxrt2, libxrt-npu2, libxrt-utils, python3-xrt) use the multiarch /usr layout
(usr/bin/xrt-smi, usr/lib/<triplet>/libxrt_driver_xdna.so.2, pyxrt in
usr/lib/python3/dist-packages). `site.yaml`'s `xrt_prefix` names an /opt-style prefix when
the stack was not installed by dpkg (a container image, a tarball); without either, the
default /opt/xilinx/xrt is assumed and the layout says so.

`layout_from_files` is pure; `find_layout` reads the file lists under a root.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

DEFAULT_PREFIX = Path("/opt/xilinx/xrt")
# packages that may hold an XRT stack, besides a recipe's install order: ours and AMD's,
# Debian/Ubuntu's (source package xrt)
KNOWN_PACKAGES = (
    "xrt-base",
    "xrt-npu",
    "xrt_plugin-amdxdna",
    "libxrt2",
    "libxrt-npu2",
    "libxrt-utils",
    "libxrt-utils-npu",
    "python3-xrt",
    "libxrt-coreutil2",
    "xrt-utils",
    "python3-pyxrt",
    # the headers a pyxrt build compiles against (doit pyxrt)
    "libxrt-dev",
    "xrt-base-dev",
)
PLUGIN_RE = re.compile(r"/libxrt_driver_xdna\.so[.0-9]*$")
COREUTIL_RE = re.compile(r"/libxrt_coreutil\.so[.0-9]*$")
PYXRT_RE = re.compile(r"/pyxrt[^/]*\.so$")
SONAME_RE = re.compile(r"/libxrt_coreutil\.so\.\d")
HEADER_RE = re.compile(r"/include/xrt/xrt_device\.h$")
# xrt-smi validate's data: xclbins (2.19/2.20 plugin) or VTD archives xrt_smi_*.a (2.21+),
# installed by the plugin under <prefix>/share/amdxdna/bins
ARCHIVE_DIR = "share/amdxdna/bins"


@dataclass(frozen=True, slots=True, kw_only=True)
class XrtLayout:
    bin_dir: Path  # where xrt-smi is
    lib_dir: Path  # where libxrt_coreutil is (the loader must find this one)
    plugin_dir: Path | None  # where libxrt_driver_xdna is; None: no plugin installed
    python_dir: Path | None  # where pyxrt*.so is; None: no binding installed
    archive_dir: Path  # where xrt-smi validate looks for its test data (<prefix>/share/...)
    archives: tuple[str, ...]  # the validate data the packages install there (paths)
    pythons: tuple[str, ...]  # pyxrt builds, by file name (pyxrt.cpython-314-...so)
    source: str  # how this was found: "dpkg file lists of libxrt2, ...", "site.yaml", ...
    from_packages: bool  # read from installed packages (else assumed from a prefix)
    # where xrt/xrt_device.h is (libxrt-dev, xrt-base-dev); None: no headers installed
    include_dir: Path | None = None
    version_package: str | None = None  # the package holding libxrt_coreutil (its version)

    @property
    def xrt_smi(self) -> Path:
        return self.bin_dir / "xrt-smi"

    def describe(self) -> str:
        return (
            f"xrt-smi in {self.bin_dir}, libxrt_coreutil in {self.lib_dir}, plugin in "
            f"{self.plugin_dir or '(none)'}, pyxrt in {self.python_dir or '(none)'} "
            f"({self.source})"
        )


# the loader's default directories (ld.so and Debian's multiarch ld.so.conf.d)
_SYSTEM_LIB = re.compile(r"/(usr/)?lib(64)?(/[a-z0-9_]+-linux-[a-z0-9_]+)?")


def system_lib_dir(path: Path) -> bool:
    """A directory the dynamic loader searches without being told (a /usr stack's)."""
    return _SYSTEM_LIB.fullmatch(str(path)) is not None


def prefix_layout(prefix: Path, source: str) -> XrtLayout:
    """The /opt-style layout under `prefix` ({bin,lib,python}), as assumed, not read."""
    return XrtLayout(
        bin_dir=prefix / "bin",
        lib_dir=prefix / "lib",
        plugin_dir=prefix / "lib",
        python_dir=prefix / "python",
        archive_dir=prefix / ARCHIVE_DIR,
        archives=(),
        pythons=(),
        source=source,
        from_packages=False,
        include_dir=prefix / "include",
    )


def _first_dir(paths: Iterable[str], pattern: re.Pattern[str]) -> Path | None:
    matches = sorted((p for p in paths if pattern.search(p)), key=lambda p: (p.count("/"), p))
    return Path(str(PurePosixPath(matches[0]).parent)) if matches else None


def layout_from_files(files: Mapping[str, Sequence[str]]) -> XrtLayout | None:
    """The layout the packages' files (package -> absolute paths) say; None if no xrt-smi and
    no libxrt_coreutil is among them."""
    every = [path for paths in files.values() for path in paths]
    # /opt/xilinx/xrt has bin/xrt-smi (a wrapper) and bin/unwrapped/xrt-smi: take the shallowest
    smi = _first_dir(every, re.compile(r"/bin/xrt-smi$"))
    core = _first_dir(every, COREUTIL_RE)
    if smi is None and core is None:
        return None
    prefix = (smi or core or DEFAULT_PREFIX).parent
    if core is None:
        core = prefix / "lib"
    holders = sorted(name for name, paths in files.items() if paths)
    archive_dir = prefix / ARCHIVE_DIR
    archives = tuple(sorted(p for p in every if p.startswith(f"{archive_dir}/")))
    pythons = tuple(sorted({PurePosixPath(p).name for p in every if PYXRT_RE.search(p)}))
    header = _first_dir(every, HEADER_RE)
    # the runtime package (libxrt2, xrt-base), not a -dev one holding only the .so link
    holder = next((name for name in holders if any(SONAME_RE.search(p) for p in files[name])), None)
    return XrtLayout(
        bin_dir=smi or prefix / "bin",
        lib_dir=core,
        plugin_dir=_first_dir(every, PLUGIN_RE),
        python_dir=_first_dir(every, PYXRT_RE),
        archive_dir=archive_dir,
        archives=archives,
        pythons=pythons,
        source=f"dpkg file lists of {', '.join(holders)}",
        from_packages=True,
        include_dir=header.parent if header is not None else None,
        version_package=holder,
    )


def package_files(admindir: Path, package: str) -> list[str]:
    """dpkg's file list of an installed package (`<p>.list` or `<p>:<arch>.list`)."""
    info = admindir / "info"
    exact = info / f"{package}.list"
    found = exact if exact.is_file() else next(iter(sorted(info.glob(f"{package}:*.list"))), None)
    if found is None:
        return []
    text = found.read_text(encoding="utf-8", errors="replace")
    return [line for line in text.splitlines() if line.startswith("/")]


def installed_files(root: Path, packages: Iterable[str]) -> dict[str, list[str]]:
    admindir = root / "var/lib/dpkg"
    return {name: package_files(admindir, name) for name in dict.fromkeys(packages)}


def find_layout(
    root: Path,
    packages: Sequence[str],
    *,
    site_prefix: Path | None,
) -> XrtLayout:
    """The installed stack's layout under `root`: `site_prefix` when site.yaml names one, else
    the file lists of `packages` (a recipe's install order) and the known XRT packages, else
    the default prefix."""
    if site_prefix is not None:
        return prefix_layout(site_prefix, "site.yaml xrt_prefix")
    # the recipe's own packages first: another stack installed beside it is not the one judged
    for names in (packages, KNOWN_PACKAGES):
        found = layout_from_files(installed_files(root, names))
        if found is not None:
            return found
    return prefix_layout(
        DEFAULT_PREFIX, f"assumed: no installed package under {root} lists xrt-smi"
    )
