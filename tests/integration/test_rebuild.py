"""`doit rebuild-check`: the synthetic target is reproducible; a build script that embeds the
time, or the build path where the tree cannot sit at its canonical path, is not, and the file
that differs is named with its cause."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_tool
from tests.debs import Spec, build_deb
from tests.fakes.fixture import FakeTools
from tests.integration.apt import aptly_serve, export_keyring, free_port, make_key, stop_agent
from tests.integration.conftest import DEPENDS, Outcome, build, run_doit
from tests.integration.envroot import WHY_NOT, make_environment
from tests.integration.upstream import XRT_BUILD_SH, Upstream, write_recipe
from xdnaforge.debs.normalize import data_files
from xdnaforge.state import buildinfo
from xdnaforge.tools.dpkg import parse_status

PACKAGED = 'cp ../src/CMake/boostUtil.cmake "$root/opt/xilinx/xrt/lib/build-config-$component.txt"'


def embed(upstream: Upstream, project: Path, line: str) -> None:
    """A new xrt commit whose packaging also writes `line`'s output into the package."""
    script = XRT_BUILD_SH.replace(PACKAGED, f"{PACKAGED}\n  {line}")
    assert script != XRT_BUILD_SH
    upstream.commit("xrt", {"build/build.sh": script}, "embed something")
    upstream.link("xdna-driver", "xrt", "xrt")
    write_recipe(project, upstream)


def check(project: Path, fakes: FakeTools) -> tuple[str, dict[str, object]]:
    first = build(project, fakes)
    assert first.rc == 0, first.output
    outcome = build(project, fakes, "rebuild-check", "--target", "synthetic")
    assert outcome.rc == 0, outcome.output
    record = json.loads((project / "artifacts/synthetic/rebuild.json").read_text())
    return outcome.stdout, record


def test_synthetic_target_is_reproducible(setup: Path, fake_tools: FakeTools) -> None:
    # the canonical path is a bubblewrap bind: without it the tree is not bound (build.json says so)
    require_tool("bwrap")
    out, record = check(setup, fake_tools)
    assert "reproducible: yes" in out
    assert record["reproducible"] is True
    assert record["second_build"] == str(setup / "build/rebuild/synthetic")
    assert record["tree_inside"] == {"first": "/xdnaforge/work", "second": "/xdnaforge/work"}
    assert str(record["second_ccache"]).startswith(str(setup / "build/rebuild/synthetic/ccache"))
    assert (setup / "build/rebuild/synthetic/src/xrt/build/Release").is_dir()
    step = json.loads((setup / "artifacts/synthetic/build.json").read_text())["steps"]["xrt"]
    assert step["tree"] == {
        "host": str(setup / "build/synthetic"),
        "inside": "/xdnaforge/work",
        "how": "bind mount (bubblewrap, host root)",
    }
    assert step["environment"]["HOME"] == "/xdnaforge/work/home"
    assert step["environment"]["CXXFLAGS"] == "-ffile-prefix-map=/xdnaforge/work/src=."
    packages = json.loads((setup / "artifacts/synthetic/packages.json").read_text())
    normalized = packages["packages"][0]["normalized"]
    assert normalized["epoch"] == int(step["environment"]["SOURCE_DATE_EPOCH"])
    # dpkg-deb with SOURCE_DATE_EPOCH and --root-owner-group already writes the normal form
    assert normalized["built_sha256"] == packages["packages"][0]["sha256"]
    assert normalized["changes"] == []
    report = (setup / "artifacts/synthetic/BUILD_REPORT.md").read_text()
    assert (
        "| reproducible | yes: the 3 published .deb files of both builds, built in "
        f"{setup / 'build/synthetic'} and {setup / 'build/rebuild/synthetic'} (trees seen at "
        "/xdnaforge/work and /xdnaforge/work; the second with an empty ccache) |"
    ) in report
    assert "Reproducibility: sha256 of each .deb;" in report


