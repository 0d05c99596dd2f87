from __future__ import annotations

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
