"""What rebuild-check --buildinfo says before it builds: pins that are not the recipe's, and
each recorded build dependency the environment has at another version (or not at all)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from xdnaforge.environments.rebuild_view import nearest
from xdnaforge.stages.rebuild_buildinfo import environment_differences, pin_differences
from xdnaforge.state.buildinfo import BuildInfo

C, D = "c" * 40, "d" * 40


def info(**changes: Any) -> BuildInfo:
    values: dict[str, Any] = {
        "source": "xdna-driver",
        "binary": ("xrt-base",),
        "architecture": "amd64",
        "version": "2.20.0",
        "checksums": (),
        "build_origin": "Ubuntu",
        "build_architecture": "amd64",
        "build_date": "",
        "build_path": "/xdnaforge/work",
        "environment": (),
        "installed_build_depends": (("cmake", "4.2.3-2"), ("gcc-15", "15.2")),
        "source_commit": C,
        "submodules": (("xrt", D),),
        "patches": (("ubuntu26/0001-a.patch", "e" * 64),),
    }
    values.update(changes)
    return BuildInfo(**values)


def plan(commit: str = C, xrt: str = D, patch: str = "e" * 64) -> Any:
    pinned = SimpleNamespace(commit=commit, submodules=(SimpleNamespace(path="xrt", commit=xrt),))
    return SimpleNamespace(
        recipe=SimpleNamespace(pinned=pinned),
        patches=(SimpleNamespace(set="ubuntu26", file="0001-a.patch", sha256=patch),),
    )


def test_the_recipes_own_pins_are_no_difference() -> None:
    assert pin_differences(info(), plan()) == []


def test_each_other_pin_is_named_with_both_values() -> None:
    said = pin_differences(info(), plan(commit="1" * 40, xrt="2" * 40, patch="f" * 64))
    assert said == [
        f"source {C}, the recipe pins {'1' * 40}",
        f"xrt {D}, the recipe pins {'2' * 40}",
        f"patch ubuntu26/0001-a.patch: sha256 {'e' * 64} in the .buildinfo, sha256 {'f' * 64} here",
    ]


def test_a_recorded_version_the_environment_lacks_is_named_with_the_one_used() -> None:
    assert environment_differences(info(), {"cmake": "4.2.3-2", "gcc-15": "15.2"}) == []
    [newer, gone] = environment_differences(info(), {"cmake": "4.3.0-1"})
    assert newer["note"] == (
        "cmake 4.2.3-2 is not in this environment; built with 4.3.0-1, the nearest it has"
    )
    assert (gone["package"], gone["used"]) == ("gcc-15", "absent")
    assert gone["note"].endswith("built without it")


def test_the_nearest_version_is_the_recorded_one_else_the_newest_older_else_the_oldest_newer() -> (
    None
):
    offered = ["4.3.0-1", "4.2.3-2ubuntu2", "4.1.0-1"]
    assert nearest("4.2.3-2ubuntu2", offered) == "4.2.3-2ubuntu2"
    assert nearest("4.2.3-2ubuntu3", offered) == "4.2.3-2ubuntu2"
    assert nearest("4.0.0-1", offered) == "4.1.0-1"
    assert nearest("1:1.0-1", offered) == "4.3.0-1"  # an epoch sorts after every version
    assert nearest("4.0", []) is None


def test_what_the_archive_still_has_is_said_beside_what_was_used() -> None:
    installed = {"cmake": "4.3.0-1", "gcc-15": "15.2"}
    [cmake] = environment_differences(info(), installed, {"cmake": ["4.3.0-1", "4.2.3-1"]})
    assert cmake["archive"] == "the archive no longer has 4.2.3-2; the nearest it has is 4.2.3-1"
    assert cmake["note"].endswith(
        "(the archive no longer has 4.2.3-2; the nearest it has is 4.2.3-1)"
    )
    [kept] = environment_differences(info(), installed, {"cmake": ["4.3.0-1", "4.2.3-2"]})
    assert kept["archive"].startswith(
        "the archive still has 4.2.3-2: `apt-get install cmake=4.2.3-2`"
    )
