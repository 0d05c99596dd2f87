"""A distro stack (recipe kind distro) end to end: a synthetic Debian archive on a file://
apt source (real .debs from dpkg-deb in the multiarch /usr layout, one a -dkms package)
through `doit build` (apt download of exact versions, lock.json, packages.json, audit),
`doit install --root`, and the gates against fake tools reading that layout."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_tool
from tests.debs import Spec, build_deb, plugin, xrt_base, xrt_npu
from tests.fakes.fixture import FakeTools
from tests.integration.apt import export_keyring, make_key, sign_release, stop_agent
from tests.integration.conftest import Outcome, run_doit
from tests.integration.npu import npu_host, replay

VERSION = "1:2.25.0-4+b1"
LIB = "usr/lib/x86_64-linux-gnu"
TAKEN = ["libxrt2", "libxrt-npu2", "libxrt-utils", "libxrt-utils-npu", "python3-xrt", "libxrt-dev"]


def specs(version: str = VERSION, core: bytes = b"\x7fELF coreutil") -> list[Spec]:
    """The xrt source package's binaries as Debian lays them out (forky's file lists)."""
    return [
        Spec(
            package="libxrt2",
            version=version,
            files={f"{LIB}/libxrt_coreutil.so.2.25.00": core, f"{LIB}/libxrt_core.so.2.25.00": b""},
        ),
        Spec(
            package="libxrt-npu2",
            version=version,
            depends="libxrt2 (>= 1:2.25.0)",
            files={
                f"{LIB}/libxrt_driver_xdna.so.2.25.00": b"\x7fELF plugin",
                f"{LIB}/xrt/module/libxdp_core.so.2.25.00": b"\x7fELF xdp",
            },
        ),
        Spec(
            package="libxrt-utils",
            version=version,
            files={"usr/bin/xrt-smi": b"\x7fELF smi", "etc/OpenCL/vendors/amdxrt.icd": "x\n"},
        ),
        Spec(package="libxrt-utils-npu", version=version, files={"usr/bin/xrt-runner": b"run"}),
        Spec(
            package="python3-xrt",
            version=version,
            files={"usr/lib/python3/dist-packages/pyxrt.cpython-314-x86_64-linux-gnu.so": b"so"},
        ),
        Spec(package="libxrt-dev", version=version, files={"usr/include/xrt/xrt.h": "//\n"}),
        Spec(
            package="xrt-xocl-dkms",
            version=version,
            depends="dkms (>= 3.0.11)",
            files={"usr/src/xrt-2.25.0/dkms.conf": 'PACKAGE_NAME="xrt"\n'},
        ),
    ]


@dataclass(frozen=True)
class Key:
    """A signing key of the test's own: its GNUPGHOME, fingerprint and exported keyring."""

    home: Path
    fingerprint: str
    keyring: Path


def make_signing_key(folder: Path) -> Key:
    home = folder / "gnupg"
    fingerprint = make_key(home)
    return Key(home, fingerprint, export_keyring(home, folder / "keyring.gpg"))


def make_archive(
    folder: Path, packages: list[Spec], suite: str = "forky", key: Key | None = None
) -> dict[str, str]:
    """An apt archive (pool/, dists/<suite>/main/binary-amd64/Packages, Release, and an
    InRelease signed by `key`) that apt reads from file://; returns package -> sha256."""
    if folder.exists():
        shutil.rmtree(folder)
    pool = folder / "pool/main/x/xrt"
    pool.mkdir(parents=True)
    work = folder.parent / f"{folder.name}-work"
    work.mkdir(exist_ok=True)
    stanzas, digests = [], {}
    for spec in packages:
        built = build_deb(work, spec)
        name = f"{spec.package}_{spec.version.split(':', 1)[-1]}_{spec.architecture}.deb"
        deb = pool / name
        shutil.move(built, deb)
        data = deb.read_bytes()
        digests[spec.package] = hashlib.sha256(data).hexdigest()
        stanzas.append(
            spec.control().split("Description:")[0]
            + "Source: xrt\n"
            + f"Filename: pool/main/x/xrt/{name}\nSize: {len(data)}\n"
            + f"SHA256: {digests[spec.package]}\nDescription: test package\n"
        )
    index = folder / f"dists/{suite}/main/binary-amd64/Packages"
    index.parent.mkdir(parents=True)
    index.write_text("\n".join(stanzas))
    body = index.read_bytes()
    (folder / f"dists/{suite}/Release").write_text(
        f"Suite: {suite}\nCodename: {suite}\nArchitectures: amd64\nComponents: main\n"
        "Date: Tue, 01 Dec 2026 00:00:00 UTC\n"
        f"SHA256:\n {hashlib.sha256(body).hexdigest()} {len(body)} main/binary-amd64/Packages\n"
    )
    if key is not None:
        sign_release(key.home, folder / f"dists/{suite}/Release")
    return digests


