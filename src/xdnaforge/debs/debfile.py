"""A streaming .deb reader: ar container, control and data tarballs, never unpacked to disk.

Memory stays flat in the package size: members are read through bounded readers and
decompressed as streams (gzip, xz, zstd, bz2, lzma or none), tar members are visited in
order, and only the few texts the audit needs are kept (control, maintainer scripts, and
small files the caller asks for). Anything malformed is a DebError naming the file, never
a pass.

It reads what dpkg reads and refuses what dpkg refuses or could read differently: ar sizes
as dpkg parses them (digits, then spaces), the members in dpkg's order (debian-binary,
control.tar, data.tar, each once; "_" members are skipped by dpkg and here), the control
member's compressions dpkg accepts (none, gzip, xz, zstd), a control tarball of regular
files only (a maintainer script that is a symlink or hardlink is run by dpkg, so it is
refused), each name once; a control file or maintainer script is read whole or refused.
Every control member goes through the content scan as a data file does (dpkg 1.21 installs
each one whose name has no dot, scripts included, as var/lib/dpkg/info/PACKAGE.NAME: a
module there is one), and their names are kept in order for the audit to admit by a
positive list.
tests/integration/test_audit_parity.py compares the readings with dpkg's own.
"""

from __future__ import annotations

import hashlib
import lzma
import os
import queue
import re
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, BinaryIO, cast

from xdnaforge.debs import elf, payload, streams, tarwalk
from xdnaforge.debs.control import ControlError, Fields
from xdnaforge.debs.control import parse as parse_control
from xdnaforge.debs.elf import RunPath
from xdnaforge.errors import StageFailed

AR_MAGIC = b"!<arch>\n"
MAINTAINER_SCRIPTS = ("preinst", "postinst", "prerm", "postrm", "triggers", "config")
TEXT_LIMIT = 1 << 20  # control files and inspected texts: 1 MiB is far beyond any real one
NAMES_LIMIT = 64 << 20  # all entry names together; a kernel image's are under 1 MiB
ELF_LIMIT = 256 << 20  # an ELF file is read whole to find its run paths; XRT's largest is ~50 MiB
_CHUNK = 1 << 16
HASH_BEHIND = 32  # pieces read and not hashed yet: at most 32 MiB (128 MiB for zstd's reads)


class DebError(StageFailed):
    """The file is not a well-formed .deb: a verdict is impossible, which is a failure."""


@dataclass(frozen=True, slots=True)
class Entry:
    path: str  # normalised: no leading "./" or "/"
    kind: str  # file, dir, symlink, hardlink, other
    size: int
    link: str | None
    mode: int = 0o644  # permission bits; devices and world-writable files are judged by them


@dataclass(slots=True)
class DebContents:
    file: str
    size: int = 0
    sha256: str = ""
    control: Fields = field(default_factory=Fields)  # field names are case-insensitive
    scripts: dict[str, str] = field(default_factory=dict)
    entries: list[Entry] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # path -> content (first TEXT_LIMIT)
    oversized: dict[str, int] = field(default_factory=dict)  # wanted texts over TEXT_LIMIT: size
    # kernel payload found by content: data path, or DEBIAN/<name> for a control member
    modules: dict[str, str] = field(default_factory=dict)
    unjudged: dict[str, str] = field(default_factory=dict)  # content the scan could not finish
    # executables and shared libraries: their RPATH/RUNPATH, or why it could not be read
    run_paths: dict[str, tuple[RunPath, ...]] = field(default_factory=dict)
    unreadable_elf: dict[str, str] = field(default_factory=dict)
    compression: dict[str, str] = field(default_factory=dict)  # member -> compression
    # data file -> sha256 of its content, when asked for (rebuild comparison); else empty
    digests: dict[str, str] = field(default_factory=dict)
    want_digests: bool = False
    names_size: int = 0  # bytes of entry names read so far (bounded by NAMES_LIMIT)
    # every control.tar member's name, in the order of the tarball (dpkg installs those
    # without a dot as var/lib/dpkg/info/PACKAGE.NAME): ("control", "md5sums", "postinst")
    control_members: tuple[str, ...] = ()
    conffiles: str = ""  # DEBIAN/conffiles, as text
    script_digests: dict[str, str] = field(default_factory=dict)  # script -> sha256

    @property
    def package(self) -> str:
        return self.control.get("Package") or Path(self.file).name


