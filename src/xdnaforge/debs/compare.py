"""Reproducibility: compare the packages of two builds of the same inputs; pure.

Takes the contents of both builds' .deb files (debfile.read_deb with digests) and says, per
package, whether the files are identical, and if not which data files differ. Building the
second time and running diffoscope are stages/rebuild.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from xdnaforge.debs.debfile import DebContents

ARCHIVE_ONLY = "(archive metadata: member order, mtimes or owners; every file is the same)"


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
