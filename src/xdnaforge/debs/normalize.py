"""Normalise a .deb's archive metadata where the packager (CPack) does not; pure.

Two builds of the same inputs may make packages whose files are the same but whose archives
are not: member mtimes are the time the file was installed into CPack's staging tree, owners
are the builder's, entries follow the order the file system listed them, modes follow the
umask. `normalize` rewrites the control and data archives with every entry in name order
(parents before children), owned by root:root, its mtime clamped to SOURCE_DATE_EPOCH, group
and other write permission removed (what umask 022 gives), in GNU tar format, compressed as
before with fixed settings; the ar headers get the same treatment. The files' content is not
touched. The result depends only on the content, so it is the same for both builds.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
from dataclasses import dataclass

AR_MAGIC = b"!<arch>\n"
_TARS = ("control.tar", "data.tar")


class NormalizeError(ValueError):
    """The file is not a .deb this module can rewrite (the message says why)."""


@dataclass(frozen=True, slots=True)
class Normalized:
    data: bytes
    changes: tuple[str, ...]  # what differed from the normal form, e.g. "mtimes clamped (12)"


@dataclass(frozen=True, slots=True)
class _ArMember:
    name: str
    mtime: int
    uid: int
    gid: int
    mode: int
    content: bytes


def _ar_members(data: bytes) -> list[_ArMember]:
    if not data.startswith(AR_MAGIC):
        raise NormalizeError("not a .deb (no ar archive signature)")
    members = []
    at = len(AR_MAGIC)
    while at < len(data):
        header = data[at : at + 60]
        if len(header) < 60 or header[58:60] != b"`\n":
            raise NormalizeError(f"damaged ar member header at byte {at}")
        try:
            name = header[:16].decode("ascii").strip().rstrip("/")
            mtime, uid, gid = (
                int(header[a:b].strip() or b"0") for a, b in ((16, 28), (28, 34), (34, 40))
            )
            mode = int(header[40:48].strip() or b"0", 8)
            size = int(header[48:58].strip())
        except (UnicodeDecodeError, ValueError):
            raise NormalizeError(f"damaged ar member header at byte {at}") from None
        content = data[at + 60 : at + 60 + size]
        if len(content) < size:
            raise NormalizeError(f"truncated: member {name} ends early")
        members.append(_ArMember(name, mtime, uid, gid, mode, content))
        at += 60 + size + (size % 2)
    return members


def _ar_header(name: str, mtime: int, size: int) -> bytes:
    header = f"{name:<16}{mtime:<12}{0:<6}{0:<6}{0o100644:<8o}{size:<10}".encode("ascii") + b"`\n"
    assert len(header) == 60
    return header


def _decompress(name: str, content: bytes) -> tuple[str, bytes]:
    suffix = name.split(".tar", 1)[1]
    try:
        if suffix == "":
            return suffix, content
        if suffix == ".gz":
            return suffix, gzip.decompress(content)
        if suffix == ".xz":
            return suffix, lzma.decompress(content, format=lzma.FORMAT_XZ)
        if suffix == ".lzma":
            return suffix, lzma.decompress(content, format=lzma.FORMAT_ALONE)
        if suffix == ".bz2":
            return suffix, bz2.decompress(content)
        if suffix == ".zst":
            import zstandard

            return suffix, zstandard.ZstdDecompressor().decompressobj().decompress(content)
    except (OSError, EOFError, lzma.LZMAError, ValueError) as error:
        raise NormalizeError(f"{name}: cannot decompress ({error})") from None
    raise NormalizeError(f"{name}: unknown compression {suffix!r}")


def _compress(suffix: str, data: bytes) -> bytes:
    """Fixed settings: the same archive always gives the same bytes."""
    if suffix == "":
        return data
    if suffix == ".gz":
        return gzip.compress(data, compresslevel=9, mtime=0)
    if suffix == ".xz":
        return lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6)
    if suffix == ".lzma":
        return lzma.compress(data, format=lzma.FORMAT_ALONE, preset=6)
    if suffix == ".bz2":
        return bz2.compress(data, 9)
    import zstandard

    return zstandard.ZstdCompressor(level=19, write_checksum=True).compress(data)


def _key(name: str) -> tuple[str, ...]:
    """Name order, a directory before what it holds ("./a" < "./a/b" < "./a-b")."""
    return tuple(part for part in name.split("/") if part not in ("", "."))


def _rewrite_tar(member: str, raw: bytes, epoch: int, counts: dict[str, int]) -> bytes:
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as source:
            entries = [
                (info, io.BytesIO(source.extractfile(info).read()) if info.isfile() else None)  # type: ignore[union-attr]
                for info in source
            ]
    except tarfile.TarError as error:
        raise NormalizeError(f"{member}: not a tar archive ({error})") from None
    ordered = sorted(entries, key=lambda item: _key(item[0].name))
    if [i.name for i, _ in ordered] != [i.name for i, _ in entries]:
        counts["order"] += 1
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:", format=tarfile.GNU_FORMAT) as target:
        for info, handle in ordered:
            if info.mtime > epoch:
                counts["mtimes"] += 1
                info.mtime = epoch
            elif info.mtime != int(info.mtime):
                info.mtime = int(info.mtime)
            if (info.uid, info.gid, info.uname, info.gname) != (0, 0, "root", "root"):
                counts["owners"] += 1
                info.uid = info.gid = 0
                info.uname = info.gname = "root"
            if not info.issym() and info.mode & 0o022:
                counts["modes"] += 1
                info.mode &= ~0o022
            info.pax_headers = {}
            target.addfile(info, handle)
    return out.getvalue()


def normalize(data: bytes, epoch: int) -> Normalized:
    """`data` (a .deb) with its archive metadata in the normal form; see the module."""
    counts = {"order": 0, "mtimes": 0, "owners": 0, "modes": 0, "ar": 0}
    members = _ar_members(data)
    out = [AR_MAGIC]
    for member in members:
        content = member.content
        if member.name.startswith(_TARS):
            suffix, raw = _decompress(member.name, content)
            content = _compress(suffix, _rewrite_tar(member.name, raw, epoch, counts))
        mtime = min(member.mtime, epoch)
        if (mtime, member.uid, member.gid, member.mode) != (member.mtime, 0, 0, 0o100644):
            counts["ar"] += 1
        out += [_ar_header(member.name, mtime, len(content)), content]
        if len(content) % 2:
            out.append(b"\n")
    labels = {
        "order": "members put in name order ({} archives)",
        "mtimes": "mtimes clamped to SOURCE_DATE_EPOCH ({} entries)",
        "owners": "owners set to root:root ({} entries)",
        "modes": "group/other write removed ({} entries)",
        "ar": "ar headers normalised ({} members)",
    }
    changes = tuple(labels[key].format(count) for key, count in counts.items() if count)
    return Normalized(b"".join(out), changes)


def data_files(data: bytes, paths: set[str]) -> dict[str, bytes]:
    """The content of the regular files `paths` (without "./") in a .deb's data archive."""
    found: dict[str, bytes] = {}
    for member in _ar_members(data):
        if not member.name.startswith("data.tar"):
            continue
        _, raw = _decompress(member.name, member.content)
        try:
            with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as source:
                for info in source:
                    name = "/".join(_key(info.name))
                    handle = source.extractfile(info) if info.isfile() else None
                    if name in paths and handle is not None:
                        found[name] = handle.read()
        except tarfile.TarError as error:
            raise NormalizeError(f"{member.name}: not a tar archive ({error})") from None
    return found