class _Source:
    """The raw file, read once front to back, and its sha256 over exactly what was read.

    What is read goes, in order, to a thread that hashes it (hashlib releases the GIL for
    large buffers): an xz block goes from the file to its decoder without waiting for the
    hash. Hashing is faster than any decoder reads, so the reader waits only if the hash
    falls HASH_BEHIND pieces behind (a reader that skips over an uncompressed member could
    outrun it), which bounds the memory. A plain thread: concurrent.futures costs ~9 ms of
    imports (logging).
    """

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.digest = hashlib.sha256()
        self.count = 0
        self._pieces: queue.Queue[bytes | None] = queue.Queue(maxsize=HASH_BEHIND)
        self._hasher = threading.Thread(target=self._hash, name="sha256", daemon=True)
        self._hasher.start()

    def _hash(self) -> None:
        while (piece := self._pieces.get()) is not None:
            self.digest.update(piece)

    def read(self, size: int) -> bytes:
        data = self.handle.read(size)
        if data:
            self._pieces.put(data)
        self.count += len(data)
        return data

    def hexdigest(self) -> str:
        """The sha256 of everything read."""
        self.close()
        return self.digest.hexdigest()

    def close(self) -> None:
        if self._hasher.is_alive():
            self._pieces.put(None)
            self._hasher.join()


class _Member:
    """A file-like view of one ar member that refuses to read past it, or to end early."""

    def __init__(self, source: _Source, name: str, size: int, file: str) -> None:
        self.source = source
        self.name = name
        self.remaining = size
        self.size = size
        self.file = file

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > self.remaining:
            size = self.remaining
        if size == 0:
            return b""
        data = self.source.read(size)
        if len(data) < size:
            raise DebError(
                f"{self.file}: truncated: member {self.name} ends after "
                f"{self.size - self.remaining + len(data)} of its {self.size} bytes"
            )
        self.remaining -= len(data)
        return data

    def readable(self) -> bool:
        return True

    def drain(self) -> None:
        while self.remaining:
            self.read(min(_CHUNK, self.remaining))


_AR_SIZE = re.compile(rb" *([0-9]+) *\Z")
_AR_NAME = re.compile(r"[!-~]+\Z")  # printable ASCII, no spaces


def _members(source: _Source, file: str) -> Iterator[_Member]:
    if source.read(len(AR_MAGIC)) != AR_MAGIC:
        raise DebError(f"{file}: not a .deb (no ar archive signature)")
    while True:
        header = source.read(60)
        if not header:
            return
        if len(header) < 60:
            raise DebError(f"{file}: truncated inside an ar member header")
        if header[58:60] != b"`\n":
            raise DebError(f"{file}: damaged ar member header at byte {source.count - 60}")
        # as dpkg: trailing spaces and one trailing "/" end the name; the size is decimal
        # digits then spaces (Python's int would also take "1_2", "+12" or " 12")
        raw = header[:16].rstrip(b" ")
        name = (raw[:-1] if raw.endswith(b"/") else raw).decode("ascii", "replace")
        size_field = _AR_SIZE.match(header[48:58])
        if size_field is None:
            raise DebError(
                f"{file}: damaged ar member header at byte {source.count - 60}: "
                f"size {header[48:58].decode('ascii', 'replace')!r} is not a number"
            )
        size = int(size_field[1])
        if not _AR_NAME.match(name) or "/" in name or name in (".", ".."):
            raise DebError(f"{file}: ar member with an invalid name {name!r}")
        member = _Member(source, name, size, file)
        yield member
        member.drain()
        if size % 2 and source.read(1) not in (b"\n", b""):
            raise DebError(f"{file}: damaged ar padding after member {name}")


COMPRESSIONS = ("", ".gz", ".xz", ".lzma", ".bz2", ".zst")
CONTROL_COMPRESSIONS = ("", ".gz", ".xz", ".zst")  # dpkg refuses the others for control.tar


_STREAM_ERRORS: tuple[type[Exception], ...] = (
    OSError,
    EOFError,
    lzma.LZMAError,
    tarwalk.TarError,
    ValueError,
    UnicodeDecodeError,
    *streams.DECOMPRESS_ERRORS,
)


def _normalise(name: str, file: str, member: str) -> str:
    if name.startswith("/"):
        raise DebError(f"{file}: {member} holds an absolute path {name!r}")
    # plain string work: this runs for every entry, and pathlib costs several times more
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise DebError(f"{file}: {member} holds a path that leaves the root {name!r}")
    return "/".join(parts)


class _Data:
    """A member's data, read from the decompressed stream right after its header."""

    __slots__ = ("remaining", "stream")

    def __init__(self, stream: streams.PieceReader, size: int) -> None:
        self.stream = stream
        self.remaining = size

    def read(self, size: int) -> bytes:
        data = self.stream.read(min(size, self.remaining))
        self.remaining -= len(data)
        return data  # short only at the end of the stream, which the tar walk reports