def recipe(
    project: Path,
    archive: Path,
    pins: dict[str, str],
    version: str = VERSION,
    key: Key | None = None,
    fingerprint: str | None = None,
) -> None:
    """A distro recipe over the synthetic archive, naming `key` (or `fingerprint` in its
    keyring file) as the archive's signing key; neither: no keyring at all."""
    keyring = ""
    if key is not None:
        keyring = (
            f"    keyring:\n      file: {key.keyring}\n"
            f"      fingerprints: [{fingerprint or key.fingerprint}]\n"
            "      from: the test's own key (tests/integration/apt.py make_key)\n"
        )
    listed = "".join(
        f'    - {{package: {name}, version: "{version if name == "libxrt2" else VERSION}", '
        f'sha256: "{pins.get(name, "unpinned")}"}}\n'
        for name in TAKEN
    )
    (project / "recipes/forkytest.yaml").write_text(
        "schema: 1\nname: forkytest\nkind: distro\ndescription: a synthetic forky stack\n"
        'hosts:\n  distro: {id: debian, version: forky}\n  kernel: ">=6.14"\n'
        '  npu:\n    - {pci: "1022:17f0", revision: "0x10"}\n'
        "driver:\n  driver: amdxdna (in-tree)\n"
        f"distro:\n  archive:\n    url: file://{archive}\n    suite: forky\n{keyring}"
        "  source_package: xrt\n"
        f"  packages:\n{listed}"
        "  left_out:\n"
        f'    - {{package: xrt-xocl-dkms, version: "{VERSION}", reason: DKMS kernel modules}}\n'
        "    - {package: libxrt-utils-alveo, reason: Alveo board tools}\n"
        f"install:\n  order: [{', '.join(TAKEN)}]\n"
        "validate:\n  gates: [host, runtime, examine, validate, pyxrt]\n"
    )


def doit(project: Path, *args: str, env: dict[str, str] | None = None) -> Outcome:
    # the real apt-get and dpkg: the fakes stay off PATH for building and installing
    return run_doit(project, *args, env=env)


def record(project: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project / f"artifacts/forkytest/{name}.json").read_text())
    return data


@pytest.fixture
def key(tmp_path: Path) -> Iterator[Key]:
    require_tool("gpg")
    made = make_signing_key(tmp_path / "key")
    yield made
    stop_agent(made.home)


@pytest.fixture
def archive(tmp_path: Path, key: Key) -> tuple[Path, dict[str, str]]:
    require_tool("apt-get")
    folder = tmp_path / "archive"
    return folder, make_archive(folder, specs(), key=key)


