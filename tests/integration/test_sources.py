"""doit fetch / doit patch against a synthetic upstream (real git, file:// URLs, mirrors)."""

from __future__ import annotations

import json
from pathlib import Path

import git

from tests.integration.conftest import Outcome, run_doit, tree
from tests.integration.upstream import BOOST_PATCH, Upstream, write_recipe


def lock(project: Path, target: str = "synthetic") -> dict[str, object]:
    data: dict[str, object] = json.loads((project / f"artifacts/{target}/lock.json").read_text())
    return data


def fetch(project: Path, target: str = "synthetic", env: dict[str, str] | None = None) -> Outcome:
    return run_doit(project, "fetch", "--target", target, env=env)


def test_fetch_checks_out_the_pinned_tree_and_writes_the_lock(
    project_dir: Path, upstream: Upstream
) -> None:
    write_recipe(project_dir, upstream)
    outcome = fetch(project_dir)
    assert outcome.rc == 0, outcome.output
    src = project_dir / "build/synthetic/src"
    assert git.Repo(src).head.commit.hexsha == upstream.heads["xdna-driver"]
    assert git.Repo(src / "xrt").head.commit.hexsha == upstream.heads["xrt"]
    assert (src / "xrt/src/aiebu/lib.txt").read_text() == "aiebu library\n"
    assert not (src / "xrt/src/libqdma/qdma.c").exists()  # listed as unused
    record = lock(project_dir)
    repositories = {r["path"]: r for r in record["repositories"]}  # type: ignore[attr-defined]
    assert set(repositories) == {".", "xrt", "xrt/src/aiebu"}
    assert repositories["xrt"]["pinned"] == upstream.heads["xrt"]
    assert repositories["xrt/src/aiebu"]["resolved"] == upstream.heads["aiebu"]
    assert repositories["xrt/src/aiebu"]["pinned"] is None  # recorded by xrt, not the recipe
    assert record["unused_submodules"] == [{"path": "xrt/src/libqdma", "reason": "Alveo only"}]
    # git sees a normal superproject with registered submodules
    status = git.Repo(src).git.submodule("status", "--recursive")
    assert f" {upstream.heads['xrt']} xrt " in f" {status}"


def test_two_targets_share_one_object_cache(project_dir: Path, upstream: Upstream) -> None:
    write_recipe(project_dir, upstream)
    write_recipe(project_dir, upstream, name="second")
    assert fetch(project_dir).rc == 0
    assert fetch(project_dir, "second").rc == 0
    caches = sorted(p.name for p in (project_dir / "build/cache").glob("*.git"))
    assert len(caches) == 3  # xdna-driver, xrt, aiebu: one each, whatever the targets


def test_rerun_changes_nothing(project_dir: Path, upstream: Upstream) -> None:
    write_recipe(project_dir, upstream)
    assert fetch(project_dir).rc == 0
    before = tree(project_dir / "build/synthetic/src")
    record = (project_dir / "artifacts/synthetic/lock.json").read_bytes()
    outcome = fetch(project_dir)
    assert outcome.rc == 0
    assert "fetch synthetic: up to date" in outcome.stdout
    assert tree(project_dir / "build/synthetic/src") == before
    assert (project_dir / "artifacts/synthetic/lock.json").read_bytes() == record


