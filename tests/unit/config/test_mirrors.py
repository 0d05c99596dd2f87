"""Mirror rules: exact entries, owner+name directories, prefix rewrites, git's insteadOf."""

from __future__ import annotations

from pathlib import Path

from xdnaforge.config.mirrors import (
    Found,
    MirrorRules,
    git_config_files,
    owner_name,
    parse_insteadof,
    scan_directory,
)

XRT = "https://github.com/Xilinx/XRT.git"


def test_owner_plus_name_of_https_scp_and_file_urls() -> None:
    assert owner_name(XRT) == "Xilinx+XRT"
    assert owner_name("https://github.com/amd/xdna-driver/") == "amd+xdna-driver"
    assert owner_name("git@github.com:Xilinx/aie-rt.git") == "Xilinx+aie-rt"
    assert owner_name("file:///srv/up/aiebu") == "up+aiebu"
    assert owner_name("https://example.com/lonely") is None


def test_the_first_rule_that_has_a_mirror_wins_in_order() -> None:
    rules = MirrorRules(
        exact=((XRT, "/exact/xrt"),),
        named=(("Xilinx+XRT", "/named/Xilinx+XRT.git"), ("amd+xdna-driver", "/named/x")),
        rewrites=(("https://github.com/", "/rewritten/"),),
        insteadof=(("https://", "/git/"),),
    )
    assert rules.find(XRT) == Found(source="/exact/xrt", rule="mirrors")
    assert rules.find("https://github.com/amd/xdna-driver.git") == Found(
        source="/named/x", rule="mirror_dirs (amd+xdna-driver)"
    )
    assert rules.find("https://github.com/Xilinx/aiebu.git") == Found(
        source="/rewritten/Xilinx/aiebu.git", rule="mirror_rewrites"
    )
    assert rules.find("https://gitlab.com/a/b.git") == Found(
        source="/git/gitlab.com/a/b.git", rule="git insteadOf"
    )
    assert rules.find("ssh://host/a/b") is None


def test_the_longest_prefix_rewrites_as_git_does() -> None:
    rules = MirrorRules(
        rewrites=(("https://github.com/", "/all/"), ("https://github.com/Xilinx/", "/xilinx/"))
    )
    assert rules.find(XRT) == Found(source="/xilinx/XRT.git", rule="mirror_rewrites")


def test_insteadof_is_read_from_url_sections_only_in_any_case() -> None:
    text = (
        "[core]\n\tinsteadOf = not-this\n"
        '[url "file:///srv/git/"]\n\tinsteadOf = https://github.com/\n'
        "\tinsteadof = git@github.com:\n"
        '; a comment\n[URL "/m/"]\n  INSTEADOF = "https://gitlab.com/"\n'
        '[url "x"]\n\tpushInsteadOf = https://push/\n'
    )
    assert parse_insteadof(text) == [
        ("https://github.com/", "file:///srv/git/"),
        ("git@github.com:", "file:///srv/git/"),
        ("https://gitlab.com/", "/m/"),
    ]


def test_git_s_global_configuration_is_where_git_reads_it(tmp_path: Path) -> None:
    assert git_config_files({"HOME": str(tmp_path)}) == [
        tmp_path / ".config/git/config",
        tmp_path / ".gitconfig",
    ]
    assert git_config_files({"GIT_CONFIG_GLOBAL": "/x"}) == [Path("/x")]


def test_a_mirror_directory_holds_bare_clones_and_repo_subdirectories(tmp_path: Path) -> None:
    (tmp_path / "amd+xdna-driver.git/objects").mkdir(parents=True)
    (tmp_path / "Xilinx+XRT/repo/objects").mkdir(parents=True)
    (tmp_path / "microsoft+GSL/.git").mkdir(parents=True)
    (tmp_path / "not-a-mirror/objects").mkdir(parents=True)
    (tmp_path / "empty+one").mkdir()
    assert scan_directory(tmp_path) == [
        ("Xilinx+XRT", str(tmp_path / "Xilinx+XRT/repo")),
        ("amd+xdna-driver", str(tmp_path / "amd+xdna-driver.git")),
        ("microsoft+GSL", str(tmp_path / "microsoft+GSL")),
    ]
    assert scan_directory(tmp_path / "absent") == []


def test_every_local_place_a_rule_points_into_is_listed_once() -> None:
    rules = MirrorRules(
        exact=((XRT, "/m/xrt"), ("https://a/b", "https://mirror/b")),
        named=(("a+b", "/d/a+b"),),
        rewrites=(("https://github.com/", "/m/xrt"),),
        insteadof=(("https://x/", "https://y/"),),
    )
    assert rules.local_roots() == ("/m/xrt", "/d/a+b")


def test_without_a_home_no_user_configuration_is_read() -> None:
    assert git_config_files({}) == []
