"""Whom validation speaks for: site.yaml's npu_user, else the installer in install.json."""

from __future__ import annotations

import json
from pathlib import Path

from xdnaforge.hardware.npu_user import as_user, installing_user, lookup, named_user, parse_passwd


def install_record(artifacts: Path, root: Path, user: str, state: str = "installed") -> None:
    path = artifacts / "t/install.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {"schema": 1, "kind": "install", "root": str(root), "user": user, "state": state}
        )
    )


def test_site_yaml_wins_over_the_installer(tmp_path: Path) -> None:
    install_record(tmp_path, tmp_path, "me")
    assert named_user("alice", tmp_path, tmp_path) == ("alice", "site.yaml npu_user")
    assert named_user(None, tmp_path, tmp_path) == ("me", "t/install.json")


def test_a_rolled_back_or_foreign_install_names_nobody(tmp_path: Path) -> None:
    install_record(tmp_path, tmp_path / "elsewhere", "me")
    assert named_user(None, tmp_path, tmp_path) is None
    install_record(tmp_path, tmp_path, "me", state="rolled back")
    assert named_user(None, tmp_path, tmp_path) is None


def test_the_user_comes_from_the_sysroots_passwd(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/passwd").write_text(
        "root:x:0:0::/root:/bin/sh\nme:x:1000:1001::/home/me:/bin/sh\n"
    )
    user = lookup("me", "site.yaml npu_user", tmp_path)
    assert user is not None
    assert (user.uid, user.gid) == (1000, 1001)
    assert as_user(user) == ["runuser", "-u", "me", "--"]
    assert lookup("nobody-here", "x", tmp_path) is None
    assert parse_passwd("broken line\n", "broken") is None


def test_sudo_s_caller_is_the_installer() -> None:
    assert installing_user({"SUDO_USER": "me", "USER": "root"}) == "me"
    assert installing_user({"SUDO_USER": "root"}) != ""
