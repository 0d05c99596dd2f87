"""The rebuild's view: which version each recorded build dependency gets (the recorded one,
else the nearest the archive has, else none), what is said of those it could not get, and the
mount and apt argv; the mount points it must unmount, read from /proc/self/mountinfo."""

from __future__ import annotations

from pathlib import Path

import pytest

from xdnaforge.config.envspec import EnvironmentSpec
from xdnaforge.environments import rebuild_view
from xdnaforge.environments.rebuild_view import (
    Choice,
    choose,
    differences,
    install_argv,
    mount_argv,
    mounts_below,
    nearest,
)

RECORDED = (("cmake", "4.2.3-1"), ("libfoo-dev", "1.5-1"), ("gone", "1.0"), ("same", "2"))


def test_the_recorded_version_is_installed_where_the_archive_has_it() -> None:
    offered = {"cmake": ["4.3.0-1", "4.2.3-1"], "libfoo-dev": ["2.0-1"], "same": ["2"]}
    here = {"cmake": "4.3.0-1", "libfoo-dev": "2.0-1", "same": "2"}
    chosen = {c.package: c for c in choose(RECORDED, here, offered)}
    assert chosen["cmake"] == Choice(
        "cmake", "4.2.3-1", "4.3.0-1", "4.2.3-1", "installing cmake=4.2.3-1"
    )
    assert "same" not in chosen  # the environment already has it: nothing is installed


def test_the_nearest_is_installed_where_the_recorded_version_is_gone() -> None:
    offered = {"libfoo-dev": ["1.0-1", "2.0-1"]}
    [choice] = choose([("libfoo-dev", "1.5-1")], {"libfoo-dev": "2.0-1"}, offered)
    assert choice.version == "1.0-1"  # the newest older one
    assert (
        choice.note == "the archive no longer has 1.5-1; installing the nearest, libfoo-dev=1.0-1"
    )
    # only newer ones: the oldest of them
    assert nearest("1.0", ["3.0", "2.0"]) == "2.0"
    assert nearest("1.0", []) is None


def test_nothing_is_installed_where_the_environment_has_the_nearest_or_the_archive_none() -> None:
    chosen = choose(
        [("libfoo-dev", "1.5-1"), ("gone", "1.0")],
        {"libfoo-dev": "1.0-1"},
        {"libfoo-dev": ["1.0-1", "2.0-1"]},
    )
    assert [(c.package, c.version) for c in chosen] == [("libfoo-dev", None), ("gone", None)]
    assert (
        chosen[0].note == "the archive no longer has 1.5-1; the environment has the nearest, 1.0-1"
    )
    assert chosen[1].note == "the archive has no version of gone"


def test_each_version_the_view_could_not_have_is_named_with_the_one_used() -> None:
    choices = [
        Choice("cmake", "4.2.3-1", "4.3.0-1", "4.2.3-1", "installing cmake=4.2.3-1"),
        Choice("libfoo-dev", "1.5-1", "2.0-1", "1.0-1", "..."),
        Choice("gone", "1.0", None, None, "the archive has no version of gone"),
    ]
    after = {"cmake": "4.3.0-1", "libfoo-dev": "1.0-1", "same": "2"}
    found = differences(RECORDED, after, choices, {"cmake": "E: Broken packages"})
    assert [(d["package"], d["used"]) for d in found] == [
        ("cmake", "4.3.0-1"),
        ("libfoo-dev", "1.0-1"),
        ("gone", "absent"),
    ]
    assert found[0]["note"] == (
        "cmake 4.2.3-1 could not be had (apt could not install 4.2.3-1 (E: Broken packages)); "
        "built with 4.3.0-1"
    )
    assert found[1]["archive"] == "the archive no longer has 1.5-1; the nearest it has is 1.0-1"
    assert found[2]["note"] == (
        "gone 1.0 could not be had (the archive has no version of gone); built with absent"
    )
    assert differences(RECORDED[:1], {"cmake": "4.2.3-1"}, choices, {}) == []


def test_the_overlay_and_the_install_argv() -> None:
    assert mount_argv(Path("/r/usr"), Path("/v/u/usr"), Path("/v/w/usr"), Path("/v/root/usr")) == [
        "mount",
        "-t",
        "overlay",
        "overlay",
        "-o",
        "lowerdir=/r/usr,upperdir=/v/u/usr,workdir=/v/w/usr",
        "/v/root/usr",
    ]
    assert install_argv([("cmake", "4.2.3-1")]) == [
        "apt-get",
        "install",
        "-y",
        "--no-install-recommends",
        "--allow-downgrades",
        "--no-remove",
        "cmake=4.2.3-1",
    ]


MOUNTINFO = """\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
90 22 0:50 / /b/rebuild/envs/x/root/usr rw shared:40 - overlay overlay rw,lowerdir=/usr
91 22 0:51 / /b/rebuild/envs/x/root/var rw shared:41 - overlay overlay rw,lowerdir=/r/var
92 91 0:52 / /b/rebuild/envs/x/root/var/a\\040b rw shared:42 - tmpfs tmpfs rw
93 22 0:53 / /b/rebuild/envs/xy/root rw shared:43 - tmpfs tmpfs rw
"""


def test_the_mounts_below_the_view_deepest_first() -> None:
    assert mounts_below(MOUNTINFO, Path("/b/rebuild/envs/x")) == [
        Path("/b/rebuild/envs/x/root/var/a b"),
        Path("/b/rebuild/envs/x/root/usr"),
        Path("/b/rebuild/envs/x/root/var"),
    ]
    assert mounts_below(MOUNTINFO, Path("/elsewhere")) == []


def test_without_root_no_view_is_made_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    spec = EnvironmentSpec(distro="testdistro", release="1", kind="rootfs", origin="t", reason="t")
    with pytest.raises(rebuild_view.ViewRefused, match=r"needs root \(mount -t overlay\)"):
        rebuild_view.open_view(spec, tmp_path / "shared", tmp_path / "view", "/usr/bin/bwrap")
    assert list(tmp_path.iterdir()) == []
