"""`doit publish` for real: aptly repository, snapshot, signed publish, `aptly serve` on
127.0.0.1 and apt-get with a private configuration that verifies what it downloads."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.debs import plugin, xrt_base, xrt_npu
from tests.fakes.fixture import FakeTools
from tests.integration.apt import (
    AptClient,
    aptly_serve,
    free_port,
    make_key,
    sha256,
    stop_agent,
    write_built,
)
from tests.integration.conftest import build, run_doit
from tests.integration.upstream import Upstream, write_recipe
from xdnaforge.state import buildinfo

pytestmark = pytest.mark.tools("aptly", "gpg", "apt-get")

TARGET = "ubuntu26-compat"
PACKAGES = ("xrt-base", "xrt-npu", "xrt_plugin-amdxdna")


@pytest.fixture(autouse=True)
def no_agents_left(tmp_path: Path) -> Iterator[None]:
    """Every gpg-agent the test's keys started is stopped with the test."""
    yield
    for home in tmp_path.glob("*gnupg"):
        stop_agent(home)


def fleet_site(project: Path, home: Path, port: int) -> None:
    key = make_key(home)
    (project / "site.yaml").write_text(
        f"fleet:\n  signing_key: {key}\n  gnupg_home: {home}\n  apt_url: http://127.0.0.1:{port}\n"
    )


def specs() -> list:  # type: ignore[type-arg]
    base = xrt_base()
    base.depends = None  # self-contained, so apt resolves the set from our repository alone
    return [base, xrt_npu(), plugin()]


def test_publish_serves_exactly_the_audited_packages_signed(
    project_dir: Path, tmp_path: Path
) -> None:
    port = free_port()
    fleet_site(project_dir, tmp_path / "gnupg", port)
    digests = write_built(project_dir / "artifacts" / TARGET, TARGET, specs())
    outcome = run_doit(project_dir, "publish", "--target", TARGET)
    assert outcome.rc == 0, outcome.output
    record = json.loads((project_dir / "artifacts" / TARGET / "publish.json").read_text())
    assert record["snapshot"].startswith(f"{TARGET}-")
    assert {p["package"]: p["sha256"] for p in record["packages"]} == digests
    public = project_dir / "artifacts/apt/public"
    pins = (public / TARGET / f"xdnaforge-{TARGET}.pref").read_text()
    assert "Package: xrt-base\nPin: version 2.20.0\nPin-Priority: 1001" in pins
    config = json.loads((project_dir / "build/aptly/aptly.conf").read_text())
    assert config["rootDir"] == str(project_dir / "artifacts/apt")
    with aptly_serve(project_dir / "build/aptly/aptly.conf", port) as url:
        host = AptClient(tmp_path / "host")
        host.follow(public, TARGET, url)
        update = host.apt_get("update")
        assert update.returncode == 0, update.stdout + update.stderr
        # the same repository with another key in the keyring: apt refuses its index
        stranger = AptClient(tmp_path / "stranger")
        stranger.follow(public, TARGET, url)
        make_key(tmp_path / "other-gnupg")
        subprocess.run(
            [
                "gpg",
                "--batch",
                "--yes",
                "--output",
                str(tmp_path / "stranger/keyring.gpg"),
                "--export",
            ],
            env={"GNUPGHOME": str(tmp_path / "other-gnupg"), "PATH": "/usr/bin:/bin"},
            check=True,
        )
        distrusted = stranger.apt_get("update")
        assert "NO_PUBKEY" in distrusted.stdout + distrusted.stderr
        got = host.download(*PACKAGES)
        assert sorted(got.values()) == sorted(digests.values())
        # a file changed in the published tree (a bad mirror, an attacker) is refused
        served = next(public.glob(f"{TARGET}/pool/**/xrt-npu_*.deb"))
        data = served.read_bytes()
        served.unlink()  # the published file may be a hard link into aptly's pool
        served.write_bytes(data[:-4] + b"XXXX")
        for old in (tmp_path / "host/cache/archives").glob("*.deb"):
            old.unlink()
        refused = host.apt_get("--download-only", "install", "xrt-npu")
        assert refused.returncode != 0
        assert "Hash Sum mismatch" in refused.stdout + refused.stderr


def test_publish_refuses_a_file_changed_after_the_audit(project_dir: Path, tmp_path: Path) -> None:
    fleet_site(project_dir, tmp_path / "gnupg", free_port())
    digests = write_built(project_dir / "artifacts" / TARGET, TARGET, specs())
    deb = next((project_dir / "artifacts" / TARGET / "debs").glob("xrt-npu_*.deb"))
    deb.write_bytes(deb.read_bytes() + b"\0")
    outcome = run_doit(project_dir, "publish", "--target", TARGET)
    assert outcome.rc == 1
    assert f"its sha256 is {sha256(deb)}, the audit passed {digests['xrt-npu']}" in outcome.output
    assert not (project_dir / "artifacts/apt").exists()


