from __future__ import annotations

import os
from pathlib import Path

import pytest

from xdnaforge.config.site import load_site
from xdnaforge.errors import ConfigError


def test_defaults_without_a_file(tmp_path: Path) -> None:
    site = load_site(tmp_path, {})
    assert site.origin == "defaults"
    assert site.build_dir == tmp_path / "build"
    assert site.artifacts_dir == tmp_path / "artifacts"
    assert site.cache_dir == tmp_path / "build/cache"
    assert site.offline is False
    assert site.jobs is None
    assert site.sysroot == Path("/")


def test_relative_paths_and_mirrors_are_relative_to_the_site_file(tmp_path: Path) -> None:
    (tmp_path / "lab").mkdir()
    site_file = tmp_path / "lab/site.yaml"
    site_file.write_text(
        "build_dir: out\n"
        "offline: true\n"
        "jobs: 3\n"
        "mirrors:\n"
        "  https://github.com/amd/xdna-driver.git: mirrors/xdna-driver.git\n"
        "  https://github.com/Xilinx/XRT.git: https://git.lab.example/XRT.git\n"
    )
    site = load_site(tmp_path, {"XDNAFORGE_SITE": str(site_file)})
    assert site.build_dir == tmp_path / "lab/out"
    assert site.offline is True
    assert site.jobs == 3
    assert site.mirror_for("https://github.com/amd/xdna-driver.git") == str(
        tmp_path / "lab/mirrors/xdna-driver.git"
    )
    assert site.mirror_for("https://github.com/Xilinx/XRT.git") == "https://git.lab.example/XRT.git"
    assert site.mirror_for("https://example.invalid/x.git") is None


def test_named_site_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="XDNAFORGE_SITE names a file that does not exist"):
        load_site(tmp_path, {"XDNAFORGE_SITE": str(tmp_path / "nope.yaml")})


def test_sysroot_from_the_environment_wins(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text("sysroot: /elsewhere\n")
    assert load_site(tmp_path, {"XDNAFORGE_SYSROOT": "/fake"}).sysroot == Path("/fake")
    assert load_site(tmp_path, {}).sysroot == Path("/elsewhere")


def test_a_hard_linked_site_file_is_refused_unread(tmp_path: Path) -> None:
    secret = tmp_path / "credentials"
    secret.write_text("password: wJalrXUtnFEMI\n")
    os.link(secret, tmp_path / "site.yaml")
    with pytest.raises(ConfigError) as caught:
        load_site(tmp_path, {})
    assert str(caught.value).splitlines()[0] == (
        "site.yaml:1:1: has 2 hard links, so it may be another file's content: not read; "
        "copy it instead of linking it"
    )
    assert "wJalrXUtnFEMI" not in str(caught.value)


def test_a_symbolic_link_to_a_site_file_elsewhere_is_read(tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    lab.mkdir()
    (lab / "site.yaml").write_text("jobs: 3\n")
    project = tmp_path / "project"
    project.mkdir()
    named = project / "site-link.yaml"
    named.symlink_to(lab / "site.yaml")
    assert load_site(project, {"XDNAFORGE_SITE": str(named)}).jobs == 3


@pytest.mark.skipif(os.getuid() != 0, reason="making a file a stranger's takes root")
def test_a_named_site_file_of_a_stranger_is_refused_unread(tmp_path: Path) -> None:
    site = tmp_path / "elsewhere.yaml"
    site.write_text("password: wJalrXUtnFEMI\n")
    os.chown(site, 54321, -1)
    project = tmp_path / "project"
    project.mkdir()
    with pytest.raises(ConfigError) as caught:
        load_site(project, {"XDNAFORGE_SITE": str(site)})
    assert str(caught.value).splitlines()[0] == (
        f"{site}:1:1: is owned by uid 54321, not by root: not read; chown it to root"
    )


def test_site_values_are_described_not_repeated(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text(
        "jobs: wJalrXUtnFEMI\n"
        "containment: wJalrXUtnFEMI\n"
        "mirrors: {'https://u:wJalrXUtnFEMI@x': 3}\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_site(tmp_path, {})
    assert "wJalrXUtnFEMI" not in str(caught.value)
    assert str(caught.value).splitlines() == [
        "site.yaml:1:1: jobs: expected an integer, got a string of 13 characters",
        "site.yaml:2:1: containment: expected one of pid-namespace, process-group, got a string "
        "of 13 characters",
        "site.yaml:3:11: mirrors.<a key of 25 characters>: expected a string, got an integer "
        "of 1 digit",
        "    hint: YAML read the unquoted text as an integer; quote it",
        "3 problems in the configuration; nothing was run.",
    ]
