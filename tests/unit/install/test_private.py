"""What root takes from and writes into the builder's directories while it installs: private
copies, the held log, kept packages, install.json read back."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import pytest

from tests.debs import Spec, deb_bytes
from xdnaforge.errors import StageFailed
from xdnaforge.install import private
from xdnaforge.state.nofollow import LinkRefused
from xdnaforge.state.paths import Workspace

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="files another user owns need root")


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    workspace = Workspace("T", tmp_path / "build", tmp_path / "artifacts")
    workspace.packages.mkdir(parents=True)
    return workspace


def deb(folder: Path, package: str = "xrt-base", version: str = "2.20.0") -> Path:
    path = folder / f"{package}_{version}_amd64.deb"
    path.write_bytes(deb_bytes(Spec(package=package, version=version)))
    return path


def chosen(path: Path) -> dict[str, str]:
    return {"file": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def test_what_the_commands_log_reaches_install_log_and_messages_name_it(
    space: Workspace,
) -> None:
    def fail(work: private.Workdir) -> None:
        work.log.write_text("+ dpkg -i ...\n")
        raise StageFailed(f"command failed\nfull log: {work.log}", hint=f"see {work.log}")

    def install(seen: list[private.Workdir]) -> None:
        with private.workdir(space) as work:
            seen.append(work)
            fail(work)

    seen: list[private.Workdir] = []
    with pytest.raises(StageFailed) as failed:
        install(seen)
    log = space.logs / "install.log"
    assert log.read_text() == "+ dpkg -i ...\n"
    assert failed.value.message == f"command failed\nfull log: {log}"
    assert failed.value.hint == f"see {log}"
    assert not seen[0].path.exists()


def test_the_private_directory_is_only_its_owners(space: Workspace) -> None:
    with private.workdir(space) as work:
        st = work.path.stat()
        assert (st.st_mode & 0o777, st.st_uid) == (0o700, os.geteuid())


@as_root
def test_as_root_the_private_directory_is_not_made_in_the_builders_tmpdir(
    space: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = tmp_path / "tmp"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)  # sudo -E kept the builder's TMPDIR
    monkeypatch.setattr(tempfile, "tempdir", str(theirs))
    with private.workdir(space) as work:
        assert work.path.parent == Path(os.path.realpath("/tmp"))
    assert list(theirs.iterdir()) == []


def test_a_link_planted_for_install_log_is_refused_before_anything_runs(
    space: Workspace, tmp_path: Path
) -> None:
    space.logs.mkdir(parents=True)
    (space.logs / "install.log").symlink_to(tmp_path / "outside")
    with pytest.raises(StageFailed, match="it is a symbolic link"), private.workdir(space):
        pytest.fail("the body ran")
    assert not (tmp_path / "outside").exists()


def test_copies_are_of_the_approved_bytes(space: Workspace) -> None:
    source = deb(space.packages)
    with private.workdir(space) as work:
        copies = private.private_copies([chosen(source)], work, space.artifacts_dir.parent)
        assert [c.read_bytes() for c in copies] == [source.read_bytes()]
        assert copies[0].parent == work.copies


def test_a_file_swapped_after_the_check_is_refused(space: Workspace) -> None:
    source = deb(space.packages)
    item = chosen(source)
    source.write_bytes(source.read_bytes() + b"\0")
    with private.workdir(space) as work, pytest.raises(StageFailed, match="changed after"):
        private.private_copies([item], work, space.artifacts_dir.parent)


def test_a_link_where_a_package_was_is_not_copied(space: Workspace, tmp_path: Path) -> None:
    (tmp_path / "shadow").write_text("secret")
    link = space.packages / "xrt-base_2.20.0_amd64.deb"
    link.symlink_to(tmp_path / "shadow")
    item = {"file": str(link), "sha256": hashlib.sha256(b"secret").hexdigest()}
    with private.workdir(space) as work, pytest.raises(StageFailed, match="a symbolic link"):
        private.private_copies([item], work, space.artifacts_dir.parent)
    with pytest.raises(StageFailed, match="it is a symbolic link"):
        private.sha256(link, space.artifacts_dir.parent)


def test_kept_packages_count_only_when_this_user_wrote_them(space: Workspace) -> None:
    kept = space.records / "kept"
    kept.mkdir()
    mine = deb(kept)
    linked = deb(kept, "xrt-npu")
    os.link(linked, space.records / "second-name.deb")
    assert private.kept_versions(space) == {("xrt-base", "2.20.0"): mine}


@as_root
def test_a_kept_package_the_builder_put_there_is_not_used(space: Workspace) -> None:
    kept = space.records / "kept"
    kept.mkdir()
    planted = deb(kept)
    os.chown(planted, 65534, 65534)
    assert private.kept_versions(space) == {}
    with private.workdir(space) as work, pytest.raises(StageFailed, match="did not write it"):
        private.copy_kept(planted, work)


def test_keeping_replaces_a_planted_link_and_keeps_an_own_file(
    space: Workspace, tmp_path: Path
) -> None:
    outside = tmp_path / "passwd"
    outside.write_text("root:x:0:0\n")
    kept = space.records / "kept"
    kept.mkdir()
    source = deb(tmp_path)
    (kept / source.name).symlink_to(outside)
    folder = os.open(kept, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert private.keep(source, folder, kept) == kept / source.name
        assert outside.read_text() == "root:x:0:0\n"
        assert (kept / source.name).read_bytes() == source.read_bytes()
        source.write_bytes(b"another build")
        private.keep(source, folder, kept)
    finally:
        os.close(folder)
    assert (kept / source.name).read_bytes() != b"another build"
    assert sorted(p.name for p in kept.iterdir()) == [source.name]


def test_a_link_at_kept_is_refused(space: Workspace, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (space.records / "kept").symlink_to(tmp_path / "elsewhere")
    with (
        pytest.raises(LinkRefused, match="kept: it is a symbolic link"),
        private.kept_directory(space),
    ):
        pytest.fail("the body ran")


def record(path: Path) -> None:
    path.write_text(json.dumps({"schema": 1, "kind": "install", "installed": []}))


def test_install_json_is_read_when_this_user_wrote_it(space: Workspace) -> None:
    path = space.record("install")
    assert private.read_own_record(path, space.artifacts_dir.parent) is None
    record(path)
    assert private.read_own_record(path, space.artifacts_dir.parent) == {
        "schema": 1,
        "kind": "install",
        "installed": [],
    }
    os.link(path, space.records / "copy.json")
    with pytest.raises(StageFailed, match="and has 2 name"):
        private.read_own_record(path, space.artifacts_dir.parent)


@as_root
def test_install_json_the_builder_wrote_is_refused(space: Workspace) -> None:
    path = space.record("install")
    record(path)
    os.chown(path, 65534, 65534)
    with pytest.raises(StageFailed, match="it is owned by uid 65534"):
        private.read_own_record(path, space.artifacts_dir.parent)