def _tar_entries(
    member: _Member, compression: str
) -> Iterator[tuple[tarwalk.Member, streams.PieceReader]]:
    # tarwalk skips file data by seeking, which the reader does without copying; the reader
    # only moves forward, so memory stays bounded
    with streams.open_member(cast(IO[bytes], member), compression) as stream:
        for info in tarwalk.members(stream):
            yield info, stream
        # read to the end of the compressed stream: a damaged tail is an error too
        stream.drain()


def read_deb(
    path: Path, wants_text: Callable[[str], bool] = lambda _: False, *, digests: bool = False
) -> DebContents:
    """Read a .deb; `wants_text(path)` selects data files whose content the caller needs;
    `digests` records the sha256 of every other regular data file."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; a .deb is a regular file
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise DebError(f"{path}: cannot read: {error.strerror}") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise DebError(f"{path}: not a regular file (a .deb is one)")
    os.set_blocking(descriptor, True)
    with os.fdopen(descriptor, "rb") as handle:
        return read_deb_stream(handle, str(path), wants_text, digests=digests)


def read_deb_stream(
    handle: BinaryIO,
    file: str,
    wants_text: Callable[[str], bool] = lambda _: False,
    *,
    digests: bool = False,
) -> DebContents:
    """Read a .deb from an open binary stream (read once, front to back)."""
    contents = DebContents(file=file, want_digests=digests)
    seen: list[str] = []
    source = _Source(handle)
    control = ""
    try:
        for member in _members(source, file):
            seen.append(member.name)
            control = _read_member(member, contents, wants_text, seen) or control
    except DebError:
        source.close()
        raise
    except _STREAM_ERRORS as error:
        source.close()
        where = seen[-1] if seen else "the archive"
        raise DebError(f"{file}: damaged {where}: {error}") from None
    contents.sha256 = source.hexdigest()
    contents.size = source.count
    try:
        contents.control = Fields(parse_control(control))
    except ControlError as error:
        raise DebError(f"{file}: damaged DEBIAN/control: {error}") from None
    for required in ("debian-binary", "control.tar", "data.tar"):
        if not any(name == required or name.startswith(f"{required}.") for name in seen):
            raise DebError(f"{file}: missing member {required}{'*' if '.tar' in required else ''}")
    if "Package" not in contents.control:
        raise DebError(f"{file}: the control file has no Package field")
    return contents


def _read_member(
    member: _Member, contents: DebContents, wants_text: Callable[[str], bool], seen: list[str]
) -> str | None:
    """Reads one member into `contents`; returns the control file's text if it holds it."""
    file = contents.file
    name = member.name
    if name == "debian-binary":
        if len(seen) != 1:
            raise DebError(f"{file}: debian-binary is not the first member")
        version = member.read(64).decode("ascii", errors="replace").strip()
        if not version.startswith("2."):
            raise DebError(f"{file}: unsupported .deb format version {version!r}")
        return None
    if name.startswith("_"):
        return None  # dpkg ignores members starting with "_" (signatures and the like)
    kind, dot, compression = name.partition(".tar")
    if not dot or kind not in ("control", "data"):
        raise DebError(f"{file}: unexpected member {name!r}")
    if compression not in (CONTROL_COMPRESSIONS if kind == "control" else COMPRESSIONS):
        raise DebError(f"{file}: {name}: unknown compression {compression!r}")
    earlier = [s.partition(".tar")[0] for s in seen[:-1] if not s.startswith("_")]
    if kind in earlier:
        # dpkg reads the first and never looks at the second: one reading must be the only one
        raise DebError(f"{file}: a second {kind}.tar member ({name})")
    if "data" in earlier:
        raise DebError(f"{file}: {name} comes after data.tar (dpkg would not read it)")
    if kind == "data" and "control" not in earlier:
        raise DebError(f"{file}: data.tar comes before control.tar")
    contents.compression[kind] = compression.lstrip(".") or "none"
    control = None
    names: dict[str, None] = {}  # the control members, in order
    for info, stream in _tar_entries(member, compression):
        path = _normalise(info.name, file, name)
        if not path:
            if info.kind != "dir":
                raise DebError(f"{file}: {name}: the root {info.name!r} is a {info.kind}")
            continue
        if kind == "control":
            _control_entry(info, path, names, file)
            extracted = _Data(stream, info.size)
            if path in ("control", "conffiles") or path in MAINTAINER_SCRIPTS:
                raw = _read_whole(extracted, info.size, f"{file}: DEBIAN/{path}")
                _scan_control_member(contents, path, [raw])
                text = raw.decode("utf-8", errors="replace")
                if path == "control":
                    control = text
                elif path == "conffiles":
                    contents.conffiles = text
                else:
                    contents.scripts[path] = text
                    # of the bytes dpkg runs, as `sha256sum` of the extracted script says
                    contents.script_digests[path] = hashlib.sha256(raw).hexdigest()
            else:
                # dpkg installs it as var/lib/dpkg/info/PACKAGE.NAME (if the name has no dot)
                _scan_control_member(contents, path, _chunks(extracted))
            continue
        contents.names_size += len(path)
        if contents.names_size > NAMES_LIMIT:
            raise DebError(
                f"{file}: {name}: entry names over {NAMES_LIMIT >> 20} MiB in all "
                f"({len(contents.entries)} entries)"
            )
        contents.entries.append(
            Entry(path=path, kind=info.kind, size=info.size, link=info.link or None, mode=info.mode)
        )
        if info.isreg():
            _read_data_file(_Data(stream, info.size), info.size, path, contents, wants_text(path))
    if kind == "control":
        contents.control_members = tuple(names)
    return control