def test_publish_without_a_signing_key_says_what_to_add(project_dir: Path) -> None:
    write_built(project_dir / "artifacts" / TARGET, TARGET, specs())
    outcome = run_doit(project_dir, "publish", "--target", TARGET)
    assert outcome.rc == 3  # site.yaml lacks the key: bad configuration
    assert "site.yaml names none" in outcome.output
    assert "signing_key:" in outcome.output


@pytest.mark.slow
def test_synthetic_build_publishes_installs_and_rolls_back(
    setup: Path, fake_tools: FakeTools, upstream: Upstream, tmp_path: Path
) -> None:
    port = free_port()
    fleet_site(setup, tmp_path / "gnupg", port)
    assert build(setup, fake_tools).rc == 0
    first = run_doit(setup, "publish", "--target", "synthetic")
    assert first.rc == 0, first.output
    records = setup / "artifacts/synthetic"
    before = json.loads((records / "publish.json").read_text())
    old = {p["package"]: p["sha256"] for p in before["packages"]}
    # upstream moves on: XRT 2.21, a new build, published as the fleet's new snapshot
    upstream.commit("xrt", {"src/CMake/settings.cmake": "VERSION 2.21\n"}, "xrt 2.21")
    upstream.link("xdna-driver", "xrt", "xrt")
    write_recipe(setup, upstream)
    assert build(setup, fake_tools).rc == 0
    second = run_doit(setup, "publish", "--target", "synthetic")
    assert second.rc == 0, second.output
    after = json.loads((records / "publish.json").read_text())
    assert after["snapshot"] != before["snapshot"]
    new = {p["package"]: p["sha256"] for p in after["packages"]}
    public = setup / "artifacts/apt/public"
    with aptly_serve(setup / "build/aptly/aptly.conf", port) as url:
        host = AptClient(tmp_path / "host")
        host.follow(public, "synthetic", url)
        assert host.apt_get("update").returncode == 0
        got = host.download(*PACKAGES)
        assert sorted(got.values()) == sorted(new.values())
        assert any("2.21.0" in name for name in got)
        host.installed(sorted((tmp_path / "host/cache/archives").glob("*.deb")))
        # fleet rollback: the previous snapshot again, and its pins reach the host
        back = run_doit(setup, "publish", "--target", "synthetic", "--snapshot", before["snapshot"])
        assert back.rc == 0, back.output
        host.follow(public, "synthetic", url)
        # HTTP Last-Modified has one-second resolution: a rollback published within the same
        # second as the build before it gets "304 Not Modified" and apt keeps the newer index
        # (seen in CI). A real host updates long after; here the lists are forgotten instead.
        host.forget_lists()
        assert host.apt_get("update").returncode == 0
        downgraded = host.download(*PACKAGES)
        assert sorted(downgraded.values()) == sorted([old["xrt-base"], old["xrt-npu"]])
    history = json.loads((records / "publish.json").read_text())["history"]
    assert [h["action"] for h in history] == ["publish", "publish", "rollback"]
    unknown = run_doit(setup, "publish", "--target", "synthetic", "--snapshot", "nope")
    assert unknown.rc == 3  # an unknown snapshot, as an unknown target
    assert before["snapshot"] in unknown.output


def test_publish_ships_the_buildinfo_signed_beside_the_repository(
    project_dir: Path, tmp_path: Path
) -> None:
    fleet_site(project_dir, tmp_path / "gnupg", free_port())
    records = project_dir / "artifacts" / TARGET
    digests = write_built(records, TARGET, specs())
    packages = json.loads((records / "packages.json").read_text())
    info = buildinfo.BuildInfo(
        source="xdna-driver",
        binary=tuple(digests),
        architecture="amd64",
        version="2.20.0",
        checksums=tuple(
            buildinfo.Checksum(sha256=p["sha256"], size=p["size"], file=p["file"][5:])
            for p in packages["packages"]
        ),
        build_origin="Ubuntu",
        build_architecture="amd64",
        build_date="Tue, 01 Dec 2026 10:00:00 +0000",
        build_path="/xdnaforge/work",
        environment=(("SOURCE_DATE_EPOCH", "1764547200"),),
        installed_build_depends=(("cmake", "4.2.3-2ubuntu2"),),
        target=TARGET,
    )
    name = buildinfo.file_name(info)
    (records / "debs" / name).write_text(buildinfo.render(info))
    packages["buildinfo"] = f"debs/{name}"
    (records / "packages.json").write_text(json.dumps(packages))
    outcome = run_doit(project_dir, "publish", "--target", TARGET)
    assert outcome.rc == 0, outcome.output
    public = project_dir / "artifacts/apt/public"
    shipped = public / TARGET / name
    text = shipped.read_text()
    assert text.startswith("-----BEGIN PGP SIGNED MESSAGE-----")
    assert buildinfo.parse(text) == info
    checked = subprocess.run(
        ["gpgv", "--keyring", str(public / "xdnaforge-archive-keyring.gpg"), str(shipped)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    record = json.loads((records / "publish.json").read_text())
    assert record["host_files"]["buildinfo"] == str(shipped)
    assert record["host_files"]["buildinfo_url"].endswith(f"/{TARGET}/{name}")