def test_the_build_path_is_the_same_in_both_builds(
    setup: Path, upstream: Upstream, fake_tools: FakeTools
) -> None:
    """Both trees are bound at /xdnaforge/work: a script embedding `pwd` is reproducible."""
    # the canonical path is a bubblewrap bind: without it the tree is not bound (build.json says so)
    require_tool("bwrap")
    embed(upstream, setup, 'pwd > "$root/opt/xilinx/xrt/lib/where-$component.txt"')
    out, _ = check(setup, fake_tools)
    assert "reproducible: yes" in out, out
    deb = setup / "artifacts/synthetic/debs/xrt_202520.2.20.0_26.04-amd64-base.deb"
    where = data_files(deb.read_bytes(), {"opt/xilinx/xrt/lib/where-base.txt"})
    assert where["opt/xilinx/xrt/lib/where-base.txt"] == b"/xdnaforge/work/src/xrt/build\n"


def test_archive_metadata_is_normalised_where_the_packager_does_not(
    setup: Path, upstream: Upstream, fake_tools: FakeTools
) -> None:
    """Packaged as CPack does, without SOURCE_DATE_EPOCH: every mtime is the time of the
    build, yet the published packages are the same bytes, their mtimes clamped."""
    embed(upstream, setup, "unset SOURCE_DATE_EPOCH; sleep 1")
    out, _ = check(setup, fake_tools)
    assert "reproducible: yes" in out, out
    packages = json.loads((setup / "artifacts/synthetic/packages.json").read_text())
    base = next(p for p in packages["packages"] if p["package"] == "xrt-base")
    assert base["normalized"]["built_sha256"] != base["sha256"]
    assert any(c.startswith("mtimes clamped") for c in base["normalized"]["changes"])
    assert any(c.startswith("ar headers") for c in base["normalized"]["changes"])


def test_second_build_has_its_own_empty_ccache(
    setup: Path, upstream: Upstream, fake_tools: FakeTools
) -> None:
    """Each build writes into its ccache and packages what it found there first: with a shared
    cache the second build would find the first one's entry."""
    embed(
        upstream,
        setup,
        'ls "$CCACHE_DIR" | wc -l > "$root/opt/xilinx/xrt/lib/cached-$component.txt"; '
        'touch "$CCACHE_DIR/entry-$component"',
    )
    out, _ = check(setup, fake_tools)
    assert "reproducible: yes" in out, out
    assert (setup / "build/ccache/entry-base").exists()
    assert (setup / "build/rebuild/synthetic/ccache/entry-base").exists()


# a build date as `date -R` writes it, moved by a random number of seconds: two builds that
# end in the same second (a fast machine; a PID namespace gives both the same $$) would
# otherwise embed the same date and match
EMBED_DATE = (
    'date -R -d "@$(( $(date +%s) + $(od -An -N2 -tu2 /dev/urandom) + 1 ))"'
    ' > "$root/opt/xilinx/xrt/lib/when-$component.txt"'
)


def test_embedded_date_is_named(setup: Path, upstream: Upstream, fake_tools: FakeTools) -> None:
    embed(upstream, setup, EMBED_DATE)
    out, record = check(setup, fake_tools)
    assert "reproducible: no (2 files)" in out, out
    assert "xrt-base: opt/xilinx/xrt/lib/when-base.txt: build date: embeds the build time" in out
    assert record["differing_files"] == 2
    causes = {p["package"]: p["causes"] for p in record["packages"]}  # type: ignore[attr-defined]
    assert [c["cause"] for c in causes["xrt-npu"]] == ["build date"]
    assert causes["xrt-npu"][0]["path"] == "opt/xilinx/xrt/lib/when-npu.txt"
    assert causes["xrt_plugin-amdxdna"] == []
    report = (setup / "artifacts/synthetic/BUILD_REPORT.md").read_text()
    assert "| reproducible | no (2 files): the 3 published .deb files" in report
    assert "| xrt-npu | `opt/xilinx/xrt/lib/when-npu.txt` | build date | embeds the build time" in (
        report
    )


def test_diffoscope_reports_the_difference_when_installed(
    setup: Path, upstream: Upstream, fake_tools: FakeTools
) -> None:
    require_tool("diffoscope")
    embed(upstream, setup, EMBED_DATE)
    _, record = check(setup, fake_tools)
    reports = {p["package"]: p["diffoscope"] for p in record["packages"]}  # type: ignore[attr-defined]
    assert reports["xrt_plugin-amdxdna"] is None  # identical: nothing to show
    text = Path(reports["xrt-npu"]).read_text()
    assert "when-npu.txt" in text
    assert "diffoscope text reports and xdnaforge's classification" in str(record["method"])


