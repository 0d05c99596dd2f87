"""The keys an archive is trusted with, made checkable: the keyring the recipe or site names
by fingerprint is cut down to exactly those keys (the file apt, debootstrap and mmdebstrap
are given), and a Release file apt or debootstrap fetched is verified against them again
with gpgv, so env.json and lock.json say which key signed what.

Edge module: gpg and gpgv run through tools/gpgv.py. Refusals name the key, the keyring file
and where the key comes from; `judge` is the pure decision and is what the unit tests hold.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdnaforge.config.keyring import ArchiveKeyring
from xdnaforge.errors import StageFailed
from xdnaforge.tools import gpgv

RELEASE_FIELDS = ("Origin", "Suite", "Codename", "Date", "Valid-Until")


@dataclass(frozen=True, slots=True)
class Trusted:
    """The named keys found, and the keyring file holding only them."""

    keyring: ArchiveKeyring
    file: Path
    found: dict[str, str]  # fingerprint -> user id, of the named keys the file holds

    def record(self) -> dict[str, Any]:
        return {
            "fingerprints": list(self.keyring.fingerprints),
            "file": self.keyring.file,
            "from": self.keyring.source,
            "named_in": self.keyring.origin,
            "keys": dict(self.found),
            "trusted_file": str(self.file),
        }


def how_to_get(keyring: ArchiveKeyring) -> str:
    return f"the key comes from {keyring.source}; the keyring is named at {keyring.origin}"


def unnamed(what: str, where: str) -> StageFailed:
    return StageFailed(
        f"{what}: no archive key is named, so its Release file cannot be verified; "
        "nothing was created",
        hint=f"name the keys the archive signs with: keyring: {{file, fingerprints, from}} "
        f"under {where} (docs/stages.md, 'Verified archives')",
    )


def missing_keys(keyring: ArchiveKeyring, present: dict[str, str]) -> list[str]:
    """The named fingerprints the keyring file does not hold (pure)."""
    return [f for f in keyring.fingerprints if f not in present]


def trust(keyring: ArchiveKeyring | None, out: Path, what: str, where: str) -> Trusted:
    """Check that the named keyring holds the named keys and write `out` with only them."""
    if keyring is None:
        raise unnamed(what, where)
    for tool, package in (("gpg", "gnupg"), ("gpgv", "gpgv")):
        if shutil.which(tool) is None:
            raise StageFailed(
                f"{what}: {tool} is not installed, so the archive's signature "
                f"({', '.join(keyring.fingerprints)}) cannot be checked; nothing was created",
                hint=f"apt-get install {package}",
            )
    source = Path(keyring.file)
    if not source.is_file():
        raise StageFailed(
            f"{what}: the keyring {source} is not there, so the archive's key "
            f"{', '.join(keyring.fingerprints)} cannot be checked; nothing was created",
            hint=how_to_get(keyring),
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".gnupg-", dir=out.parent) as home:
        Path(home).chmod(0o700)
        present = gpgv.show_keys(Path(home), source, out.parent)
        lacking = missing_keys(keyring, present)
        found = {f: present[f] for f in keyring.fingerprints if f in present}
        if not found:
            raise StageFailed(
                f"{what}: the keyring {source} holds none of the keys named for the archive "
                f"({', '.join(lacking)}); nothing was created",
                hint=how_to_get(keyring),
            )
        out.unlink(missing_ok=True)
        gpgv.export(Path(home), source, tuple(found), out, out.parent)
    return Trusted(keyring=keyring, file=out, found=found)


def judge(signatures: gpgv.Signatures, named: tuple[str, ...]) -> tuple[str, ...] | str:
    """The named keys that signed (a tuple), or why the file is refused (a str). Pure."""
    good = tuple(f for f in signatures.valid if f in named)
    if good:
        return good
    if signatures.bad:
        return f"its signature is not good ({'; '.join(signatures.bad)})"
    if signatures.valid:
        return f"it is signed by {', '.join(signatures.valid)}, none of the named keys"
    if signatures.unknown:
        return (
            f"it is signed by key {', '.join(signatures.unknown)}, which the trusted keyring "
            "does not hold"
        )
    return "it carries no signature"


def release_files(lists: Path) -> list[tuple[Path, Path | None]]:
    """(signed file, detached data or None) per Release file apt left in a lists directory."""
    found: list[tuple[Path, Path | None]] = [(p, None) for p in sorted(lists.glob("*_InRelease"))]
    for detached in sorted(lists.glob("*_Release.gpg")):
        data = detached.with_name(detached.name.removesuffix(".gpg"))
        if data.is_file():
            found.append((detached, data))
    return found


def fields(text: str) -> dict[str, str]:
    """The Release file's identifying fields (the first paragraph)."""
    result: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("-----BEGIN PGP SIGNED"):
            continue
        if not line.strip() and result:
            break
        key, sep, value = line.partition(":")
        if sep and key in RELEASE_FIELDS:
            result[key] = value.strip()
    return result


def verify_release(trusted: Trusted, signed: Path, data: Path | None, what: str) -> dict[str, Any]:
    """gpgv on one Release file against the trusted keys: its record, or a refusal."""
    signatures = gpgv.verify(trusted.file, signed, signed.parent, data)
    verdict = judge(signatures, trusted.keyring.fingerprints)
    if isinstance(verdict, str):
        raise StageFailed(
            f"{what}: the Release file {signed.name} is refused: {verdict} (named: "
            f"{', '.join(trusted.keyring.fingerprints)})",
            hint=how_to_get(trusted.keyring),
        )
    body = (data or signed).read_bytes()
    return {
        "file": signed.name,
        **({"data": data.name} if data is not None else {}),
        **fields(body.decode(errors="replace")),
        "sha256": hashlib.sha256(body).hexdigest(),
        "signed_by": list(verdict),
        "verified_with": "gpgv",
    }


def verify_lists(trusted: Trusted, lists: Path, what: str) -> list[dict[str, Any]]:
    """Every Release file in an apt lists directory, verified; refused when there is none."""
    found = release_files(lists)
    if not found:
        raise StageFailed(
            f"{what}: apt left no Release file in {lists} to verify",
            hint="see the log; the archive's dists/<suite>/InRelease must be reachable",
        )
    return [verify_release(trusted, signed, data, what) for signed, data in found]
