"""Build environments as data: the site's environments: entries and the choice for a recipe."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from xdnaforge.config.envspec import EnvironmentSpec, choose_environment
from xdnaforge.config.site import load_site
from xdnaforge.errors import ConfigError

TWIN = """environments:
  ubuntu-26.04:
    kind: rootfs
    suite: forky
    mirror: http://deb.debian.org/debian
    script: sid
    twin: true
    compilers: {CC: gcc-15, CXX: g++-15}
    packages: [gcc-15, g++-15]
  ubuntu-24.04:
    kind: podman
    image: docker.io/library/ubuntu@sha256:DIGESTHEX
  debian-12:
    kind: host
""".replace("DIGESTHEX", "a" * 64)


DIGEST = "sha256:" + "a" * 64


def site_with(tmp_path: Path, text: str) -> tuple[EnvironmentSpec, ...]:
    (tmp_path / "site.yaml").write_text(text)
    return load_site(tmp_path, {}).environments


def test_site_entries_are_read(tmp_path: Path) -> None:
    twin, image, host = site_with(tmp_path, TWIN)
    assert (twin.name, twin.kind, twin.suite, twin.script, twin.twin) == (
        "ubuntu-26.04",
        "rootfs",
        "forky",
        "sid",
        True,
    )
    assert twin.compilers == (("CC", "gcc-15"), ("CXX", "g++-15"))
    assert twin.components == ("main",)  # a Debian archive has no universe
    assert twin.origin == "site.yaml:2"  # the line of its key
    assert (
        twin.describe() == "ubuntu-26.04 (twin: rootfs of forky from http://deb.debian.org/debian)"
    )
    assert (image.kind, image.image) == ("podman", f"docker.io/library/ubuntu@{DIGEST}")
    assert host.kind == "host"


def test_site_entry_mistakes_are_all_reported(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text(
        "environments:\n"
        "  ubuntu:\n    kind: rootfs\n"
        "  ubuntu-24.04:\n    kind: podmn\n"
        "  debian-12:\n    kind: host\n    suite: bookworm\n"
        "  fedora-41:\n    kind: docker\n"
        "  ubuntu-26.04:\n    kind: rootfs\n    twin: yes please\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_site(tmp_path, {})
    text = str(caught.value)
    assert "environments.ubuntu: is not <distro>-<release>" in text
    assert (
        "environments.ubuntu-24.04.kind: expected one of host, rootfs, podman, docker, "
        "got a string of 5 characters (did you mean 'podman'?)"
    ) in text
    assert "environments.debian-12.suite: does not apply to kind host" in text
    assert "kind docker needs an image" in text
    assert (
        "environments.ubuntu-26.04.twin: expected true or false, got a string of 10 characters"
    ) in text
    assert "podmn" not in text
    assert "please" not in text


def test_choice_site_entry_then_host_then_default_rootfs(tmp_path: Path) -> None:
    entries = site_with(tmp_path, TWIN)
    chosen = choose_environment(("ubuntu", "26.04"), ("debian", "12"), entries)
    assert chosen.twin
    same = choose_environment(("ubuntu", "22.04"), ("ubuntu", "22.04"), entries)
    assert same.kind == "host"
    assert "this host runs ubuntu 22.04" in same.reason
    other = choose_environment(("ubuntu", "22.04"), ("debian", "12"), entries)
    assert (other.kind, other.suite, other.mirror) == (
        "rootfs",
        "jammy",
        "http://archive.ubuntu.com/ubuntu",
    )
    assert other.components == ("main", "universe")
    assert "this host runs debian 12" in other.reason
    # `host` on a host of another distro cannot be used: the choice says why
    wrong = choose_environment(("debian", "12"), ("ubuntu", "26.04"), entries)
    assert wrong.kind == "host"
    assert "this host runs ubuntu 26.04, not debian 12" in wrong.reason


FPR = "F6ECB3762474EDA9D21B7022871920D1991BC93C"


def test_the_site_names_an_environments_keys_and_the_recipe_fills_in(tmp_path: Path) -> None:
    [entry] = site_with(
        tmp_path,
        "environments:\n  ubuntu-26.04:\n    kind: rootfs\n    keyring:\n"
        f"      file: /srv/mirror.gpg\n      fingerprints: [{'A' * 40}]\n"
        "      from: our mirror's admin\n",
    )
    assert entry.keyring is not None
    assert entry.keyring.fingerprints == ("A" * 40,)
    recipe_key = replace(entry.keyring, fingerprints=(FPR,), file="/usr/share/keyrings/u.gpg")
    # the site's own keys win (a mirror with its own key); the recipe's fill an entry without
    chosen = choose_environment(("ubuntu", "26.04"), ("debian", "12"), (entry,), recipe_key)
    assert chosen.keyring == entry.keyring
    bare = replace(entry, keyring=None)
    chosen = choose_environment(("ubuntu", "26.04"), ("debian", "12"), (bare,), recipe_key)
    assert chosen.keyring == recipe_key
    default = choose_environment(("ubuntu", "26.04"), ("debian", "12"), (), recipe_key)
    assert default.kind == "rootfs"
    assert default.keyring == recipe_key
    host = choose_environment(("ubuntu", "26.04"), ("ubuntu", "26.04"), (), recipe_key)
    assert host.kind == "host"
    assert host.keyring is None


def test_a_registry_image_is_taken_only_by_digest(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text(
        "environments:\n  ubuntu-24.04:\n    kind: docker\n"
        "    image: docker.io/library/ubuntu:24.04\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_site(tmp_path, {})
    text = str(caught.value)
    assert "site.yaml:4:5: environments.ubuntu-24.04.image: a registry image must be pinned" in text
    assert "ubuntu:24.04" not in text.replace("environments.ubuntu-24.04", "")
    # an image built here is the user's own
    (tmp_path / "site.yaml").write_text(
        "environments:\n  ubuntu-24.04:\n    kind: podman\n    image: localhost/ubuntu-build:1\n"
    )
    [spec] = load_site(tmp_path, {}).environments
    assert spec.image == "localhost/ubuntu-build:1"