def test_embedded_path_is_named_where_no_bind_is_possible(
    setup: Path, upstream: Upstream, fake_tools: FakeTools
) -> None:
    """With containment: process-group there is no bubblewrap, so no canonical path: the two
    trees' paths differ and a script that embeds its path makes packages that differ."""
    (setup / "site.yaml").write_text("containment: process-group\n")
    embed(upstream, setup, 'pwd > "$root/opt/xilinx/xrt/lib/where-$component.txt"')
    out, _ = check(setup, fake_tools)
    assert "reproducible: no (2 files)" in out, out
    assert (
        "xrt-base: opt/xilinx/xrt/lib/where-base.txt: embedded path: embeds the build tree's "
        f"path {(setup / 'build/rebuild/synthetic').resolve()}"
    ) in out
    build_record = json.loads((setup / "artifacts/synthetic/build.json").read_text())
    tree = build_record["steps"]["xrt"]["tree"]
    assert tree["inside"] == str(setup / "build/synthetic")
    assert tree["how"] == "not bound: site.yaml containment is process-group"


def test_rebuild_check_needs_a_build_first(setup: Path, fake_tools: FakeTools) -> None:
    outcome = build(setup, fake_tools, "rebuild-check", "--target", "synthetic")
    assert outcome.rc == 1
    assert "no up-to-date build to compare with" in outcome.output
    assert "Traceback" not in outcome.output


def machine_b(tmp_path: Path) -> dict[str, str]:
    """Another machine's site: its own build and artifact directories and ccache, at other
    paths than the first build's."""
    other = tmp_path / "machine-b"
    site = other / "site.yaml"
    other.mkdir()
    site.write_text(
        f"build_dir: {other / 'build'}\nartifacts_dir: {other / 'artifacts'}\n"
        f"ccache_dir: {other / 'ccache'}\n"
    )
    return {"XDNAFORGE_SITE": str(site)}


def built_with_buildinfo(setup: Path, fakes: FakeTools) -> Path:
    first = build(setup, fakes)
    assert first.rc == 0, first.output
    [found] = (setup / "artifacts/synthetic/debs").glob("*.buildinfo")
    return found


def rebuild_elsewhere(
    setup: Path, fakes: FakeTools, env: dict[str, str], source: str
) -> tuple[Outcome, dict[str, object]]:
    outcome = run_doit(
        setup,
        "rebuild-check",
        "--target",
        "synthetic",
        "--buildinfo",
        source,
        env={**fakes.env, "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS", **env},
    )
    site = Path(env["XDNAFORGE_SITE"]).parent
    path = site / "artifacts/synthetic/rebuild.json"
    return outcome, (json.loads(path.read_text()) if path.exists() else {})


def test_each_build_writes_a_debian_buildinfo_beside_its_packages(
    setup: Path, fake_tools: FakeTools
) -> None:
    path = built_with_buildinfo(setup, fake_tools)
    text = path.read_text()
    info = buildinfo.parse(text)
    packages = json.loads((setup / "artifacts/synthetic/packages.json").read_text())
    assert packages["buildinfo"] == f"debs/{path.name}"
    assert text.startswith("Format: 1.0\nSource: ")
    assert set(info.binary) == {p["package"] for p in packages["packages"]}
    assert {(info.package_of(c.file), c.file, c.sha256) for c in info.checksums} == {
        (p["package"], p["file"].removeprefix("debs/"), p["sha256"]) for p in packages["packages"]
    }
    # where the steps saw their tree: bound at /xdnaforge/work in bubblewrap, else its own path
    inside = "/xdnaforge/work" if shutil.which("bwrap") else str(setup / "build/synthetic")
    assert info.build_path == inside
    assert info.build_architecture == "amd64"
    step = json.loads((setup / "artifacts/synthetic/build.json").read_text())["steps"]["xrt"]
    assert dict(info.environment)["SOURCE_DATE_EPOCH"] == step["environment"]["SOURCE_DATE_EPOCH"]
    # the host's build dependencies at their exact versions
    assert dict(info.installed_build_depends)["cmake"] == DEPENDS["cmake"]
    lock = json.loads((setup / "artifacts/synthetic/lock.json").read_text())
    top = next(r for r in lock["repositories"] if r["path"] == ".")
    assert info.source_commit == top["resolved"]
    assert dict(info.submodules)["xrt"] == next(
        r["resolved"] for r in lock["repositories"] if r["path"] == "xrt"
    )
    for field in ("Build-Origin:", "Build-Date:", "Installed-Build-Depends:", "Environment:"):
        assert f"\n{field}" in text