def test_missing_commit_names_repository_commit_and_what_the_mirror_has(
    project_dir: Path, upstream: Upstream, tmp_path: Path
) -> None:
    write_recipe(project_dir, upstream)
    assert fetch(project_dir).rc == 0
    good = (project_dir / "artifacts/synthetic/lock.json").read_bytes()
    # the recipe moves xrt to a commit that exists upstream, but the mirror is older
    mirror = tmp_path / "mirror-xrt"
    git.Repo.clone_from(upstream.urls["xrt"], mirror, bare=True)
    upstream.commit("xrt", {"NEWS": "2.21\n"}, "xrt 2.21")
    new_top = upstream.link("xdna-driver", "xrt", "xrt")
    recipe = write_recipe(project_dir, upstream)
    site = tmp_path / "site.yaml"
    site.write_text(f"mirrors:\n  {upstream.urls['xrt']}: {mirror}\n")
    outcome = fetch(project_dir, env={"XDNAFORGE_SITE": str(site)})
    assert outcome.rc == 1
    assert "Traceback" not in outcome.output
    message = (
        f"xrt ({upstream.urls['xrt']}): commit {upstream.heads['xrt']} is not in mirror {mirror}; "
        "its newest commit is "
    )
    assert message in outcome.output
    assert "heads/main" in outcome.output
    # nothing was touched: the previous lock and worktree stay
    assert (project_dir / "artifacts/synthetic/lock.json").read_bytes() == good
    src = git.Repo(project_dir / "build/synthetic/src")
    assert src.head.commit.hexsha != new_top
    assert recipe.exists()


def test_submodule_pin_that_differs_names_both_commits(
    project_dir: Path, upstream: Upstream
) -> None:
    old_xrt = upstream.heads["xrt"]
    upstream.commit("xrt", {"NEWS": "2.21\n"}, "xrt 2.21")
    upstream.link("xdna-driver", "xrt", "xrt")
    write_recipe(project_dir, upstream, xrt_pin=old_xrt)
    outcome = fetch(project_dir)
    assert outcome.rc == 1
    assert (
        f"submodule xrt: the recipe pins {old_xrt}, but xdna-driver at "
        f"{upstream.heads['xdna-driver']} records {upstream.heads['xrt']}"
    ) in outcome.output
    assert not (project_dir / "build/synthetic/src").exists()
    assert not (project_dir / "artifacts/synthetic/lock.json").exists()


def test_offline_without_a_mirror_never_touches_the_network(
    project_dir: Path, upstream: Upstream, tmp_path: Path
) -> None:
    write_recipe(project_dir, upstream, url="https://git.example.invalid/amd/xdna-driver.git")
    site = tmp_path / "site.yaml"
    site.write_text("offline: true\n")
    outcome = fetch(project_dir, env={"XDNAFORGE_SITE": str(site)})
    assert outcome.rc == 1
    assert "offline mode forbids fetching it from https://git.example.invalid" in outcome.output
    assert (
        "add a local mirror for https://git.example.invalid/amd/xdna-driver.git" in outcome.output
    )


def test_offline_with_path_mirrors_works(
    project_dir: Path, upstream: Upstream, tmp_path: Path
) -> None:
    remote = "https://git.example.invalid/amd/xdna-driver.git"
    write_recipe(project_dir, upstream, url=remote)
    site = tmp_path / "site.yaml"
    site.write_text(f"offline: true\nmirrors:\n  {remote}: {upstream.root / 'xdna-driver'}\n")
    outcome = fetch(project_dir, env={"XDNAFORGE_SITE": str(site)})
    assert outcome.rc == 0, outcome.output
    repositories = lock(project_dir)["repositories"]
    assert repositories[0]["fetched_from"] == str(upstream.root / "xdna-driver")  # type: ignore[index]


def test_unreachable_remote_is_a_clear_failure(project_dir: Path, upstream: Upstream) -> None:
    # port 9 (discard) on loopback: refused at once, nothing leaves the machine
    write_recipe(project_dir, upstream, url="http://127.0.0.1:9/xdna-driver.git")
    outcome = fetch(project_dir)
    assert outcome.rc == 1
    assert "Traceback" not in outcome.output
    assert "cannot fetch from http://127.0.0.1:9/xdna-driver.git" in outcome.output


