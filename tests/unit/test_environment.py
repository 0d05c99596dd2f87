"""Build environments as data: site entries, the choice for a recipe, debootstrap's script and
faults, Release facts, a twin's identity, the sandbox argv, the dpkg status parser."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from tests.conftest import DATA
from xdnaforge.env_container import engine_fault
from xdnaforge.env_create import (
    _expired,
    debootstrap_fault,
    debootstrap_script,
    os_release,
    release_facts,
)
from xdnaforge.envspec import EnvironmentSpec, choose_environment
from xdnaforge.errors import ConfigError
from xdnaforge.sandbox import (
    WORK_INSIDE,
    Binds,
    RootEntry,
    bwrap_fault,
    container_argv,
    host_argv,
    rootfs_argv,
)
from xdnaforge.site import load_site
from xdnaforge.tools.dpkg import parse_status

RECORDED = DATA / "recordings/debootstrap/1.0.128"
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
    image: docker.io/library/ubuntu:24.04
  debian-12:
    kind: host
"""


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
    assert (image.kind, image.image) == ("podman", "docker.io/library/ubuntu:24.04")
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
    assert "'ubuntu' is not <distro>-<release>" in text
    assert "'podmn' is not one of host, rootfs, podman, docker (did you mean 'podman'?)" in text
    assert "environments.debian-12.suite: 'suite' does not apply to kind host" in text
    assert "kind docker needs an image" in text
    assert "environments.ubuntu-26.04.twin: expected true or false" in text


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


def spec(**changes: object) -> EnvironmentSpec:
    values: dict[str, object] = {
        "distro": "ubuntu",
        "release": "26.04",
        "kind": "rootfs",
        "origin": "site.yaml:3",
        "reason": "test",
        "suite": "forky",
        "mirror": "http://deb.debian.org/debian",
        "twin": True,
    }
    values.update(changes)
    return EnvironmentSpec(**values)  # type: ignore[arg-type]


def test_debootstrap_without_a_script_for_the_suite_uses_sid(tmp_path: Path) -> None:
    (tmp_path / "sid").write_text("")
    (tmp_path / "bookworm").write_text("")
    script, note = debootstrap_script(spec(), tmp_path)
    assert script == str(tmp_path / "sid")
    assert note == "the installed debootstrap has no script for forky; using its sid script"
    assert debootstrap_script(spec(suite="bookworm"), tmp_path) == (
        str(tmp_path / "bookworm"),
        None,
    )


@pytest.mark.parametrize(
    ("recording", "cause"),
    [
        ("unknown-suite.txt", "the archive http://deb.debian.org/debian has no suite 'forky'"),
        ("unreachable.txt", "the archive http://deb.debian.org/debian cannot be reached"),
    ],
)
def test_debootstrap_faults_are_one_line(recording: str, cause: str) -> None:
    error = debootstrap_fault(spec(), (RECORDED / recording).read_text())
    assert error.message == f"environment ubuntu-26.04: {cause}"
    assert error.hint


def test_engine_that_cannot_start_containers() -> None:
    # podman in a nested sandbox, and docker without its daemon (recorded on this machine)
    podman = (
        "Error: crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted: OCI permission denied"
    )
    assert "cannot start containers here (setrlimit refused" in engine_fault("podman", podman)
    docker = (
        "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
        "Is the docker daemon running?"
    )
    assert engine_fault("docker", docker) == (
        "docker is installed but its service is not reachable by this user"
    )


def test_release_facts_and_expiry(tmp_path: Path) -> None:
    lists = tmp_path / "var/lib/apt/lists"
    lists.mkdir(parents=True)
    (lists / "deb.debian.org_debian_dists_forky_InRelease").write_text(
        "Origin: Debian\nSuite: testing\nCodename: forky\n"
        "Date: Fri, 30 Oct 2026 08:08:01 UTC\nValid-Until: Fri, 06 Nov 2026 08:08:01 UTC\n"
    )
    facts = release_facts(tmp_path)
    entry = facts["deb.debian.org_debian_dists_forky_InRelease"]
    assert entry["Date"] == "Fri, 30 Oct 2026 08:08:01 UTC"
    assert len(entry["sha256"]) == 64
    before = datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)
    after = datetime.datetime(2026, 11, 30, tzinfo=datetime.UTC)
    assert _expired(facts, before) == []
    assert _expired(facts, after) == [
        "deb.debian.org_debian_dists_forky_InRelease (valid until Fri, 06 Nov 2026 08:08:01 UTC)"
    ]


def test_twin_presents_the_target_identity() -> None:
    text = os_release(spec(), "Debian GNU/Linux forky/sid")
    assert "\nID=ubuntu\n" in text
    assert '\nVERSION_ID="26.04"\n' in text
    assert "twin on Debian GNU/Linux forky/sid" in text