def _control_entry(info: tarwalk.Member, path: str, names: dict[str, None], file: str) -> None:
    """A control tarball holds regular files, each once, and no directory but its root."""
    if not info.isreg():
        # dpkg-deb -b takes DEBIAN/preinst -> helper; dpkg then runs what the link names
        raise DebError(
            f"{file}: control.tar: DEBIAN/{path} is a {info.kind}, not a regular file "
            "(dpkg would run or read what it points to)"
        )
    if "/" in path:
        raise DebError(f"{file}: control.tar: DEBIAN/{path} is in a subdirectory")
    if path in names:
        raise DebError(f"{file}: control.tar: DEBIAN/{path} is given twice (tar keeps the last)")
    names[path] = None


def _read_whole(extracted: _Data, size: int, what: str) -> bytes:
    """A text the audit must judge whole: one over TEXT_LIMIT is refused, never cut."""
    if size > TEXT_LIMIT:
        raise DebError(f"{what} is {size} bytes, over the {TEXT_LIMIT >> 20} MiB the audit reads")
    return extracted.read(size)


def _chunks(extracted: _Data) -> Iterator[bytes]:
    while chunk := extracted.read(_CHUNK):
        yield chunk


def _scan_control_member(contents: DebContents, name: str, chunks: Iterable[bytes]) -> None:
    """A control member's bytes through the same content scan as a data file's (a module
    shipped as DEBIAN/amdxdna is installed as var/lib/dpkg/info/PACKAGE.amdxdna); what is
    left once the scan knows is skipped unread."""
    scanner = payload.Scanner()
    for chunk in chunks:
        scanner.feed(chunk)
        if scanner.done:
            break
    _found(contents, f"DEBIAN/{name}", *scanner.finish())


def _found(contents: DebContents, path: str, found: str | None, unjudged: str | None) -> None:
    if found:
        contents.modules[path] = found
    if unjudged:
        contents.unjudged[path] = unjudged


def _read_data_file(
    extracted: _Data, file_size: int, path: str, contents: DebContents, text: bool
) -> None:
    """What the rules and the rebuild check need from one data file, read in one pass: the
    decompressed stream only moves forward, so no file can be read twice.

    Every byte goes to the payload scanner (a kernel module or image by content, whatever
    its name) until it knows, except for files already blocked by their name or place; the
    text when asked for; the run paths of an executable or shared library
    (the host contamination check); the content's sha256 when digests are wanted (not for
    texts).
    """
    first = extracted.read(_CHUNK)
    head = first[: elf.HEAD]
    dynamic = elf.is_dynamic(head)
    if dynamic and file_size > ELF_LIMIT:
        contents.unreadable_elf[path] = f"{file_size} bytes, over the {ELF_LIMIT >> 20} MiB read"
        dynamic = False
    digest = hashlib.sha256() if contents.want_digests and not text else None
    keep = file_size if dynamic else (TEXT_LIMIT if text else 0)
    scanner = None if payload.named_module(path) else payload.Scanner()
    kept: list[bytes] = []
    size = 0
    chunk = first
    while chunk:
        if scanner is not None:
            scanner.feed(chunk)
            if scanner.done:
                _found(contents, path, *scanner.finish())
                scanner = None
        if digest is not None:
            digest.update(chunk)
        if size < keep:
            kept.append(chunk[: keep - size])
            size += len(kept[-1])
        if scanner is None and digest is None and size >= keep:
            break  # the rest is skipped unread (the tar walk seeks past it)
        chunk = extracted.read(_CHUNK)
    data = b"".join(kept)
    if scanner is not None:
        _found(contents, path, *scanner.finish())
    if text:
        contents.texts[path] = data[:TEXT_LIMIT].decode("utf-8", errors="replace")
        if file_size > TEXT_LIMIT:
            contents.oversized[path] = file_size
    if digest is not None:
        contents.digests[path] = digest.hexdigest()
    if dynamic:
        found_paths, problem = elf.run_paths(data)
        if found_paths:
            contents.run_paths[path] = found_paths
        if problem:
            contents.unreadable_elf[path] = problem
