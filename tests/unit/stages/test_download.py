"""Which digest a downloaded distro package must have: the recipe's pin, else the one
lock.json kept when the version was first seen; a refusal names both."""

from __future__ import annotations

from pathlib import Path

from xdnaforge.config.recipe import DistroArchive, DistroPackage
from xdnaforge.stages.download import check_digest

A, B = "a" * 64, "b" * 64
LOCK = Path("artifacts/t/lock.json")


def package(sha256: str) -> DistroPackage:
    return DistroPackage(package="libxrt2", version="1:2.25.0-4+b1", sha256=sha256)


def test_pinned_digest_is_held_against_the_file() -> None:
    assert check_digest(package(A), A, None, LOCK) == ""
    assert check_digest(package(A), B, None, LOCK) == (
        f"libxrt2 1:2.25.0-4+b1 has sha256 {B}; the recipe pins {A}"
    )


def test_unpinned_digest_is_trusted_once_then_kept() -> None:
    assert check_digest(package("unpinned"), A, None, LOCK) == ""
    assert check_digest(package("unpinned"), A, A, LOCK) == ""
    refusal = check_digest(package("unpinned"), B, A, LOCK)
    assert refusal.startswith(f"libxrt2 1:2.25.0-4+b1 has sha256 {B}; it had {A} when first seen")
    assert str(LOCK) in refusal


def test_sources_line_names_the_keyring_or_trusts_the_pins() -> None:
    stack = DistroArchive(
        url="http://deb.debian.org/debian",
        suite="forky",
        components=("main",),
        signed_by="/usr/share/keyrings/debian-archive-keyring.gpg",
        architecture="amd64",
        source_package="xrt",
        packages=(package(A),),
        left_out=(),
    )
    assert stack.sources_line() == (
        "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
        "http://deb.debian.org/debian forky main"
    )
    assert stack.sources_line("file:///srv/mirror").endswith("file:///srv/mirror forky main")
