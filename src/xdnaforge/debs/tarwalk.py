"""The members of a tar stream, header by header, for the audit's single streaming pass.

tarfile builds a TarInfo, two checksums over 512 small integers and a file object for every
member; on a kernel image's 1,200 members that was most of the tar parser's time, which on
zstd is the critical path next to decompression. This reader does only what the audit needs:
name, type, size and link target of each member, with the formats dpkg-deb and tar write
(ustar and GNU headers, GNU long names and link names, pax extended and global headers),
and the caller reads a member's data from the stream right after its header.

It is stricter than tarfile where tarfile is silent: a damaged header or data cut short
in the middle of the archive is an error, never an early end of the listing.
It reads a stream; it does not decompress, open files or know .deb.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

BLOCK = 512
REGULAR = (b"0", b"\0", b"7")  # regular file, old regular file, contiguous file
# types whose size is not data that follows the header (as tarfile treats them)
NO_DATA = (b"1", b"2", b"3", b"4", b"5", b"6")
_KINDS = {b"0": "file", b"\0": "file", b"7": "file", b"5": "dir", b"2": "symlink"}
_KINDS[b"1"] = "hardlink"
_ENCODING = "utf-8"
_ERRORS = "surrogateescape"  # names are bytes on Linux: keep any byte, as tarfile does


class TarError(ValueError):
    """The stream is not a well-formed tar archive."""


class Stream(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...

    def seek(self, offset: int, whence: int = 0, /) -> int: ...

    def tell(self) -> int: ...


class Member:
    """One archive member; its data starts at `offset` in the stream."""

    __slots__ = ("kind", "link", "name", "offset", "size", "type")

    def __init__(self, name: str, type_: bytes, size: int, link: str, offset: int) -> None:
        self.name = name
        self.type = type_
        self.size = size
        self.link = link
        self.offset = offset
        self.kind = _KINDS.get(type_, "other")

    def isreg(self) -> bool:
        return self.kind == "file"


def _text(field: bytes) -> str:
    end = field.find(b"\0")
    return (field if end < 0 else field[:end]).decode(_ENCODING, _ERRORS)


def _number(field: bytes, what: str, at: int) -> int:
    if field[:1] in (b"\x80", b"\xff"):  # GNU base-256, for sizes of 8 GiB and more
        value = int.from_bytes(field[1:], "big")
        return value - (256 ** (len(field) - 1)) if field[:1] == b"\xff" else value
    end = field.find(b"\0")
    digits = (field if end < 0 else field[:end]).strip()
    try:
        return int(digits or b"0", 8)
    except ValueError:
        raise TarError(f"damaged tar header at byte {at}: {what} is not a number") from None


def _checksum_ok(header: bytes, stored: int) -> bool:
    # the sum of the header's bytes with the checksum field read as eight spaces; some old
    # tars summed signed bytes, which tarfile accepts too
    unsigned = sum(header) - sum(header[148:156]) + 8 * 32
    if stored == unsigned:
        return True
    signed = unsigned - 256 * sum(1 for byte in header if byte > 127)
    signed += 256 * sum(1 for byte in header[148:156] if byte > 127)
    return stored == signed


def _pax(data: bytes, at: int) -> dict[str, str]:
    """Records "LENGTH KEY=VALUE\\n" of a pax extended header."""
    records: dict[str, str] = {}
    position = 0
    while position < len(data) and data[position] != 0:
        space = data.find(b" ", position)
        try:
            length = int(data[position:space])
        except ValueError:
            raise TarError(f"damaged pax header at byte {at}") from None
        record = data[space + 1 : position + length]
        if length <= 0 or position + length > len(data) or not record.endswith(b"\n"):
            raise TarError(f"damaged pax header at byte {at}")
        key, equals, value = record[:-1].partition(b"=")
        if not equals:
            raise TarError(f"damaged pax header at byte {at}")
        records[key.decode(_ENCODING, _ERRORS)] = value.decode(_ENCODING, _ERRORS)
        position += length
    return records


def members(stream: Stream) -> Iterator[Member]:
    """The members in order; the caller may read a member's data before asking for the next.

    Ends at the first zero block (or, as tar accepts, where the stream ends between members).
    """
    global_pax: dict[str, str] = {}
    pending: dict[str, str] = {}  # what the extension headers before a member say about it
    position = stream.tell()
    while True:
        header = stream.read(BLOCK)
        at = position
        if not header:
            if pending:
                raise TarError(f"truncated tar archive: it ends after an extension header at {at}")
            return
        if len(header) < BLOCK:
            raise TarError(f"truncated tar archive: a header at byte {at} is cut short")
        if header.count(0) == BLOCK:
            if pending:
                raise TarError(f"damaged tar archive: an extension header at {at} leads nowhere")
            return
        if not _checksum_ok(header, _number(header[148:156], "the checksum", at)):
            raise TarError(f"damaged tar header at byte {at} (checksum mismatch)")
        type_ = header[156:157]
        size = _number(header[124:136], "the size", at)
        if size < 0:
            raise TarError(f"damaged tar header at byte {at}: negative size")
        if type_ == b"S":  # its data is a map of holes and pieces: refused, never misread
            raise TarError(f"unsupported tar member at byte {at}: a GNU sparse file")
        data_at = at + BLOCK
        padded = size + (-size % BLOCK)
        if type_ in (b"L", b"K", b"x", b"g", b"X"):
            if size > 1 << 20:  # far beyond any real name or pax header: not read into memory
                raise TarError(f"damaged tar header at byte {at}: a {size}-byte extension")
            data = stream.read(padded)
            if len(data) < padded:
                raise TarError(f"truncated tar archive inside the extension header at {at}")
            data = data[:size]
            if type_ == b"L":
                pending["path"] = _text(data)
            elif type_ == b"K":
                pending["linkpath"] = _text(data)
            elif type_ == b"g":
                global_pax.update(_pax(data, at))
            else:
                pending.update(_pax(data, at))
            position = data_at + padded
            continue
        fields = {**global_pax, **pending} if global_pax else pending
        name = _text(header[0:100])
        prefix = _text(header[345:500])
        if type_ == b"\0" and name.endswith("/"):
            type_ = b"5"  # V7 tar: a directory is a regular entry whose name ends in "/"
        if prefix and header[257:263] == b"ustar\0":
            name = f"{prefix}/{name}"
        name = fields.get("path", name)
        link = fields.get("linkpath") or _text(header[157:257])
        if "size" in fields:
            try:
                size = int(fields["size"])
            except ValueError:
                size = -1
            if size < 0:
                raise TarError(f"damaged pax header before byte {at}: size {fields['size']!r}")
            padded = size + (-size % BLOCK)
        if type_ == b"5":
            name = name.rstrip("/")  # as tarfile names directories
        pending = {}
        yield Member(name, type_, size, link, data_at)
        position = data_at if type_ in NO_DATA else data_at + padded
        # a member whose data the stream does not hold is a truncated archive, not its end
        if stream.seek(position) < position:
            raise TarError(f"truncated tar archive: the data of {name!r} is cut short")