def test_local_changes_are_refused_with_how_to_reset(project_dir: Path, upstream: Upstream) -> None:
    write_recipe(project_dir, upstream)
    assert fetch(project_dir).rc == 0
    edited = project_dir / "build/synthetic/src/xrt/src/CMake/settings.cmake"
    edited.write_text("my local experiment\n")
    upstream.commit("xrt", {"NEWS": "2.21\n"}, "xrt 2.21")
    upstream.link("xdna-driver", "xrt", "xrt")
    write_recipe(project_dir, upstream)
    outcome = fetch(project_dir)
    assert outcome.rc == 1
    assert "has local changes in xrt that xdnaforge did not make" in outcome.output
    assert "checkout -- ." in outcome.output
    assert edited.read_text() == "my local experiment\n"


def test_new_pins_replace_the_tree(project_dir: Path, upstream: Upstream) -> None:
    write_recipe(project_dir, upstream)
    assert run_doit(project_dir, "patch", "--target", "synthetic").rc == 0
    upstream.commit("aiebu", {"lib.txt": "aiebu 2\n"}, "aiebu 2")
    upstream.link("xrt", "src/aiebu", "aiebu")
    upstream.link("xdna-driver", "xrt", "xrt")
    write_recipe(project_dir, upstream)
    outcome = run_doit(project_dir, "patch", "--target", "synthetic")
    assert outcome.rc == 0, outcome.output
    src = project_dir / "build/synthetic/src"
    assert (src / "xrt/src/aiebu/lib.txt").read_text() == "aiebu 2\n"
    assert "filesystem program_options)" in (src / "xrt/src/CMake/boostUtil.cmake").read_text()
    assert "fetch synthetic: inputs changed: commit, submodules.xrt" in outcome.stdout


def test_partial_mirror_checks_out_and_lists_the_missing_files(
    project_dir: Path, upstream: Upstream, tmp_path: Path
) -> None:
    upstream.commit("xrt", {"tests/big.xclbin": "x" * 1000}, "add test data")
    upstream.link("xdna-driver", "xrt", "xrt")
    write_recipe(project_dir, upstream)
    mirror = tmp_path / "partial-xrt.git"
    git.Repo.clone_from(upstream.urls["xrt"], mirror, bare=True)
    blob = git.Repo(mirror).commit(upstream.heads["xrt"]).tree / "tests/big.xclbin"
    repo = git.Repo(mirror)
    # loosen every object (from packs moved out of the way), then drop the blob, as a
    # snapshot that leaves out large files would
    repo.git.repack("-a", "-d", "-q")
    packs = tmp_path / "packs"
    packs.mkdir()
    for pack in (mirror / "objects/pack").glob("pack-*"):
        pack.rename(packs / pack.name)
    for pack in packs.glob("*.pack"):
        with pack.open("rb") as handle:
            repo.git.unpack_objects("-q", istream=handle)
    loose = mirror / "objects" / blob.hexsha[:2] / blob.hexsha[2:]
    loose.unlink()
    site = tmp_path / "site.yaml"
    site.write_text(f"mirrors:\n  {upstream.urls['xrt']}: {mirror}\n")
    outcome = fetch(project_dir, env={"XDNAFORGE_SITE": str(site)})
    assert outcome.rc == 0, outcome.output
    assert (
        "warning: xrt: 1 file(s) missing from the mirror, e.g. tests/big.xclbin" in outcome.stdout
    )
    assert lock(project_dir)["missing_files"] == {"xrt": ["tests/big.xclbin"]}
    again = fetch(project_dir, env={"XDNAFORGE_SITE": str(site)})
    assert again.rc == 0, again.output


def test_patch_applies_and_a_second_run_changes_nothing(
    project_dir: Path, upstream: Upstream
) -> None:
    write_recipe(project_dir, upstream)
    outcome = run_doit(project_dir, "patch", "--target", "synthetic")
    assert outcome.rc == 0, outcome.output
    assert "synthetic/0001-boost.patch -> xrt: applied" in outcome.stdout
    src = project_dir / "build/synthetic/src"
    before = tree(src)
    record = (project_dir / "artifacts/synthetic/lock.json").read_bytes()
    patches = json.loads(record)["patches"]
    assert patches[0]["upstream_commit"] == "b979d16f2ee91e2343a989d7a63d14baa4be8e4f"
    assert patches[0]["status"] == "applied"
    again = run_doit(project_dir, "patch", "--target", "synthetic")
    assert again.rc == 0
    assert "patch synthetic: up to date" in again.stdout
    assert tree(src) == before
    assert (project_dir / "artifacts/synthetic/lock.json").read_bytes() == record


