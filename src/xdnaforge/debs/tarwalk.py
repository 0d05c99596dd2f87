"""The members of a tar stream, header by header, for the audit's single streaming pass.

tarfile builds a TarInfo, two checksums over 512 small integers and a file object for every
member; on a kernel image's 1,200 members that was most of the tar parser's time, which on
zstd is the critical path next to decompression. This reader does only what the audit needs:
name, type, size and link target of each member.

It reads what dpkg's own tar reader (lib/dpkg/tarfn.c, which `dpkg --unpack` uses) reads, and
refuses everything dpkg refuses or could read differently from GNU tar (which `dpkg-deb -c`
and `--fsys-tarfile | tar` use): ustar and GNU headers, GNU long names and link names up to
PATH_MAX; octal numbers as dpkg parses them (no "+", "_" or stray characters) and GNU
base-256; the unsigned header checksum. Refused: pax headers (dpkg 1.21 stops with
"unsupported PAX tar header"), GNU sparse and other types dpkg does not know, a header
whose magic is neither ustar nor GNU, an empty name, data on a member that is not a regular
file (dpkg skips it for some types and reads it as the next header for others), a regular
entry whose name ends in "/" (a directory to dpkg, whose data it skips). It is stricter
than tarfile where tarfile is silent: a damaged header or data cut short in the middle of
the archive is an error, never an early end of the listing.
It reads a stream; it does not decompress, open files or know .deb.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Protocol

BLOCK = 512
REGULAR = (b"0", b"\0")  # regular file, old regular file (dpkg knows no contiguous file)
# types dpkg knows that carry no data: hardlink, symlink, devices, directory, FIFO
NO_DATA = (b"1", b"2", b"3", b"4", b"5", b"6")
_KINDS = {b"0": "file", b"\0": "file", b"5": "dir", b"2": "symlink", b"1": "hardlink"}
_KINDS.update({b"3": "chardev", b"4": "blockdev", b"6": "fifo"})
NAME_MAX = 4096  # PATH_MAX: a longer name is one dpkg could never create
_USTAR = b"ustar\x0000"  # magic and version of POSIX ustar
_GNU = b"ustar  \0"  # of GNU tar (what dpkg-deb writes)
_OLD = bytes(8)  # V7 tar: no magic
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

    __slots__ = ("kind", "link", "mode", "name", "offset", "size", "type")

    def __init__(
        self, name: str, type_: bytes, size: int, link: str, offset: int, mode: int = 0
    ) -> None:
        self.name = name
        self.mode = mode  # permission bits (and set-id, sticky), as dpkg applies them
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


_OCTAL = re.compile(rb" *([0-7]*)[ \0]*\Z")


def _number(field: bytes, what: str, at: int) -> int:
    """As dpkg's tar_atol8: spaces, octal digits, then only spaces and NULs; or base-256."""
    if field[:1] in (b"\x80", b"\xff"):  # GNU base-256, for sizes of 8 GiB and more
        value = int.from_bytes(field[1:], "big")
        value = value - (256 ** (len(field) - 1)) if field[:1] == b"\xff" else value
        if 0 <= value < 8 ** (len(field) - 1):
            # tar writes base-256 only for what octal cannot hold; GNU tar and dpkg disagree
            # on such a size in a long-name header, so one reading cannot be promised
            raise TarError(f"damaged tar header at byte {at}: {what} in base-256 fits octal")
        return value
    match = _OCTAL.match(field)
    if match is None or field.count(b" ") == len(field):
        raise TarError(f"damaged tar header at byte {at}: {what} is not a number")
    return int(match[1] or b"0", 8)


def _checksum_ok(header: bytes, stored: int) -> bool:
    # the sum of the header's unsigned bytes with the checksum field read as eight spaces, as
    # dpkg sums it (tarfile also accepts a signed sum, which dpkg refuses)
    return stored == sum(header) - sum(header[148:156]) + 8 * 32


def members(stream: Stream) -> Iterator[Member]:
    """The members in order; the caller may read a member's data before asking for the next.

    Ends at the first zero block (or, as tar accepts, where the stream ends between members).
    """
    pending: dict[bytes, str] = {}  # the GNU long name (L) and link name (K) of the next member
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
        magic = header[257:265]
        if magic not in (_USTAR, _GNU, _OLD):
            raise TarError(f"unsupported tar header at byte {at}: magic {magic!r}")
        if type_ in (b"x", b"g", b"X"):  # dpkg 1.21: "unsupported PAX tar header"
            raise TarError(f"unsupported tar member at byte {at}: a pax header (dpkg refuses it)")
        if type_ == b"S":  # its data is a map of holes and pieces: refused, never misread
            raise TarError(f"unsupported tar member at byte {at}: a GNU sparse file")
        if type_ not in _KINDS and type_ not in (b"L", b"K"):
            raise TarError(f"unsupported tar member at byte {at}: type {type_!r} (dpkg refuses it)")
        data_at = at + BLOCK
        padded = size + (-size % BLOCK)
        if type_ in (b"L", b"K"):
            if size > NAME_MAX:  # dpkg could not create it; not read into memory
                raise TarError(
                    f"damaged tar header at byte {at}: a {size}-byte long name, over PATH_MAX"
                )
            if type_ in pending:
                raise TarError(f"damaged tar archive: a second long name at byte {at}")
            data = stream.read(padded)
            if len(data) < padded:
                raise TarError(f"truncated tar archive inside the extension header at {at}")
            # what GNU tar writes: the name, one NUL, zero padding; GNU tar reads the name to
            # its NUL and dpkg to the size, so anything else would be two different names
            if size < 2 or data.find(b"\0") != size - 1 or any(data[size:]):
                raise TarError(f"damaged tar header at byte {at}: a malformed long name")
            pending[type_] = _text(data[:size])
            position = data_at + padded
            continue
        if not header[0]:
            raise TarError(f"damaged tar header at byte {at}: an empty name (dpkg refuses it)")
        name = _text(header[0:100])
        prefix = _text(header[345:500])
        if prefix and magic == _USTAR:  # dpkg joins the prefix for POSIX ustar only
            name = f"{prefix}/{name}"
        name = pending.get(b"L", name)
        link = pending.get(b"K") or _text(header[157:257])
        if type_ in NO_DATA and size:
            raise TarError(
                f"damaged tar header at byte {at}: {name!r} is no regular file but has "
                f"{size} bytes of data"
            )
        if type_ in REGULAR and name.endswith("/"):
            raise TarError(
                f"damaged tar header at byte {at}: a regular file named {name!r} (dpkg makes "
                "it a directory)"
            )
        if type_ == b"5":
            name = name.rstrip("/")  # as tarfile names directories
        mode = _number(header[100:108], "the mode", at) & 0o7777
        pending = {}
        yield Member(name, type_, size, link, data_at, mode)
        position = data_at + padded
        # a member whose data the stream does not hold is a truncated archive, not its end
        if stream.seek(position) < position:
            raise TarError(f"truncated tar archive: the data of {name!r} is cut short")
