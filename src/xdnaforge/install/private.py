"""The files root handles while it installs and rolls back, so that nothing the builder can
write (build/, artifacts/) decides what dpkg is given or where root writes: a private
directory only root can enter for the copies dpkg installs, dpkg-repack's output and the
log; the builder's install.log held open from the start and appended to at the end; kept
packages placed in kept/ at a directory descriptor; a kept package or install.json trusted
only when this user wrote it.

Every path into build/ or artifacts/ is walked by state/nofollow.py from the directory above
them, so no link planted there is followed; files are created O_EXCL|O_NOFOLLOW, read
O_NOFOLLOW and judged by their descriptor, never reopened by name.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from xdnaforge.debs.debfile import DebError, read_deb_stream
from xdnaforge.errors import StageFailed, XdnaforgeError
from xdnaforge.process.logfile import append_at
from xdnaforge.state import nofollow
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import parse_record

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def artifacts_anchor(space: Workspace) -> Path:
    """Where the walk into artifacts/ starts: no link below it is followed."""
    return space.artifacts_dir.parent


def build_anchor(space: Workspace) -> Path:
    return space.build_dir.parent


@dataclass(frozen=True, slots=True)
class Workdir:
    """The private directory (0700, this user's) of one install or rollback."""

    path: Path
    log: Path  # the commands' log, appended to build/<target>/logs/install.log at the end
    shown_log: Path  # that log, as messages name it
    artifacts: Path  # where the walk into artifacts/ starts (artifacts_anchor)

    @property
    def copies(self) -> Path:
        return self.path / "copies"

    @property
    def repack(self) -> Path:
        return self.path / "repack"

    @property
    def scratch(self) -> Path:
        return self.path / "scratch"


@contextlib.contextmanager
def workdir(space: Workspace) -> Iterator[Workdir]:
    """A private directory and log for the commands of one install; install.log in the
    build tree is opened (refused, if it is a link, a hard link or another's file) before
    anything runs, and what the commands wrote is appended to it when they are done."""
    shown = space.logs / "install.log"
    log_dir = nofollow.open_directory(space.logs, below=build_anchor(space), create=True)
    try:
        held = append_at(log_dir, shown.name, shown)
    finally:
        os.close(log_dir)
    try:
        parent = _temporary_parent()
        with tempfile.TemporaryDirectory(prefix="xdnaforge-install-", dir=parent) as private:
            work = Workdir(
                Path(private), Path(private) / "install.log", shown, artifacts_anchor(space)
            )
            for folder in (work.copies, work.repack, work.scratch):
                folder.mkdir(mode=0o700)
            try:
                yield work
            except XdnaforgeError as error:
                _name_log(error, work)
                raise
            finally:
                _append(work.log, held)
    finally:
        os.close(held)


def _temporary_parent() -> str:
    """Where the private directory is made. dpkg is given paths in it, so as root every
    directory on the way must be one that only root can rename entries in (root's, and
    writable by root alone or sticky): a TMPDIR kept by `sudo -E` may be the builder's,
    who could swap the private directory for another. The real path, links resolved now."""
    if os.geteuid() != 0:
        return tempfile.gettempdir()
    for candidate in (tempfile.gettempdir(), "/tmp", "/var/tmp"):
        real = Path(os.path.realpath(candidate))
        if all(_only_root_renames(folder) for folder in (real, *real.parents)):
            return str(real)
    raise StageFailed(
        "no directory for the private copies in which only root can rename entries "
        "(TMPDIR, /tmp, /var/tmp)",
        hint="set TMPDIR to a directory root owns (e.g. mkdir -m 700 /root/tmp)",
    )


def _only_root_renames(folder: Path) -> bool:
    try:
        st = folder.lstat()
    except OSError:
        return False
    others_write = st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX
    return stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and not others_write


def _name_log(error: XdnaforgeError, work: Workdir) -> None:
    """A message that names the private log names the one the user can read."""
    private = str(work.log)
    error.message = error.message.replace(private, str(work.shown_log))
    if error.hint:
        error.hint = error.hint.replace(private, str(work.shown_log))
    error.args = (error.message,)


def _append(log: Path, held: int) -> None:
    with contextlib.suppress(FileNotFoundError), log.open("rb") as source:
        while block := source.read(1 << 20):
            os.write(held, block)


def _open_regular(path: Path, anchor: Path) -> int:
    """`path` opened for reading through no link below `anchor`, refused unless regular."""
    try:
        folder = nofollow.open_directory(path.parent, below=anchor)
    except OSError as error:
        raise StageFailed(f"cannot read {path}: {error.strerror}") from None
    try:
        fd = os.open(path.name, _READ, dir_fd=folder)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise StageFailed(
                f"refusing {path}: it is a symbolic link",
                hint="root reads no link in artifacts/: someone who can write it planted one; "
                "remove it and rebuild",
            ) from None
        raise StageFailed(f"cannot read {path}: {error.strerror}") from None
    finally:
        os.close(folder)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise StageFailed(f"refusing {path}: not a regular file")
    os.set_blocking(fd, True)
    return fd


def sha256(path: Path, anchor: Path) -> str:
    """The digest of `path` (a regular file reached through no link below `anchor`)."""
    digest = hashlib.sha256()
    with os.fdopen(_open_regular(path, anchor), "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _copy(handle: BinaryIO, target: Path) -> str:
    """`handle` copied to the new file `target`; its sha256."""
    digest = hashlib.sha256()
    with handle, os.fdopen(os.open(target, _NEW, 0o600), "wb") as copy:
        while block := handle.read(1 << 20):
            digest.update(block)
            copy.write(block)
    return digest.hexdigest()


def private_copies(chosen: Sequence[dict[str, Any]], work: Workdir, anchor: Path) -> list[Path]:
    """Each approved file copied into the private directory, hashed as it is copied; the
    copies are what is audited and what dpkg installs.

    Whoever can write artifacts/ (the unprivileged builder, while root installs) could swap
    a file between its check and `dpkg -i`; a copy only its owner can write cannot be.
    """
    copies = []
    for item in chosen:
        source = Path(item["file"])
        target = work.copies / source.name
        digest = _copy(os.fdopen(_open_regular(source, anchor), "rb"), target)
        if digest != item["sha256"]:
            raise StageFailed(
                f"refusing {source.name}: it changed after the audit check (sha256 "
                f"{digest}, the audit passed {item['sha256']})",
                hint="someone can write the artifacts directory while you install; "
                "rebuild and re-audit, and keep artifacts/ writable only by you",
            )
        copies.append(target)
    return copies


def _open_own(path: Path, anchor: Path) -> int | None:
    """`path` opened for reading when this user wrote it (a regular file with one name, its
    owner this user), through no link below `anchor`; None otherwise."""
    try:
        fd = _open_regular(path, anchor)
    except StageFailed:
        return None
    if not nofollow.is_own_file(fd):
        os.close(fd)
        return None
    return fd


def kept_versions(space: Workspace) -> dict[tuple[str, str], Path]:
    """The kept packages (any target's kept/) that this user wrote, by (package, version):
    a .deb the builder put in kept/ would otherwise be what a rollback installs."""
    anchor = artifacts_anchor(space)
    kept = {}
    for deb in sorted(space.artifacts_dir.glob("*/kept/*.deb")):
        fd = _open_own(deb, anchor)
        if fd is None:
            continue
        try:
            with os.fdopen(fd, "rb") as handle:
                contents = read_deb_stream(handle, str(deb))
        except DebError:
            continue
        kept[(contents.package, contents.control.get("Version", ""))] = deb
    return kept


@contextlib.contextmanager
def kept_directory(space: Workspace) -> Iterator[int]:
    """artifacts/<target>/kept, made if missing and held open from before anything changes,
    so that a link planted there is refused first and one planted later is never used."""
    folder = nofollow.open_directory(
        space.records / "kept", below=artifacts_anchor(space), create=True, mode=0o755
    )
    try:
        yield folder
    finally:
        os.close(folder)


def keep(source: Path, folder: int, shown: Path) -> Path:
    """`source` (a private file) in the kept directory `folder` (shown as `shown`) under its
    name; a kept file of that name this user wrote stays, anything else there is replaced by
    a rename (which follows nothing)."""
    try:
        existing = os.open(source.name, _READ, dir_fd=folder)
    except OSError:
        existing = None
    if existing is not None:
        own = stat.S_ISREG(os.fstat(existing).st_mode) and nofollow.is_own_file(existing)
        os.close(existing)
        if own:
            return shown / source.name
    temp = f".{source.name}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(temp, _NEW, 0o644, dir_fd=folder)
        with source.open("rb") as handle, os.fdopen(fd, "wb") as copy:
            shutil.copyfileobj(handle, copy, 1 << 20)
            copy.flush()
            os.fsync(copy.fileno())
        os.replace(temp, source.name, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError as error:
        # at the descriptor an error names only the bare temporary name (a full disk)
        raise OSError(error.errno, error.strerror, str(shown / source.name)) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=folder)
    return shown / source.name


def copy_kept(kept: Path, work: Workdir) -> Path:
    """A private copy of a kept package for dpkg, refused unless this user wrote it."""
    fd = _open_own(kept, work.artifacts)
    if fd is None:
        raise StageFailed(
            f"refusing to restore {kept}: xdnaforge did not write it (not a file of "
            "this user's with one name, or reached through a link)",
            hint="someone who can write artifacts/ replaced it; restore the previous "
            "version from your distribution instead",
        )
    target = work.copies / f"kept-{kept.name}"
    _copy(os.fdopen(fd, "rb"), target)
    return target


def read_own_record(path: Path, anchor: Path) -> dict[str, Any] | None:
    """The record at `path` when this user wrote it; None when there is none. Root reads
    install.json to know what to purge and restore: one the builder wrote is refused."""
    if not os.path.lexists(path):
        return None
    fd = _open_regular(path, anchor)
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if st.st_uid != os.geteuid() or st.st_nlink != 1:
            raise StageFailed(
                f"refusing {path}: it is owned by uid {st.st_uid} and has {st.st_nlink} "
                f"name(s); the install wrote it as uid {os.geteuid()} with one",
                hint="someone who can write artifacts/ replaced it; roll back by hand with "
                "dpkg (the commands an install prints)",
            )
        text = handle.read().decode("utf-8", errors="replace")
    return parse_record(text, path)