def test_patch_already_upstream_is_reported_and_skipped(
    project_dir: Path, upstream: Upstream
) -> None:
    fixed = (
        (upstream.root / "xrt/src/CMake/boostUtil.cmake")
        .read_text()
        .replace("COMPONENTS system filesystem", "COMPONENTS filesystem")
    )
    upstream.commit("xrt", {"src/CMake/boostUtil.cmake": fixed}, "upstream fix")
    upstream.link("xdna-driver", "xrt", "xrt")
    write_recipe(project_dir, upstream)
    outcome = run_doit(project_dir, "patch", "--target", "synthetic")
    assert outcome.rc == 0, outcome.output
    assert "0001-boost.patch -> xrt: already upstream" in outcome.stdout
    assert lock(project_dir)["patches"][0]["status"] == "already upstream"  # type: ignore[index]


def test_conflict_names_patch_file_and_hunk_and_leaves_the_tree(
    project_dir: Path, upstream: Upstream
) -> None:
    second = BOOST_PATCH.replace("Subject: cmake: do not ask for boost_system", "Subject: other")
    second = second.replace("set(Boost_USE_MULTITHREADED ON)", "set(Boost_USE_MULTITHREADED OFF)")
    conflicting = second.replace("-    REQUIRED COMPONENTS system", "-    REQUIRED COMPONENTS sys")
    write_recipe(
        project_dir,
        upstream,
        patches={"0001-boost.patch": BOOST_PATCH, "0002-conflict.patch": conflicting},
    )
    assert run_doit(project_dir, "fetch", "--target", "synthetic").rc == 0
    src = project_dir / "build/synthetic/src"
    before = (src / "xrt/src/CMake/boostUtil.cmake").read_text()
    outcome = run_doit(project_dir, "patch", "--target", "synthetic")
    assert outcome.rc == 1
    assert "Traceback" not in outcome.output
    assert (
        "synthetic/0002-conflict.patch does not apply to xrt: src/CMake/boostUtil.cmake, "
        "hunk at line 1"
    ) in outcome.output
    # the first patch of this run was undone: the worktree is as it was
    assert (src / "xrt/src/CMake/boostUtil.cmake").read_text() == before
    assert lock(project_dir)["patches"] == []


def _mirror_all(upstream: Upstream, directory: Path, name: str = "{name}.git") -> None:
    """Bare mirrors of every synthetic repository under `directory`, named by `name`."""
    for repo in ("xdna-driver", "xrt", "aiebu", "libqdma"):
        git.Repo.clone_from(upstream.urls[repo], directory / name.format(name=repo), mirror=True)


def _hide_upstream(upstream: Upstream) -> None:
    """The upstream URLs no longer answer: only a mirror can serve the fetch."""
    upstream.root.rename(upstream.root.with_name("gone"))


def test_a_directory_of_owner_plus_name_mirrors_serves_every_repository(
    project_dir: Path, upstream: Upstream, tmp_path: Path
) -> None:
    write_recipe(project_dir, upstream)
    mirrors = tmp_path / "mirrors"
    # the synthetic URLs are file:///.../upstream/<name>: owner "upstream"
    _mirror_all(upstream, mirrors, "upstream+{name}.git")
    _hide_upstream(upstream)
    site = tmp_path / "site.yaml"
    site.write_text(f"mirror_dirs: [{mirrors}]\noffline: true\n")
    outcome = fetch(project_dir, env={"XDNAFORGE_SITE": str(site)})
    assert outcome.rc == 0, outcome.output
    repositories = {r["path"]: r for r in lock(project_dir)["repositories"]}  # type: ignore[attr-defined]
    assert set(repositories) == {".", "xrt", "xrt/src/aiebu"}
    assert repositories["xrt/src/aiebu"]["fetched_from"] == str(mirrors / "upstream+aiebu.git")