def test_packages_built_on_one_machine_are_checked_on_another(
    setup: Path, fake_tools: FakeTools, tmp_path: Path
) -> None:
    require_tool("bwrap")
    path = built_with_buildinfo(setup, fake_tools)
    env = machine_b(tmp_path)
    outcome, record = rebuild_elsewhere(setup, fake_tools, env, str(path))
    assert outcome.rc == 0, outcome.output
    assert record["reproducible"] is True
    assert str(record["second_build"]).startswith(str(tmp_path / "machine-b/build"))
    assert "ccache" in str(record["second_ccache"])
    assert not (setup / "build/rebuild").exists()  # the first machine's tree is not used
    for item in record["packages"]:  # type: ignore[attr-defined]
        assert item["identical"] is True
        assert f"  {item['package']}: same digest" in outcome.stdout
    assert "rebuild-check --buildinfo: same" in outcome.stdout
    report = (tmp_path / "machine-b/artifacts/synthetic/BUILD_REPORT.md").read_text()
    assert (
        f"| reproducible | yes: same digests; in an environment with the recorded build "
        f"dependencies; the 3 packages the .buildinfo lists, by sha256 ({path}, built" in report
    )


def test_a_package_that_differs_is_named_with_why(
    setup: Path, upstream: Upstream, fake_tools: FakeTools, tmp_path: Path
) -> None:
    require_tool("bwrap")
    embed(upstream, setup, 'date +%s%N > "$root/opt/xilinx/xrt/lib/when-$component.txt"')
    path = built_with_buildinfo(setup, fake_tools)
    outcome, record = rebuild_elsewhere(setup, fake_tools, machine_b(tmp_path), str(path))
    assert outcome.rc == 0, outcome.output
    assert record["reproducible"] is False
    verdicts = {p["package"]: p for p in record["packages"]}  # type: ignore[attr-defined]
    assert verdicts["xrt_plugin-amdxdna"]["identical"] is True
    npu = verdicts["xrt-npu"]
    assert npu["identical"] is False
    assert [c["path"] for c in npu["causes"]] == ["opt/xilinx/xrt/lib/when-npu.txt"]
    assert "  xrt-npu: differs: opt/xilinx/xrt/lib/when-npu.txt: " in outcome.stdout
    assert "rebuild-check --buildinfo: differs" in outcome.stdout


def test_other_pins_and_a_newer_environment_are_said(
    setup: Path, fake_tools: FakeTools, tmp_path: Path
) -> None:
    path = built_with_buildinfo(setup, fake_tools)
    info = buildinfo.parse(path.read_text())
    changed = tmp_path / "changed.buildinfo"
    changed.write_text(path.read_text().replace(info.source_commit, "0" * 40))
    env = machine_b(tmp_path)
    refused, _ = rebuild_elsewhere(setup, fake_tools, env, str(changed))
    assert refused.rc == 1
    assert f"the .buildinfo was built from other pins: source {'0' * 40}, the recipe pins" in (
        refused.output
    )
    # a build dependency the archive no longer has at the recorded version
    older = path.read_text().replace(f"cmake (= {DEPENDS['cmake']})", "cmake (= 3.0.0-1)")
    changed.write_text(older)
    outcome, record = rebuild_elsewhere(setup, fake_tools, env, str(changed))
    assert outcome.rc == 0, outcome.output
    assert record["environment_differences"] == [
        {
            "package": "cmake",
            "recorded": "3.0.0-1",
            "used": DEPENDS["cmake"],
            "note": f"cmake 3.0.0-1 is not in this environment; built with {DEPENDS['cmake']}, "
            "the nearest it has",
        }
    ]
    assert str(record["verdict"]).endswith(
        f"; the environment differed in 1 package(s) (built with cmake {DEPENDS['cmake']} "
        "for 3.0.0-1)"
    )


