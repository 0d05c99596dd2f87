"""The shipped configuration loads, and cross-file mistakes are caught."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tests.conftest import REPO
from xdnaforge.config.project import load_project
from xdnaforge.errors import ConfigError


def test_shipped_configuration_loads_with_the_seed_facts() -> None:
    project = load_project(REPO, {})
    assert set(project.recipes) == {
        "ubuntu26-compat",
        "upstream-main",
        "xdna-2.21.75",
        "ryzen-ai-ubuntu24",
        "debian-forky-archive",
        "ubuntu26-archive",
        "xdna-1.7",
        "xdna-1.8",
        "xdna-1.9",
    }
    compat = project.recipes["ubuntu26-compat"]
    assert compat.pinned.commit == "f0b7bd5fbc9d45892d050cb55701541350390b99"
    assert compat.pinned.submodules[0].commit == "021204355eeaa034ff69aae407ace2265adf047a"
    assert compat.validation.xrt_version == "2.20.0"
    assert compat.validation.firmware_version == "1.1.2.64"
    assert compat.validation.baseline is not None
    assert (
        compat.validation.baseline.gemm_tops,
        compat.validation.baseline.latency_us,
        compat.validation.baseline.throughput_ops,
    ) == (51.0, 46.0, 80547.0)
    xrt_step = compat.steps[0]
    assert xrt_step.ctest is not None
    assert (xrt_step.ctest.total, xrt_step.ctest.skipped) == (70, 2)
    assert "-nokmod" in compat.steps[1].argv
    assert compat.driver.cmd_bo_max_bytes == 32768
    expects = {c.recipe: c.expect for c in project.cells()}
    assert expects == {
        "ubuntu26-compat": "supported",
        "upstream-main": "known-broken",
        "xdna-2.21.75": "partial",
        "ryzen-ai-ubuntu24": "unverified",
        "debian-forky-archive": "unverified",
        "ubuntu26-archive": "unverified",
        "xdna-1.7": "unverified",
        "xdna-1.8": "unverified",
        "xdna-1.9": "unverified",
    }
    expected = {c.name: c.expectation() for c in project.cells()}
    assert expected["ubuntu26-npu4-upstream-main"] == (
        "known-broken: gate validate fails with exec-cmd-cmd-bo-limit"
    )
    assert expected["zimaos17-npu5"] == "partial: examine, pyxrt pass"
    vendor = project.recipes["ryzen-ai-ubuntu24"]
    assert vendor.kind == "prebuilt"
    assert [p.package for p in vendor.prebuilt] == ["xrt-base", "xrt-npu", "xrt_plugin-amdxdna"]
    assert next(p.file for p in project.patches_for(compat)).startswith("0001-cmake-boost")
    forky = project.recipes["debian-forky-archive"]
    assert forky.kind == "distro"
    assert forky.distro is not None
    assert {p.version for p in forky.distro.packages} == {"1:2.25.0-4+b1"}
    assert all(len(p.sha256) == 64 for p in forky.distro.packages)  # pinned from Debian
    assert "xrt-xocl-dkms" in {p.package for p in forky.distro.left_out}
    ubuntu = project.recipes["ubuntu26-archive"]
    assert ubuntu.distro is not None
    assert all(len(p.sha256) == 64 for p in ubuntu.distro.packages)  # pinned from Ubuntu
    # every shipped archive and build environment names the keys its archive signs with
    assert forky.distro.keyring is not None
    assert ubuntu.distro.keyring is not None
    assert "debian-archive-keyring" in forky.distro.keyring.source
    assert ubuntu.distro.keyring.fingerprints == ("F6ECB3762474EDA9D21B7022871920D1991BC93C",)
    for recipe in project.recipes.values():
        if recipe.environment is not None:
            assert recipe.environment_keyring is not None, recipe.name
    assert {p.version for p in ubuntu.distro.packages} == {"1:2.21.75+dfsg-4"}
    assert {c.npu.pci for c in project.cells() if c.recipe == "ryzen-ai-ubuntu24"} == {
        "1022:17f0",
        "1022:1502",  # the Phoenix cell
    }


def test_shipped_candidates_carry_the_upstream_pins_doit_track_read() -> None:
    """amd/xdna-driver snapshot of 2026-08-21: branch tips and their XRT gitlinks."""
    project = load_project(REPO, {})
    pins = {
        "xdna-1.7": (
            "4e5aed38f3b74a5a9a2c7a6222eaff1a8be54305",
            "8661761775a266b11992a3bd6eb08209d88aa845",
        ),
        "xdna-1.8": (
            "31c01f2019e79e13603239478dad8291a27897a5",
            "3923b2b5be55dfea72dee3c49d5cf13c02eda25a",
        ),
        "xdna-1.9": (
            "c4052fc30322f8fa0a7f388f171bcb065d6dab6b",
            "e9db9ab15f10173f8d2fc93ff92ab4c7eb09d2e6",
        ),
    }
    for name, (commit, xrt) in pins.items():
        recipe = project.recipes[name]
        assert (recipe.pinned.commit, recipe.pinned.submodules[0].commit) == (commit, xrt)
        assert recipe.pinned.track == name.removeprefix("xdna-")
        assert recipe.driver.notes is not None
        assert recipe.driver.notes.startswith("Carried unchanged from recipe")
        assert recipe.patch_sets == ()
        assert recipe.validation.baseline is None
    assert project.recipes["xdna-1.8"].validation.xrt_version == "2.25.0"


def test_every_shipped_backport_names_its_upstream_commit() -> None:
    project = load_project(REPO, {})
    for patch_set in project.patch_sets.values():
        for patch in patch_set.patches:
            if patch.header.status == "Backport":
                assert patch.header.upstream_commit is not None


def _write_series(project_dir: Path, text: str) -> None:
    (project_dir / "patches/ubuntu26/series").write_text(text, encoding="utf-8")


def test_missing_patch_file_suggests_the_close_name(project_dir: Path) -> None:
    _write_series(project_dir, "0001-cmake-boost-1.89-no-boost-sytem.patch\n")
    with pytest.raises(ConfigError) as caught:
        load_project(project_dir, {})
    text = str(caught.value)
    assert "patches/ubuntu26/series:1:1: the patch file this line names does not exist" in text
    assert "did you mean '0001-cmake-boost-1.89-no-boost-system.patch'" in text
    assert "sytem" not in text  # the line's own text is not repeated


def test_edited_patch_is_caught_by_the_pinned_digest(project_dir: Path) -> None:
    patch = project_dir / "patches/ubuntu26/0002-utils-h-include-cstdint.patch"
    patch.write_text(patch.read_text() + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_project(project_dir, {})
    assert "the patch has sha256 " in str(caught.value)
    assert "not the one this line pins" in str(caught.value)


@pytest.mark.parametrize("repository", ["elsewhere/aiebu", "xrt/src/runtime_src/aie-rt"])
def test_patch_for_a_path_outside_the_pinned_tree_is_refused(
    project_dir: Path, repository: str
) -> None:
    patch = project_dir / "patches/ubuntu26/0002-utils-h-include-cstdint.patch"
    patch.write_text(patch.read_text().replace("Repository: xrt", f"Repository: {repository}"))
    _write_series(project_dir, "0002-utils-h-include-cstdint.patch\n")
    with pytest.raises(ConfigError) as caught:
        load_project(project_dir, {})
    text = str(caught.value)
    assert (
        "the Repository: of ubuntu26/0002-utils-h-include-cstdint.patch is not the top repository"
    ) in text
    assert repository not in text


def test_patch_for_a_repository_nested_in_a_pinned_submodule_is_accepted(
    project_dir: Path,
) -> None:
    patch = project_dir / "patches/ubuntu26/0002-utils-h-include-cstdint.patch"
    patch.write_text(patch.read_text().replace("Repository: xrt", "Repository: xrt/aiebu"))
    _write_series(project_dir, "0002-utils-h-include-cstdint.patch\n")
    load_project(project_dir, {})


def test_recipe_name_must_match_its_file(project_dir: Path) -> None:
    path = project_dir / "recipes/upstream-main.yaml"
    path.rename(project_dir / "recipes/main.yaml")
    with pytest.raises(ConfigError) as caught:
        load_project(project_dir, {})
    assert "recipes/main.yaml:" in str(caught.value)
    assert "differs from the file name 'main'" in str(caught.value)


def test_site_file_problems_are_reported_with_the_rest(project_dir: Path) -> None:
    (project_dir / "site.yaml").write_text("jobz: 4\noffline: yes please\n")
    with pytest.raises(ConfigError) as caught:
        load_project(project_dir, {})
    text = str(caught.value)
    assert "site.yaml:1:1: jobz: unknown key 'jobz' (did you mean 'jobs'?)" in text
    assert "site.yaml:2:1: offline: expected true or false" in text


def test_choose_must_name_a_package_the_step_produces(project_dir: Path) -> None:
    path = project_dir / "recipes/ubuntu26-compat.yaml"
    text = path.read_text()
    produces = "      produces: [xrt-base, xrt-base-dev, xrt-npu]\n"
    assert produces in text
    path.write_text(
        text.replace(produces, produces + '      choose: {xrt-runtime: "Release/*-Runtime.deb"}\n')
    )
    with pytest.raises(ConfigError) as caught:
        load_project(project_dir, {})
    assert "build.steps[0].choose.xrt-runtime: is not in this step's produces" in (
        str(caught.value)
    )


def test_a_contract_field_both_stated_and_called_unknown_is_refused(project_dir: Path) -> None:
    recipe = project_dir / "recipes/ubuntu26-compat.yaml"
    text = recipe.read_text(encoding="utf-8")
    recipe.write_text(
        text.replace("  unknown:\n", "  unknown:\n    drm_version: not read\n", 1),
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_project(project_dir, {})
    assert "recipes/ubuntu26-compat.yaml:" in str(caught.value)
    assert "driver.unknown.drm_version: is stated above: it is not unknown" in str(caught.value)


SECRET = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI"


def _hard_link_to_a_secret(path: Path, tmp_path: Path) -> None:
    secret = tmp_path / "credentials"
    if not secret.exists():
        secret.write_text(f"name: x\n{SECRET}\n")
    path.unlink(missing_ok=True)
    os.link(secret, path)


@pytest.mark.parametrize(
    "name",
    [
        "recipes/ubuntu26-compat.yaml",
        "matrices/default.yaml",
        "patches/ubuntu26/series",
        "patches/ubuntu26/0002-utils-h-include-cstdint.patch",
    ],
)
def test_a_hard_linked_configuration_file_is_refused_unread(
    project_dir: Path, tmp_path: Path, name: str
) -> None:
    _hard_link_to_a_secret(project_dir / name, tmp_path)
    with pytest.raises(ConfigError) as caught:
        load_project(project_dir, {})
    text = str(caught.value)
    assert (
        f"{name}:1:1: has 2 hard links, so it may be another file's content: not read; "
        "copy it instead of linking it\n"
    ) in text
    assert "wJalrXUtnFEMI" not in text


@pytest.mark.skipif(os.getuid() != 0, reason="making a file a stranger's takes root")
def test_a_recipe_owned_by_a_stranger_is_refused_unread(project_dir: Path) -> None:
    recipe = project_dir / "recipes/ubuntu26-compat.yaml"
    os.chown(recipe, 54321, -1)
    with pytest.raises(ConfigError) as caught:
        load_project(project_dir, {})
    assert str(caught.value).startswith(
        "recipes/ubuntu26-compat.yaml:1:1: is owned by uid 54321, not by root: not read; "
        "chown it to root\n"
    )


def test_a_symbolic_link_inside_the_project_is_still_read(project_dir: Path) -> None:
    recipe = project_dir / "recipes/ubuntu26-compat.yaml"
    kept = project_dir / "kept.yaml"
    recipe.rename(kept)
    recipe.symlink_to(kept)
    assert "ubuntu26-compat" in load_project(project_dir, {}).recipes


def test_a_recipe_digest_is_of_the_bytes_that_were_parsed(project_dir: Path) -> None:
    recipe = project_dir / "recipes/ubuntu26-compat.yaml"
    loaded = load_project(project_dir, {}).recipes["ubuntu26-compat"]
    assert loaded.digest == hashlib.sha256(recipe.read_bytes()).hexdigest()