def test_git_insteadof_in_the_user_s_configuration_is_honoured(
    project_dir: Path, upstream: Upstream, tmp_path: Path
) -> None:
    write_recipe(project_dir, upstream)
    mirrors = tmp_path / "by-name"
    _mirror_all(upstream, mirrors, "{name}")
    prefix = upstream.root.as_uri() + "/"
    _hide_upstream(upstream)
    home = project_dir / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f'[url "{mirrors}/"]\n\tinsteadOf = {prefix}\n')
    outcome = fetch(project_dir)
    assert outcome.rc == 0, outcome.output
    repositories = {r["path"]: r for r in lock(project_dir)["repositories"]}  # type: ignore[attr-defined]
    assert repositories["xrt"]["fetched_from"] == f"{mirrors}/xrt"
    # site.yaml can turn it off: then the gone upstream is what is asked (with caches of its
    # own, which hold nothing yet), and it fails
    site = tmp_path / "site.yaml"
    site.write_text(f"git_insteadof: false\ncache_dir: {tmp_path / 'other-cache'}\n")
    write_recipe(project_dir, upstream, name="second")
    refused = fetch(project_dir, "second", env={"XDNAFORGE_SITE": str(site)})
    assert refused.rc == 1


def test_a_url_prefix_rewrite_maps_every_repository(
    project_dir: Path, upstream: Upstream, tmp_path: Path
) -> None:
    write_recipe(project_dir, upstream)
    mirrors = tmp_path / "rewritten"
    _mirror_all(upstream, mirrors, "{name}")
    prefix = upstream.root.as_uri() + "/"
    _hide_upstream(upstream)
    site = tmp_path / "site.yaml"
    site.write_text(f"mirror_rewrites:\n  {prefix}: {mirrors}/\n")
    outcome = fetch(project_dir, env={"XDNAFORGE_SITE": str(site)})
    assert outcome.rc == 0, outcome.output


def test_plan_lists_every_repository_nested_ones_included_and_whether_available(
    project_dir: Path, upstream: Upstream, tmp_path: Path
) -> None:
    write_recipe(project_dir, upstream)
    mirrors = tmp_path / "mirrors"
    _mirror_all(upstream, mirrors, "upstream+{name}.git")
    # aiebu's mirror is stale: the commit xrt records is not in it
    stale = git.Repo(mirrors / "upstream+aiebu.git")
    stale.git.update_ref("-d", "refs/heads/main")
    stale.git.reflog("expire", "--expire=now", "--all")
    stale.git.gc("--prune=now")
    site = tmp_path / "site.yaml"
    site.write_text(f"mirror_dirs: [{mirrors}]\n")
    outcome = run_doit(
        project_dir, "plan", "--target", "synthetic", env={"XDNAFORGE_SITE": str(site)}
    )
    assert outcome.rc == 0, outcome.output
    lines = outcome.stdout.split("repositories: ")[1].splitlines()
    assert lines[0] == "4 (nested included), 1 missing"
    by_path = {line.split()[0]: line for line in lines[1:5]}
    assert set(by_path) == {".", "xrt", "xrt/src/aiebu", "xrt/src/libqdma"}
    assert by_path["xrt"].endswith(f"in {mirrors / 'upstream+xrt.git'}")
    assert "(mirror_dirs (upstream+xrt)): available" in by_path["xrt"]
    assert ": missing, commit " in by_path["xrt/src/aiebu"]
    assert "unused, listed as unused" in by_path["xrt/src/libqdma"]
    # plan changed nothing: no cache, no build tree
    assert not (project_dir / "build/cache").exists()
