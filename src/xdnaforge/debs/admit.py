"""What a package may put on the system: the stack's layout, admitted by a positive list.

The audit does not look for bad places; it admits known ones. A path is admitted when it
matches an entry of the layout of the stacks the tool knows (XRT under /opt/xilinx, Debian's
and Ubuntu's multiarch /usr layout of the xrt source package, pyxrt in the Python
dist-packages, OpenCL vendor files, each package's own documentation), or an entry the
recipe adds with a reason (`audit.admit`); every other path blocks, whatever it is called.
Entries are as narrow as the layouts allow: the multiarch library directory admits the
stack's own libraries and its `xrt/` subdirectory, not `security/` or `gconv/` beside them.
A directory is admitted when it holds admitted paths (an ancestor of an entry's fixed part).

Patterns are package paths without a leading "/": `*` matches within one component, a final
`**` component everything below, `{a,b}` alternatives; `{package}` and `{triplet}` stand for
the audited package's name and its architecture's multiarch triplet.

One rule is absolute and no entry lifts it: a `.pth` file (or sitecustomize/usercustomize)
directly in a Python site directory, which the interpreter runs at every start.

`landings` says where a path lands once symlinks are followed the way the kernel follows
them (physically: `bin/..` is `usr` on a merged-/usr system), for both a merged and a split
/usr target, so a path is judged where dpkg writes it, not where its text points.
Pure: paths in, answers out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

# Debian's architectures and their multiarch triplets (dpkg-architecture -qDEB_HOST_MULTIARCH)
TRIPLETS = {
    "amd64": "x86_64-linux-gnu",
    "arm64": "aarch64-linux-gnu",
    "armhf": "arm-linux-gnueabihf",
    "i386": "i386-linux-gnu",
    "ppc64el": "powerpc64le-linux-gnu",
    "riscv64": "riscv64-linux-gnu",
    "s390x": "s390x-linux-gnu",
    "loong64": "loongarch64-linux-gnu",
}
# merged-/usr: the top-level links every current Debian and Ubuntu root has
MERGED_USR = {
    "bin": "usr/bin",
    "sbin": "usr/sbin",
    "lib": "usr/lib",
    "lib32": "usr/lib32",
    "lib64": "usr/lib64",
    "libx32": "usr/libx32",
}
# dpkg's package name syntax, plus the underscore of AMD's xrt_plugin-amdxdna (dpkg -i takes it)
_PACKAGE_NAME = re.compile(r"[a-z0-9][a-z0-9+._-]*")
SYMLOOP_MAX = 40  # the kernel's limit on links followed in one lookup
# the stack's own shared and static libraries in the multiarch directory (Debian forky's
# libxrt2, libxrt-npu2, libxrt-alveo2 and libxrt-dev at 2.25.0)
_LIBRARIES = (
    "libxrt*,libxilinxopencl*,libxdp*,libsched_em*,libaiebu*,libcert_dtrace*,"
    "libaws_mpd_plugin*,libazure_mpd_plugin*,libcontainer_mpd_plugin*"
)
# the stack's programs (xrt-smi, xbutil, the Alveo board tools, the XRT tools, aiebu's assembler)
_PROGRAMS = "xrt-*,xbutil,xbmgmt,xbmgmt2,xbflash.qspi,xbflash2,xbtop,xclbinutil,aiebu-*"
_SITE_HOOKS = re.compile(
    r"(^|/)(usr/(local/)?lib/python3(\.\d+)?/(dist|site)-packages)/([^/]*\.pth|(site|user)customize\.py)$"
)


@dataclass(frozen=True, slots=True)
class Entry:
    """One admitted pattern: where it comes from (a layout or the recipe) and why."""

    pattern: str
    origin: str  # "opt" (XRT's /opt/xilinx), "multiarch", "python", "packaging", "recipe"
    reason: str
    package: str | None = None  # a recipe entry may admit a path for one package only


_ANCESTOR = Entry("", "layout", "a directory that holds admitted paths")
LAYOUT: tuple[Entry, ...] = (
    # XRT's own prefix, as AMD's packages and ours install it (a real 2.19 -npu build:
    # opt/xilinx/{xrt,include,lib,aiebu})
    Entry("opt/xilinx/xrt/**", "opt", "XRT's prefix: bin, lib, include, python, share"),
    Entry("opt/xilinx/{include,lib,aiebu}/**", "opt", "XRT's -npu build's other trees"),
    Entry("usr/share/pkgconfig/xrt*.pc", "opt", "XRT's pkg-config file for /opt/xilinx"),
    Entry("etc/OpenCL/vendors/*.icd", "opt", "an OpenCL ICD file naming XRT's library"),
    # Debian's and Ubuntu's layout of the xrt source package
    Entry(f"usr/lib/{{triplet}}/{{{_LIBRARIES}}}", "multiarch", "the stack's libraries"),
    Entry("usr/lib/{triplet}/xrt/**", "multiarch", "XRT's modules and the NPU plugin"),
    Entry("usr/lib/{triplet}/pkgconfig/xrt*.pc", "multiarch", "XRT's pkg-config file"),
    Entry("usr/lib/{triplet}/cmake/{XRT,AIEBU,xrt,aiebu}/**", "multiarch", "CMake files"),
    Entry("usr/share/cmake/{XRT,AIEBU,xrt,aiebu}/**", "multiarch", "XRT's CMake files"),
    Entry(f"usr/bin/{{{_PROGRAMS}}}", "multiarch", "the stack's programs"),
    Entry("usr/include/{xrt,aiebu,experimental}/**", "multiarch", "XRT's headers"),
    Entry("usr/include/CL/cl_ext_xilinx*.h", "multiarch", "XRT's OpenCL extension header"),
    Entry("usr/include/hip/hip_xrt*.h", "multiarch", "XRT's HIP header"),
    Entry(
        f"usr/share/bash-completion/completions/{{{_PROGRAMS}}}",
        "multiarch",
        "completion of the stack's programs",
    ),
    Entry("usr/share/man/man*/*", "multiarch", "manual pages"),
    # pyxrt and XRT's Python tools
    Entry("usr/lib/python3/dist-packages/{pyxrt*,_xbtop}", "python", "pyxrt"),
    Entry("usr/lib/python3/dist-packages/{pyxrt*,_xbtop}/**", "python", "pyxrt's files"),
    # what every package may carry about itself
    Entry("usr/share/doc/{package}/**", "packaging", "the package's own documentation"),
    Entry("usr/share/lintian/overrides/{package}", "packaging", "its own lintian overrides"),
)


def _alternatives(pattern: str) -> list[str]:
    """`{a,b}` expanded (one level, as the layout writes them)."""
    match = re.search(r"\{([^{}]*,[^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    return [x for choice in match[1].split(",") for x in _alternatives(head + choice + tail)]


def _regex(pattern: str) -> str:
    parts = []
    components = pattern.split("/")
    for index, component in enumerate(components):
        if component == "**" and index == len(components) - 1:
            parts.append("[^/].*")
        else:
            parts.append("[^/]*".join(re.escape(piece) for piece in component.split("*")))
    return "/".join(parts)


def _prefixes(pattern: str) -> list[str]:
    """The patterns of the directories a match of `pattern` lies in ("a/b*/c": "a", "a/b*")."""
    components = pattern.split("/")
    return ["/".join(components[:end]) for end in range(1, len(components))]


@dataclass(frozen=True, slots=True)
class Layout:
    """The entries for one package, compiled: `admits(path)` is one regex match."""

    entries: tuple[Entry, ...]
    regexes: tuple[tuple[re.Pattern[str], Entry], ...]
    directories: re.Pattern[str]  # the directories admitted paths lie in

    def entry_for(self, path: str, directory: bool = False) -> Entry | None:
        """The entry that admits `path`, if one does."""
        if _SITE_HOOKS.search(path):
            return None
        for regex, entry in self.regexes:
            if regex.fullmatch(path):
                return entry
        if directory and self.directories.fullmatch(path):
            return _ANCESTOR
        return None

    def admits(self, path: str, directory: bool = False) -> bool:
        return self.entry_for(path, directory) is not None


def triplets(architecture: str) -> tuple[str, ...]:
    """The multiarch directories a package of this architecture may use ("all": any)."""
    if architecture in TRIPLETS:
        return (TRIPLETS[architecture],)
    return tuple(TRIPLETS.values())


@lru_cache(maxsize=64)
def layout(package: str, architecture: str, extra: tuple[Entry, ...] = ()) -> Layout:
    """The compiled layout for one package: the stack's entries and the recipe's."""
    chosen = [*LAYOUT, *(e for e in extra if e.package in (None, package))]
    # a name dpkg would not accept is no pattern: `*` or `{a,b}` in Package must not widen
    # "usr/share/doc/{package}/**" to every package's documentation
    own = package if _PACKAGE_NAME.fullmatch(package) else "(not a package name)"
    regexes = []
    directories: dict[str, None] = {}
    for entry in chosen:
        for triplet in triplets(architecture):
            text = entry.pattern.replace("{package}", own).replace("{triplet}", triplet)
            for pattern in _alternatives(text):
                regexes.append((re.compile(_regex(pattern)), entry))
                directories.update(dict.fromkeys(_regex(p) for p in _prefixes(pattern)))
    return Layout(tuple(chosen), tuple(regexes), re.compile("|".join(directories) or "(?!)"))


def _walk(path: str, links: Mapping[str, str], follow_last: bool = False) -> str | None:
    """Where `path` lands when every link on the way is followed, as the kernel does: a
    component is resolved before `..` leaves it; the last one only with `follow_last` (dpkg
    writes an entry at a link's place; opening a path follows it). None: links loop, more
    than SYMLOOP_MAX of them."""
    pending = [p for p in path.split("/") if p not in ("", ".")]
    done: list[str] = []
    followed = 0
    while pending:
        part = pending.pop(0)
        if part == "..":
            if done:
                done.pop()
            continue
        here = "/".join([*done, part])
        target = links.get(here)
        if target is None or (not pending and not follow_last):
            done.append(part)
            continue
        followed += 1
        if followed > SYMLOOP_MAX:
            return None
        if target.startswith("/"):
            done = []
        pending[:0] = [p for p in target.split("/") if p not in ("", ".")]
    return "/".join(done)


def landings(path: str, links: Mapping[str, str]) -> tuple[str | None, ...]:
    """Where dpkg writes `path` (its directories followed through `links`, the packages'
    own symlinks), on a merged-/usr target and on a split one."""
    return (_walk(path, {**MERGED_USR, **links}), _walk(path, dict(links)))


def link_targets(path: str, target: str, links: Mapping[str, str]) -> tuple[str | None, ...]:
    """Where a symlink at `path` pointing to `target` leads, on both kinds of target."""
    joined = target if target.startswith("/") else "/".join([*path.split("/")[:-1], target])
    # the last component is followed too: a link to a link into a kernel tree
    merged, split = {**MERGED_USR, **links}, dict(links)
    return (_walk(joined, merged, follow_last=True), _walk(joined, split, follow_last=True))