def test_build_downloads_the_pinned_versions_then_audits_them(
    project_dir: Path, archive: tuple[Path, dict[str, str]], key: Key
) -> None:
    folder, digests = archive
    recipe(project_dir, folder, {"libxrt2": digests["libxrt2"]}, key=key)
    outcome = doit(project_dir, "build", "--target", "forkytest")
    assert outcome.rc == 0, outcome.output
    assert "fetch" not in outcome.stdout
    assert "build-" not in outcome.stdout
    packages = record(project_dir, "packages")
    assert {(p["package"], p["version"], p["sha256"]) for p in packages["packages"]} == {
        (name, VERSION, digests[name]) for name in TAKEN
    }
    dkms, alveo = packages["left_out"]
    assert (dkms["package"], dkms["sha256"], dkms["reason"]) == (
        "xrt-xocl-dkms",
        digests["xrt-xocl-dkms"],
        "DKMS kernel modules",
    )
    assert (project_dir / "artifacts/forkytest" / dkms["file"]).is_file()
    assert alveo == {
        "file": "(not downloaded)",
        "package": "libxrt-utils-alveo",
        "reason": "Alveo board tools",
    }
    lock = record(project_dir, "lock")
    assert {n: e["sha256"] for n, e in lock["packages"].items()} == {
        n: digests[n] for n in [*TAKEN, "xrt-xocl-dkms"]
    }
    assert lock["unpinned"] == TAKEN[1:]
    assert lock["packages"]["libxrt2"]["pinned_in_recipe"] is True
    # the Release file apt read was verified against the named key, and lock.json says so
    assert lock["archive"]["keyring"]["fingerprints"] == [key.fingerprint]
    assert lock["archive"]["keyring"]["from"].startswith("the test's own key")
    [release] = lock["archive"]["release_verified"]
    assert release["signed_by"] == [key.fingerprint]
    assert release["Suite"] == "forky"
    assert f"signed by {key.fingerprint} (verified with gpgv)" in outcome.stdout
    # the six pass; the -dkms package of the same source package is audited and blocked,
    # and, left out of the set, does not decide its verdict
    audit = record(project_dir, "audit")
    assert audit["verdict"] == "pass"
    assert [p["package"] for p in audit["packages"]] == TAKEN
    [blocked] = audit["left_out"]
    assert (blocked["package"], blocked["verdict"]) == ("xrt-xocl-dkms", "block")
    assert {f["rule"] for f in blocked["findings"]} >= {"DEP-001", "DKMS-001"}
    assert "BLOCK xrt-xocl-dkms" in outcome.stdout
    report = (project_dir / "artifacts/forkytest/BUILD_REPORT.md").read_text()
    assert f"the distribution's archive file://{folder} forky" in report
    assert f"| libxrt-npu2 | {VERSION} | `{digests['libxrt-npu2']}` | first seen" in report
    assert "left out of the set, never installed: xrt-xocl-dkms" in report


def test_a_version_the_archive_does_not_have_is_named_with_its_newest(
    project_dir: Path, archive: tuple[Path, dict[str, str]], key: Key
) -> None:
    folder, _ = archive
    recipe(project_dir, folder, {}, version="1:2.25.0-5", key=key)
    outcome = doit(project_dir, "build", "--target", "forkytest")
    assert outcome.rc == 1
    assert (
        f"libxrt2 1:2.25.0-5 is not in file://{folder} forky; the newest it has is {VERSION}"
        in outcome.output
    )
    assert "Traceback" not in outcome.output


def test_a_changed_digest_for_the_same_version_is_refused_with_both(
    project_dir: Path, archive: tuple[Path, dict[str, str]], key: Key
) -> None:
    folder, digests = archive
    recipe(project_dir, folder, {}, key=key)
    assert doit(project_dir, "build", "--target", "forkytest").rc == 0
    # the archive republishes libxrt2 at the same version with other contents
    changed = make_archive(folder, specs(core=b"\x7fELF another coreutil"), key=key)
    assert changed["libxrt2"] != digests["libxrt2"]
    (project_dir / "artifacts/forkytest/packages.json").unlink()  # the stage runs again
    outcome = doit(project_dir, "build", "--target", "forkytest")
    assert outcome.rc == 1
    assert (
        f"libxrt2 {VERSION} has sha256 {changed['libxrt2']}; it had {digests['libxrt2']} "
        "when first seen" in outcome.output
    )
    # and a digest the recipe pins is held against the file as well
    recipe(project_dir, folder, {"libxrt-npu2": "0" * 64}, key=key)
    (project_dir / "artifacts/forkytest/lock.json").unlink()
    pinned = doit(project_dir, "build", "--target", "forkytest")
    assert pinned.rc == 1
    assert (
        f"libxrt-npu2 {VERSION} has sha256 {changed['libxrt-npu2']}; the recipe pins {'0' * 64}"
        in pinned.output
    )


def test_offline_a_directory_of_debs_is_the_archive(
    project_dir: Path, archive: tuple[Path, dict[str, str]], key: Key, tmp_path: Path
) -> None:
    folder, digests = archive
    recipe(project_dir, folder, {}, key=key)
    site = tmp_path / "site.yaml"
    site.write_text("offline: true\n")
    refused = doit(project_dir, "build", "--target", "forkytest", env={"XDNAFORGE_SITE": str(site)})
    assert refused.rc == 1
    assert f"site.yaml says offline: true and names no mirror of file://{folder}" in (
        refused.output
    )
    flat = tmp_path / "debs"
    shutil.copytree(folder / "pool/main/x/xrt", flat)
    site.write_text(f"offline: true\nmirrors:\n  file://{folder}: {flat}\n")
    # a directory has no signed index: unpinned packages are not taken from it
    unvouched = doit(
        project_dir, "build", "--target", "forkytest", env={"XDNAFORGE_SITE": str(site)}
    )
    assert unvouched.rc == 1
    assert "has no signed index, and the recipe pins no sha256 for libxrt2, libxrt-npu2" in (
        unvouched.output
    )
    recipe(project_dir, folder, {n: digests[n] for n in TAKEN}, key=key)
    outcome = doit(project_dir, "build", "--target", "forkytest", env={"XDNAFORGE_SITE": str(site)})
    assert outcome.rc == 0, outcome.output
    assert f"taking 6 packages from the directory {flat}" in outcome.stdout
    assert {p["sha256"] for p in record(project_dir, "packages")["packages"]} == {
        digests[n] for n in TAKEN
    }


