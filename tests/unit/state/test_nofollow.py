"""Walking into a directory another user can write: no link below the anchor, and as root
none that root does not own, is followed; what is missing is made."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from xdnaforge.state.nofollow import LinkRefused, is_own_file, open_directory

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="links owned by another user need root")


def same(fd: int, path: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == path.stat().st_ino
    finally:
        os.close(fd)


def test_missing_directories_below_the_anchor_are_made(tmp_path: Path) -> None:
    fd = open_directory(tmp_path / "artifacts/T/kept", below=tmp_path, create=True)
    assert same(fd, tmp_path / "artifacts/T/kept")


def test_without_create_a_missing_directory_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="artifacts"):
        open_directory(tmp_path / "artifacts/T", below=tmp_path)


def test_a_link_below_the_anchor_is_refused_and_nothing_is_made_where_it_points(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "etc"
    elsewhere.mkdir()
    (tmp_path / "artifacts").mkdir()
    (tmp_path / "artifacts/T").symlink_to(elsewhere)
    with pytest.raises(LinkRefused) as refused:
        open_directory(tmp_path / "artifacts/T/kept", below=tmp_path, create=True)
    assert refused.value.message == (
        f"refusing to write through {tmp_path}/artifacts/T: it is a symbolic link "
        f"(owned by uid {os.geteuid()})"
    )
    assert list(elsewhere.iterdir()) == []


def test_the_anchor_itself_may_be_reached_through_a_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "project").symlink_to("real")
    fd = open_directory(tmp_path / "project/artifacts", below=tmp_path / "project", create=True)
    assert same(fd, tmp_path / "real/artifacts")


def test_after_an_absolute_link_above_the_anchor_the_rest_is_still_below_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "real/artifacts").mkdir(parents=True)
    (tmp_path / "project").symlink_to(tmp_path / "real")
    (tmp_path / "real/artifacts/T").symlink_to(tmp_path)
    with pytest.raises(LinkRefused, match="artifacts/T: it is a symbolic link"):
        open_directory(tmp_path / "project/artifacts/T", below=tmp_path / "project")


def test_the_links_on_the_way_to_the_anchor_are_above_it_too(tmp_path: Path) -> None:
    (tmp_path / "base/real").mkdir(parents=True)
    (tmp_path / "alias").symlink_to("base")
    (tmp_path / "project").symlink_to(tmp_path / "alias/real")
    fd = open_directory(tmp_path / "project/artifacts", below=tmp_path / "project", create=True)
    assert same(fd, tmp_path / "base/real/artifacts")


def test_a_file_in_the_way_is_refused(tmp_path: Path) -> None:
    (tmp_path / "artifacts").write_text("")
    with pytest.raises(LinkRefused, match="artifacts: it is not a directory"):
        open_directory(tmp_path / "artifacts/T", below=tmp_path, create=True)


def test_a_path_outside_the_anchor_is_a_bug(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not below"):
        open_directory(tmp_path, below=tmp_path / "artifacts")


@as_root
def test_as_root_a_link_another_user_owns_is_not_followed_anywhere(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    link = tmp_path / "build"
    link.symlink_to("real")
    os.lchown(link, 65534, 65534)
    with pytest.raises(LinkRefused, match="it is a symbolic link owned by uid 65534, not by root"):
        open_directory(link / "logs", create=True)
    assert list((tmp_path / "real").iterdir()) == []


@as_root
def test_as_root_a_link_root_owns_is_followed_as_lib_to_usr_lib_is(tmp_path: Path) -> None:
    (tmp_path / "usr/lib").mkdir(parents=True)
    (tmp_path / "lib").symlink_to("usr/lib")
    assert same(open_directory(tmp_path / "lib"), tmp_path / "usr/lib")


def test_own_files_are_regular_with_one_name(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.write_text("")
    fd = os.open(mine, os.O_RDONLY)
    try:
        assert is_own_file(fd)
        os.link(mine, tmp_path / "second")
        assert not is_own_file(fd)
    finally:
        os.close(fd)