# --- rebuild-check --buildinfo in a rootfs: the recorded build dependencies in its own view

ENV = "testdistro-1"
ENV_SITE = (
    "environments:\n  testdistro-1:\n    kind: rootfs\n    suite: testing\n"
    "    mirror: http://archive.invalid/testdistro\n"
)
TESTDEP, OTHER = "xdnaforge-testdep", "xdnaforge-other"
SEEN = "opt/xilinx/xrt/lib/testdep-base.txt"


def in_rootfs(project: Path) -> None:
    """The synthetic recipe built in testdistro 1 (a root of the test's own)."""
    recipe = project / "recipes/synthetic.yaml"
    text = recipe.read_text().replace(
        "build:\n  steps:", 'build:\n  environment: {distro: testdistro, release: "1"}\n  steps:'
    )
    recipe.write_text(text.replace("    ubuntu-26.04: [cmake", f"    {ENV}: [cmake"))
    (project / "site.yaml").write_text(ENV_SITE)


def archive(tmp_path: Path, home: Path, key: str) -> Path:
    """A signed aptly archive (suite testing) with two versions of each test build
    dependency; its aptly configuration."""
    debs = tmp_path / "archive-debs"
    debs.mkdir()
    files = [
        build_deb(debs, Spec(name, version, "all", files={f"usr/share/{name}/version": version}))
        for name in (TESTDEP, OTHER)
        for version in ("1.0-1", "2.0-1")
    ]
    config = tmp_path / "aptly.conf"
    config.write_text(json.dumps({"rootDir": str(tmp_path / "aptly"), "gpgProvider": "gpg"}))
    env = {"GNUPGHOME": str(home), "PATH": "/usr/bin:/bin"}
    for argv in (
        ["repo", "create", "-distribution=testing", "-component=main", "deps"],
        ["repo", "add", "deps", *map(str, files)],
        ["publish", "repo", "-batch", f"-gpg-key={key}", "-architectures=amd64,all", "deps"],
    ):
        done = subprocess.run(
            ["aptly", f"-config={config}", *argv], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
    return config


def apt_root(base: Path, packages: dict[str, str], url: str, keyring: Path) -> Path:
    """build/envs/testdistro-1 whose apt follows the test archive, signed by the test key."""
    base.parent.mkdir(parents=True, exist_ok=True)
    make_environment(base.parent.parent, ENV, packages)
    root = base / "root"
    for sub in (
        "etc/apt/keyrings",
        "etc/apt/apt.conf.d",
        "etc/apt/preferences.d",
        "etc/apt/sources.list.d",
        "var/lib/apt/lists/partial",
        "var/cache/apt/archives/partial",
        "var/log/apt",
        "var/lib/dpkg/triggers",
    ):
        (root / sub).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(keyring, root / "etc/apt/keyrings/test.gpg")
    (root / "etc/apt/sources.list").write_text(
        f"deb [signed-by=/etc/apt/keyrings/test.gpg] {url} testing main\n"
    )
    (root / "etc/apt/apt.conf.d/50test").write_text('Acquire::Languages "none";\n')
    return root


def tree_state(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every entry below root (not through its links): mode, size, and a file's sha256."""
    state = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        state[str(path.relative_to(root))] = (info.st_mode, info.st_size, digest)
    return state


def mounted_below(base: Path) -> list[str]:
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    return [f.split(" ")[4] for f in lines if f.split(" ")[4].startswith(str(base))]


@pytest.mark.tools("aptly", "gpg", "apt-get", "bwrap")
def test_the_rebuild_gets_the_recorded_build_dependencies_in_its_own_view(
    setup: Path, upstream: Upstream, fake_tools: FakeTools, tmp_path: Path
) -> None:
    """Built with xdnaforge-testdep 1.0-1 and xdnaforge-other 1.5-1; the other machine's root
    has 2.0-1 of both and its archive 1.0-1 and 2.0-1: the rebuild installs testdep 1.0-1 and
    the nearest other, 1.0-1, into its own view, and the shared root is unchanged."""
    if WHY_NOT is not None:
        pytest.skip(WHY_NOT)
    assert Path("/usr/share", TESTDEP).exists() is False
    embed(upstream, setup, f'cat /usr/share/{TESTDEP}/version > "$root/{SEEN}" || echo absent')
    in_rootfs(setup)
    recorded = {**DEPENDS, TESTDEP: "1.0-1", OTHER: "1.5-1"}
    make_environment(setup / "build", ENV, recorded)
    path = built_with_buildinfo(setup, fake_tools)
    assert dict(buildinfo.parse(path.read_text()).installed_build_depends)[OTHER] == "1.5-1"

    home = tmp_path / "gnupg"
    key = make_key(home)
    env = machine_b(tmp_path)
    other = tmp_path / "machine-b"
    (other / "site.yaml").write_text((other / "site.yaml").read_text() + ENV_SITE)
    config = archive(tmp_path, home, key)
    port = free_port()
    try:
        with aptly_serve(config, port) as url:
            shared = apt_root(
                other / "build/envs" / ENV,
                {**DEPENDS, TESTDEP: "2.0-1", OTHER: "2.0-1"},
                url,
                export_keyring(home, tmp_path / "keyring.gpg"),
            )
            before = tree_state(shared)
            outcome, record = rebuild_elsewhere(setup, fake_tools, env, str(path))
    finally:
        stop_agent(home)
    assert outcome.rc == 0, outcome.output
    assert tree_state(shared) == before  # the shared root is not written
    assert not Path("/usr/share", TESTDEP).exists()  # nor the host's /usr under it
    view = other / "build/rebuild/envs" / ENV
    assert mounted_below(other) == []  # the view is unmounted at the end
    if os.geteuid() != 0:
        assert "the build dependencies are not made to match: making the rebuild's view" in (
            outcome.output
        )
        assert "needs root" in outcome.output
        assert "the build dependencies were not made to match (" in str(record["verdict"])
        return
    out = outcome.stdout
    assert f"own copy-on-write view of {ENV} ({view / 'root'}); the shared root" in out
    assert f"  environment: {TESTDEP} 1.0-1: installing {TESTDEP}=1.0-1" in out
    assert (
        f"  environment: {OTHER} 1.5-1: the archive no longer has 1.5-1; installing the "
        f"nearest, {OTHER}=1.0-1" in out
    )
    # what was installed is in the view's upper layers, the shared root keeps 2.0-1
    status = (view / "layers/upper/var/lib/dpkg/status").read_text()
    assert f"Package: {TESTDEP}\nStatus: install ok installed" in status
    assert parse_status(status)[TESTDEP] == "1.0-1"
    assert parse_status(status)[OTHER] == "1.0-1"
    assert parse_status((shared / "var/lib/dpkg/status").read_text())[TESTDEP] == "2.0-1"
    # the rebuild's steps ran in the view: the build saw the recorded version
    [rebuilt] = (other / "build/rebuild/artifacts/synthetic/debs").glob("xrt_*-base.deb")
    assert data_files(rebuilt.read_bytes(), {SEEN})[SEEN] == b"1.0-1"
    assert record["environment_differences"] == [
        {
            "package": OTHER,
            "recorded": "1.5-1",
            "used": "1.0-1",
            "archive": "the archive no longer has 1.5-1; the nearest it has is 1.0-1",
            "note": f"{OTHER} 1.5-1 could not be had (the archive no longer has 1.5-1; the "
            "nearest it has is 1.0-1); built with 1.0-1",
        }
    ]
    assert f"  environment: {OTHER} 1.5-1 could not be had (" in out
    assert str(record["verdict"]).endswith(
        f"; the recorded build dependencies were installed into the rebuild's own view of {ENV} "
        f"but for 1 package(s) that could not be had (built with {OTHER} 1.0-1 for 1.5-1)"
    )
