"""require_tool: a missing system tool skips the test with the reason, and fails it in CI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REQUIRE_TOOLS, require_tool


def test_a_present_tool_gives_its_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    tool = tmp_path / "dpkg-repack"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert require_tool("dpkg-repack") == str(tool)


def test_a_missing_tool_skips_with_the_package_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(REQUIRE_TOOLS, raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_tool("dpkg-repack")
    assert (
        str(skipped.value)
        == "needs dpkg-repack (Debian package dpkg-repack), which is not installed"
    )


def test_in_ci_a_missing_tool_is_a_failure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv(REQUIRE_TOOLS, "1")
    with pytest.raises(pytest.fail.Exception) as failed:
        require_tool("xz")
    assert "needs xz (Debian package xz-utils)" in str(failed.value)
    assert "install it in .ci/run" in str(failed.value)


def test_an_unlisted_tool_is_a_mistake_in_the_test() -> None:
    with pytest.raises(KeyError):
        require_tool("no-such-tool")
