"""Reproducibility: compare the packages of two builds of the same inputs; pure.

Takes the contents of both builds' .deb files (debfile.read_deb with digests) and says, per
package, whether the files are identical, and if not which data files differ; `explain`
says why one file differs, from both builds' bytes: only in one build, an embedded build
date, an embedded build path, the ELF RUNPATH (or the string table CMake rewrites it in),
the same content in another order, or content (with the first difference and its ELF
section). Building the second time and running diffoscope are stages/rebuild.py's.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdnaforge.debs.debfile import DebContents
from xdnaforge.debs.elf import run_paths

# the causes `explain` names, in the order it tries them
CAUSES = (
    "only in one build",
    "build date",
    "embedded path",
    "RUNPATH",
    "ordering",
    "content",
)
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DATES = re.compile(
    rb"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} " + _MONTH.encode() + rb" \d{4} \d\d:\d\d:\d\d"
    rb"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d)?"
    rb"|" + _MONTH.encode() + rb" [ \d]\d \d{4}"  # __DATE__
    rb"|\b\d\d:\d\d:\d\d\b"  # __TIME__
    rb"|\b1[5-9]\d{8}(?:\d{9})?\b"  # seconds (or nanoseconds) since 1970
)
_IGNORED_SECTIONS = (".note.gnu.build-id", ".gnu_debuglink")  # follow from any other change

ARCHIVE_ONLY = "(archive metadata: member order, mtimes or owners; every file is the same)"


@dataclass(frozen=True, slots=True)
class Cause:
    path: str
    cause: str  # one of CAUSES
    detail: str


def _dates(data: bytes) -> Counter[bytes]:
    return Counter(match.group(0) for match in _DATES.finditer(data))


def _sections(data: bytes) -> list[tuple[str, int, int]] | None:
    """(name, offset, size) of an ELF file's sections, or None if it is not ELF."""
    if not data.startswith(b"\x7fELF"):
        return None
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        elf = ELFFile(io.BytesIO(data))
        return [
            (section.name, section["sh_offset"], section["sh_size"])
            for section in elf.iter_sections()
            if section["sh_type"] != "SHT_NOBITS"
        ]
    except (ELFError, ValueError, KeyError, IndexError, TypeError):
        return None


def _differing_sections(first: bytes, second: bytes) -> list[str] | None:
    """Names of the ELF sections whose bytes differ (None: not both ELF)."""
    a, b = _sections(first), _sections(second)
    if a is None or b is None:
        return None
    named_b = {name: (offset, size) for name, offset, size in b}
    names = []
    for name, offset, size in a:
        other = named_b.get(name)
        if other is None or first[offset : offset + size] != second[other[0] : other[0] + other[1]]:
            names.append(name or "(unnamed)")
    names += [name for name in named_b if name not in {n for n, _, _ in a}]
    return [n for n in names if n not in _IGNORED_SECTIONS]


def _first_difference(first: bytes, second: bytes) -> int:
    for at, (x, y) in enumerate(zip(first, second, strict=False)):
        if x != y:
            return at
    return min(len(first), len(second))


def _show(values: Sequence[bytes]) -> str:
    return ", ".join(repr(v.decode("utf-8", "replace")) for v in values[:2])


def explain(
    path: str, first: bytes | None, second: bytes | None, build_paths: Sequence[str]
) -> Cause:
    """Why `path` differs between two builds; `build_paths`: the trees both builds ran in
    (host paths and the canonical one), any of which a file may embed."""
    if first is None or second is None:
        which = "second" if first is None else "first"
        return Cause(path, "only in one build", f"only the {which} build has it")
    dates_a, dates_b = _dates(first), _dates(second)
    if dates_a != dates_b:
        only_a, only_b = list((dates_a - dates_b).keys()), list((dates_b - dates_a).keys())
        return Cause(
            path,
            "build date",
            f"embeds the build time: {_show(only_a) or 'nothing'} in the first build, "
            f"{_show(only_b) or 'nothing'} in the second",
        )
    for tree in sorted(build_paths, key=len, reverse=True):
        needle = tree.encode()
        if first.count(needle) != second.count(needle):
            return Cause(path, "embedded path", f"embeds the build tree's path {tree}")
    sections = _differing_sections(first, second)
    if sections is not None:
        paths_a, _ = run_paths(first)
        paths_b, _ = run_paths(second)
        if paths_a != paths_b:
            return Cause(
                path,
                "RUNPATH",
                f"RUNPATH {_show([p.value.encode() for p in paths_a])} vs "
                f"{_show([p.value.encode() for p in paths_b])}",
            )
        if sections and set(sections) <= {".dynstr", ".dynamic"} and paths_a:
            return Cause(
                path,
                "RUNPATH",
                "the same RUNPATH in a string table of another size (CMake rewrites the build "
                "tree's RPATH in place, keeping that path's length)",
            )
    if len(first) == len(second) and Counter(first) == Counter(second):
        lines_a, lines_b = first.splitlines(), second.splitlines()
        how = "lines" if sorted(lines_a) == sorted(lines_b) else "bytes"
        return Cause(path, "ordering", f"the same {how} in another order")
    at = _first_difference(first, second)
    where = f"first difference at byte {at}"
    if sections:
        where += f"; ELF sections differing: {', '.join(sections)}"
    return Cause(path, "content", where)


@dataclass(frozen=True, slots=True, kw_only=True)
class PackageComparison:
    package: str
    first_sha256: str
    second_sha256: str | None  # None: the second build did not make it
    differing: tuple[str, ...]  # data paths (or control fields) that differ

    @property
    def identical(self) -> bool:
        return self.first_sha256 == self.second_sha256


def _files(deb: DebContents) -> dict[str, str]:
    """path -> what identifies its content: a digest, a link target, or the entry kind."""
    files = {path: f"sha256:{digest}" for path, digest in deb.digests.items()}
    files.update({path: f"text:{text}" for path, text in deb.texts.items()})
    for entry in deb.entries:
        if entry.path not in files:
            files[entry.path] = f"{entry.kind}:{entry.link or ''}"
    return files


def compare_package(first: DebContents, second: DebContents | None) -> PackageComparison:
    if second is None:
        return PackageComparison(
            package=first.package,
            first_sha256=first.sha256,
            second_sha256=None,
            differing=("(not built the second time)",),
        )
    if first.sha256 == second.sha256:
        return PackageComparison(
            package=first.package,
            first_sha256=first.sha256,
            second_sha256=second.sha256,
            differing=(),
        )
    a, b = _files(first), _files(second)
    differing = [path for path in sorted(set(a) | set(b)) if a.get(path) != b.get(path)]
    differing += [
        f"control:{key}"
        for key in sorted(set(first.control) | set(second.control))
        if first.control.get(key) != second.control.get(key)
    ]
    return PackageComparison(
        package=first.package,
        first_sha256=first.sha256,
        second_sha256=second.sha256,
        differing=tuple(differing) or (ARCHIVE_ONLY,),
    )


def compare_builds(
    first: Mapping[str, DebContents], second: Mapping[str, DebContents]
) -> list[PackageComparison]:
    """Per package name of the first build, in name order."""
    return [compare_package(first[name], second.get(name)) for name in sorted(first)]


def summary(comparisons: list[PackageComparison]) -> tuple[bool, int]:
    """(reproducible, number of differing files over all packages)."""
    count = sum(len(c.differing) for c in comparisons if not c.identical)
    return all(c.identical for c in comparisons), count