@pytest.mark.skipif(os.geteuid() != 0, reason="dpkg --root needs root")
def test_installed_into_a_root_every_gate_reads_the_multiarch_layout(
    project_dir: Path, archive: tuple[Path, dict[str, str]], key: Key, fake_tools: FakeTools
) -> None:
    require_tool("dpkg")
    folder, _ = archive
    recipe(project_dir, folder, {}, key=key)
    root = npu_host(project_dir / "sysroot", plugin=False, pyxrt=False)
    (root / "etc/os-release").write_text('ID=debian\nVERSION_CODENAME=forky\nPRETTY_NAME="forky"\n')
    for sub in ("var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers", "var/log"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "var/lib/dpkg/status").write_text("")
    (project_dir / "matrices/forky.yaml").write_text(
        "schema: 1\ncells:\n  - name: forky-test\n    recipe: forkytest\n    expect: unverified\n"
        "    reason: test\n    evidence: test\n    host:\n"
        "      distro: {id: debian, version: forky}\n"
        '      kernel: ">=6.14"\n      npu: {pci: "1022:17f0", revision: "0x10"}\n'
    )
    assert doit(project_dir, "build", "--target", "forkytest").rc == 0
    installed = doit(project_dir, "install", "--target", "forkytest", "--root", str(root), "--yes")
    assert installed.rc == 0, installed.output
    assert (root / LIB / "libxrt_driver_xdna.so.2.25.00").is_file()
    assert not (root / "usr/src/xrt-2.25.0").exists()  # the -dkms package was left out

    replay(fake_tools, "healthy-npu4")
    fake_tools.installed(dict.fromkeys(TAKEN, VERSION))
    outcome = run_doit(
        project_dir,
        "validate",
        "--target",
        "forkytest",
        env={**fake_tools.env, "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS"},
    )
    gates = {g["name"]: g for g in record(project_dir, "validation")["gates"]}
    assert gates["host"]["status"] == "pass", gates["host"]  # forky: VERSION_CODENAME
    runtime = gates["runtime"]
    assert runtime["status"] == "pass", (runtime, outcome.output)
    layout = next(line for line in runtime["evidence"] if line.startswith("XRT layout:"))
    assert "xrt-smi in /usr/bin" in layout
    assert f"plugin in /{LIB}" in layout
    assert f"libxrt_coreutil in /{LIB}" in layout
    assert "pyxrt in /usr/lib/python3/dist-packages" in layout
    validate = gates["validate"]
    assert validate["status"] == "skip"
    assert "ships no xrt-smi validate test data" in validate["summary"]
    assert "/usr/share/amdxdna/bins" in validate["summary"]
    assert fake_tools.calls("xrt-smi")
    assert all("validate" not in c for c in fake_tools.calls("xrt-smi"))


