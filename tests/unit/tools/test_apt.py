"""apt's side: `apt-cache madison` output, Debian version order (dpkg's rules), the private
configuration and the exact-version download argv."""

from __future__ import annotations

import itertools
from pathlib import Path

from xdnaforge.tools.apt import (
    compare_versions,
    download_argv,
    newest,
    parse_madison,
    private_config,
)

# apt-cache madison as apt 2.6 prints it (forky and trixie-backports both configured)
MADISON = """\
   libxrt2 | 1:2.25.0-4+b1 | http://deb.debian.org/debian forky/main amd64 Packages
   libxrt2 | 1:2.25.0-4~bpo13+1 | http://deb.debian.org/debian trixie-backports/main amd64 Packages
       xrt | 1:2.25.0-4 | http://deb.debian.org/debian forky/main Sources
libxrt-npu2 | 1:2.25.0-4+b1 | http://deb.debian.org/debian forky/main amd64 Packages
"""


def test_madison_lists_binary_versions_only() -> None:
    assert parse_madison(MADISON) == {
        "libxrt2": ["1:2.25.0-4+b1", "1:2.25.0-4~bpo13+1"],
        "libxrt-npu2": ["1:2.25.0-4+b1"],
    }
    assert parse_madison("") == {}


def test_debian_version_order() -> None:
    ordered = [
        "202210.2.13.466+dfsg-8.2",  # no epoch: below every 1: version
        "1:2.21.75+dfsg-4",
        "1:2.25.0-4~bpo13+1",  # ~ sorts before the end
        "1:2.25.0-4",
        "1:2.25.0-4+b1",
        "1:2.25.0-10",  # numerically, not as text
        "2:0.1-1",
    ]
    for lower, higher in itertools.pairwise(ordered):
        assert compare_versions(lower, higher) < 0, (lower, higher)
        assert compare_versions(higher, lower) > 0, (higher, lower)
    assert compare_versions("1:2.25.0-4+b1", "1:2.25.0-4+b1") == 0
    assert compare_versions("1.0", "1.0-0") == 0
    assert newest(list(reversed(ordered))) == "2:0.1-1"
    assert newest([]) is None


def test_private_config_keeps_apt_in_its_folder(tmp_path: Path) -> None:
    line = "deb [arch=amd64 trusted=yes] file:///srv/archive forky main"
    config = private_config(tmp_path / "apt", line, as_root=True)
    text = config.read_text()
    assert f'Dir::State "{tmp_path}/apt/state/";' in text
    assert f'Dir::Etc "{tmp_path}/apt/etc/";' in text
    assert 'APT::Sandbox::User "root";' in text
    assert (tmp_path / "apt/etc/sources.list").read_text() == line + "\n"
    assert "Sandbox" not in private_config(tmp_path / "b", line, as_root=False).read_text()
    assert download_argv([("libxrt2", "1:2.25.0-4+b1")]) == [
        "apt-get",
        "-q",
        "download",
        "libxrt2=1:2.25.0-4+b1",
    ]