def test_rootfs_argv_binds_and_namespaces() -> None:
    entries = [
        RootEntry("bin", "usr/bin", Path("/env/root/bin")),
        RootEntry("usr", None, Path("/env/root/usr")),
        RootEntry("proc", None, Path("/env/root/proc")),
        RootEntry("srv", None, Path("/env/root/srv")),
    ]
    binds = Binds(writable=(Path("/srv/build/t"),), readonly=(Path("/srv/cache"),))
    argv = rootfs_argv("bwrap", entries, binds, cwd=Path("/srv/build/t/src"))
    text = " ".join(argv)
    assert "--symlink usr/bin /bin" in text
    assert "--ro-bind /env/root/usr /usr" in text
    assert "/env/root/proc" not in text  # bwrap mounts its own /proc
    assert "/env/root/srv" not in text  # the host's /srv/... is bound there instead
    assert "--bind /srv/build/t /srv/build/t" in text
    assert "--ro-bind /srv/cache /srv/cache" in text
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent"):
        assert flag in argv
    assert argv[-4:] == ["/", "--chdir", "/srv/build/t/src", "--"]
    assert argv.index("--remount-ro") > argv.index("--bind")


def test_container_argv_has_no_network_and_the_same_binds() -> None:
    binds = Binds(writable=(Path("/w"),), readonly=(Path("/c"),))
    argv = container_argv("podman", "ubuntu:24.04", binds, cwd=Path("/w"), environment=("HOME",))
    assert argv[:5] == ["podman", "run", "--rm", "--network", "none"]
    assert "/w:/w:rw" in argv
    assert "/c:/c:ro" in argv
    assert argv[-1] == "ubuntu:24.04"


def test_the_build_tree_is_bound_at_one_canonical_path() -> None:
    """build/T and build/rebuild/T are both seen at /xdnaforge/work, in every wrapper."""
    entries = [
        RootEntry("usr", None, Path("/env/root/usr")),
        RootEntry("xdnaforge", None, Path("/env/root/xdnaforge")),
    ]
    for tree in (Path("/srv/build/t"), Path("/srv/build/rebuild/t")):
        binds = Binds(writable=(), readonly=(), moved=((tree, WORK_INSIDE),))
        assert binds.inside(tree / "src/xrt") == WORK_INSIDE / "src/xrt"
        assert binds.inside(Path("/srv/cache")) == Path("/srv/cache")
        text = " ".join(rootfs_argv("bwrap", entries, binds, cwd=WORK_INSIDE / "src"))
        assert f"--bind {tree} /xdnaforge/work" in text
        assert "/env/root/xdnaforge" not in text  # the environment's own entry is hidden
        assert text.endswith("--chdir /xdnaforge/work/src --")
        argv = container_argv("podman", "i", binds, cwd=WORK_INSIDE, environment=())
        assert f"{tree}:/xdnaforge/work:rw" in argv


def test_host_argv_shows_the_host_with_the_tree_at_its_canonical_path() -> None:
    entries = [
        RootEntry("bin", "usr/bin", Path("/bin")),
        RootEntry("usr", None, Path("/usr")),
        RootEntry("proc", None, Path("/proc")),
        RootEntry("work", None, Path("/work")),
        RootEntry("xdnaforge", None, Path("/xdnaforge")),
    ]
    binds = Binds(writable=(), readonly=(), moved=((Path("/work/build/t"), WORK_INSIDE),))
    argv = host_argv("bwrap", entries, binds, cwd=WORK_INSIDE / "src")
    text = " ".join(argv)
    assert "--symlink usr/bin /bin" in text
    assert "--dev-bind /usr /usr" in text  # as `--dev-bind / /` showed it: writable, devices
    assert "--dev-bind /work /work" in text
    assert "--dev-bind /xdnaforge" not in text  # a host directory of that name is covered
    assert "--dev-bind /proc" not in text
    assert "--bind /work/build/t /xdnaforge/work" in text
    assert "--unshare-net" not in argv  # a host build keeps the host's network
    assert argv[-5:] == [
        "--unshare-pid",
        "--die-with-parent",
        "--chdir",
        "/xdnaforge/work/src",
        "--",
    ]


def test_bwrap_faults() -> None:
    refused = (
        "bwrap: No permissions to creating new namespace, likely because the kernel does "
        "not allow non-privileged user namespaces."
    )
    assert "refused a user namespace" in (bwrap_fault(refused) or "")
    assert bwrap_fault("make: *** [all] Error 2") is None


def test_parse_status_keeps_installed_packages_only() -> None:
    text = (
        "Package: cmake\nStatus: install ok installed\nVersion: 4.3.4-1\n"
        "Description: x\n multi-line: continued\n\n"
        "Package: old\nStatus: deinstall ok config-files\nVersion: 1\n\n"
        "Package: gcc-15\nStatus: install ok installed\nVersion: 15.3.0-4\n"
    )
    assert parse_status(text) == {"cmake": "4.3.4-1", "gcc-15": "15.3.0-4"}