@pytest.mark.skipif(os.geteuid() != 0, reason="dpkg --root needs root")
def test_our_build_beside_a_distro_stack_with_the_plugin_is_a_conflict_explained(
    project_dir: Path, archive: tuple[Path, dict[str, str]], key: Key, tmp_path: Path
) -> None:
    require_tool("dpkg")
    folder, _ = archive
    recipe(project_dir, folder, {}, key=key)
    root = project_dir / "sysroot"
    for sub in ("var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers", "etc"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "var/lib/dpkg/status").write_text("")
    (root / "etc/os-release").write_text("ID=debian\nVERSION_CODENAME=forky\n")
    assert doit(project_dir, "build", "--target", "forkytest").rc == 0
    done = doit(project_dir, "install", "--target", "forkytest", "--root", str(root), "--yes")
    assert done.rc == 0, done.output
    # a vendor's /opt/xilinx/xrt build of the same host: audited, then refused beside it
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    debs = {spec.package: build_deb(vendor, spec) for spec in (xrt_base(), xrt_npu(), plugin())}
    listed = "".join(
        f"    - {{file: {d.name}, package: {name}, "
        f"sha256: {hashlib.sha256(d.read_bytes()).hexdigest()}}}\n"
        for name, d in debs.items()
    )
    (project_dir / "recipes/ours.yaml").write_text(
        "schema: 1\nname: ours\nkind: prebuilt\ndescription: an /opt build\n"
        'hosts:\n  distro: {id: debian, version: forky}\n  kernel: ">=6.14"\n'
        '  npu:\n    - {pci: "1022:17f0", revision: "0x10"}\n'
        "driver:\n  driver: amdxdna (in-tree)\n"
        f"prebuilt:\n  packages:\n{listed}"
        "install:\n  order: [xrt-base, xrt-npu, xrt_plugin-amdxdna]\n"
        "validate:\n  gates: [host]\n"
    )
    site = tmp_path / "site.yaml"
    site.write_text(f"vendor_dirs: [{vendor}]\n")
    env = {"XDNAFORGE_SITE": str(site)}
    assert doit(project_dir, "build", "--target", "ours", env=env).rc == 0
    refused = doit(
        project_dir, "install", "--target", "ours", "--root", str(root), "--yes", env=env
    )
    assert refused.rc == 1
    assert "BLOCKING [distro-xrt-stack]" in refused.output
    assert f"plugin /{LIB}/libxrt_driver_xdna.so.2.25.00" in refused.output
    assert f"programs load /{LIB}/libxrt_coreutil" in refused.output
    assert "/usr/bin/xrt-smi comes first on PATH" in refused.output
    assert "`doit build --target forkytest`" in refused.output
    assert not (root / "opt/xilinx/xrt").exists()  # nothing changed


def test_an_archive_without_a_named_key_is_not_read(
    project_dir: Path, archive: tuple[Path, dict[str, str]]
) -> None:
    folder, _ = archive
    recipe(project_dir, folder, {})
    outcome = doit(project_dir, "build", "--target", "forkytest")
    assert outcome.rc == 1
    assert "no archive key is named, so its Release file cannot be verified" in outcome.output
    assert "keyring: {file, fingerprints, from} under the recipe's distro.archive" in (
        outcome.output
    )
    assert not (project_dir / "artifacts/forkytest/packages.json").exists()
    assert "Traceback" not in outcome.output


def test_a_keyring_without_the_named_key_says_which_key_and_where_it_comes_from(
    project_dir: Path, archive: tuple[Path, dict[str, str]], key: Key
) -> None:
    folder, _ = archive
    other = "0123456789ABCDEF0123456789ABCDEF01234567"
    recipe(project_dir, folder, {}, key=key, fingerprint=other)
    outcome = doit(project_dir, "build", "--target", "forkytest")
    assert outcome.rc == 1
    assert f"the keyring {key.keyring} holds none of the keys named for the archive ({other})" in (
        outcome.output
    )
    assert "the key comes from the test's own key" in outcome.output
    assert not (project_dir / "artifacts/forkytest/packages.json").exists()


def test_an_archive_signed_by_another_key_is_refused(
    project_dir: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, key: Key
) -> None:
    require_tool("apt-get")
    # gpg-agent's socket lives in GNUPGHOME, and a Unix socket's path is at most 108 bytes:
    # this test's own tmp_path (its long name, under an xdist worker's folder) is too long
    stranger = make_signing_key(tmp_path_factory.mktemp("k"))
    folder = tmp_path / "archive"
    try:
        make_archive(folder, specs(), key=stranger)
    finally:
        stop_agent(stranger.home)
    recipe(project_dir, folder, {}, key=key)
    outcome = doit(project_dir, "build", "--target", "forkytest")
    assert outcome.rc == 1
    # apt itself refuses the Release file: the message names the key and where the named
    # one comes from, and nothing is downloaded
    assert f"the Release file is signed by key {stranger.fingerprint[-16:]}" in outcome.output
    assert f"which is not among the keys the recipe names ({key.fingerprint})" in outcome.output
    assert "the key comes from the test's own key" in outcome.output
    assert not (project_dir / "artifacts/forkytest/packages.json").exists()
