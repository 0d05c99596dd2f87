"""The proof runner on a synthetic tree: each outcome from real runs of real commands."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from tests.fakes.fixture import FakeTools
from tests.integration.conftest import build
from tests.integration.upstream import BOOST_PATCH, Upstream, write_recipe
from xdnaforge.config.project import Patch
from xdnaforge.config.proof import CompatChange, parse_proof
from xdnaforge.config.series import parse_header
from xdnaforge.environments.proof_run import Change, pristine_copy, prove_changes
from xdnaforge.environments.proof_sandbox import HOST, Sandbox

# (file changed, proof, expected error): one patch per outcome
CASES = {
    "proven": ("grep -q fixed {f} || { echo 'error: not fixed' >&2; exit 1; }", "error: not fixed"),
    "not-needed": ("true", "never shown"),
    "broken": ("! grep -q fixed {f} || { echo 'error: broke it'; exit 1; }", "error: broke it"),
    "wrong-error": ("grep -q fixed {f} || { echo 'error: other'; exit 1; }", "error: expected"),
}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def _patch(tree: Path, patches: Path, number: int, name: str, proof: str, error: str) -> Patch:
    """A patch turning '<name>.txt' from 'broken' to 'fixed', with a proof header."""
    file = tree / f"{name}.txt"
    file.write_text("fixed\n")
    diff = _git(tree, "diff")
    _git(tree, "checkout", "--", file.name)
    text = (
        f"Subject: {name}\nUpstream-Status: Pending [test]\nRepository: .\n"
        f"Proof: {proof}\nProof-Error: {error}\n\n{diff}"
    )
    path = patches / f"{number:04d}-{name}.patch"
    path.write_text(text)
    header, problems = parse_header(text)
    assert problems == []
    assert header is not None
    return Patch(
        set="test",
        file=path.name,
        path=path,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        header=header,
        origin=f"series:{number}",
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    tree = tmp_path / "src"
    tree.mkdir()
    _git(tree, "init", "-q")
    for name in (*CASES, "missing-tool", "hang"):
        (tree / f"{name}.txt").write_text("broken\n")
    _git(tree, "add", ".")
    _git(tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "pinned")
    return tree


def _change(patch: Patch) -> Change:
    return Change(
        id=patch.file,
        kind="patch",
        description=patch.header.subject,
        where=".",
        proof=patch.header.proof,
        patch=patch,
        compat=None,
    )


def test_each_outcome_on_a_synthetic_tree(tree: Path, tmp_path: Path) -> None:
    patches_dir = tmp_path / "patches"
    patches_dir.mkdir()
    patches = [
        _patch(tree, patches_dir, i, name, f'sh -c "{proof.replace("{f}", name + ".txt")}"', error)
        for i, (name, (proof, error)) in enumerate(CASES.items(), start=1)
    ]
    patches.append(_patch(tree, patches_dir, 5, "missing-tool", "no-such-tool-xdnaforge x", "e"))
    patches.append(_patch(tree, patches_dir, 6, "hang", "sleep 30", "e"))
    # an earlier `doit patch` applied the first patch to the fetched tree: proving starts pinned
    _git(tree, "apply", str(patches[0].path))
    work = tmp_path / "prove"
    log = tmp_path / "prove.log"
    pristine_copy(tree, tuple(patches), work / "tree", log)
    assert (work / "tree/proven.txt").read_text() == "broken\n"
    flag_proof, problems = parse_proof(
        'sh -c "test \\"$0\\" = -DOK || { echo error: no flag; exit 1; }" {flag}',
        "error: no flag",
        flag_allowed=True,
    )
    assert problems == []
    assert flag_proof is not None
    flag = CompatChange(
        change="a define",
        kind="flag",
        package=None,
        flag="-DOK",
        cwd=".",
        proof=flag_proof,
        origin="recipe.yaml:1",
    )
    changes = [_change(p) for p in patches]
    changes.append(
        Change(
            id="flag",
            kind="flag",
            description="d",
            where=".",
            proof=flag_proof,
            patch=None,
            compat=flag,
        )
    )
    entries = prove_changes(
        changes,
        Sandbox(name="host", root=HOST),
        tree=work / "tree",
        work=work,
        readonly=[],
        timeout=2,
        log=log,
    )
    outcomes = {entry["id"]: (entry["outcome"], entry["failed"]) for entry in entries}
    assert outcomes == {
        "0001-proven.patch": ("proven", False),
        "0002-not-needed.patch": ("not needed", False),
        "0003-broken.patch": ("broken", True),
        "0004-wrong-error.patch": ("wrong error", True),
        "0005-missing-tool.patch": ("not provable here", False),
        "0006-hang.patch": ("timeout", True),
        "flag": ("proven", False),
    }
    by_id = {entry["id"]: entry for entry in entries}
    assert by_id["0001-proven.patch"]["first_error"] == "error: not fixed"
    assert by_id["0004-wrong-error.patch"]["first_error"] == "error: other"
    assert "no-such-tool-xdnaforge" in by_id["0005-missing-tool.patch"]["detail"]
    # every patch ends up applied on the scratch copy; the fetched tree is left as it was
    assert (work / "tree/hang.txt").read_text() == "fixed\n"
    assert (tree / "proven.txt").read_text() == "fixed\n"
    assert (tree / "hang.txt").read_text() == "broken\n"


def test_a_tree_that_was_never_fetched_is_a_clear_error(tmp_path: Path) -> None:
    from xdnaforge.errors import StageFailed

    with pytest.raises(StageFailed, match="no checked-out tree to prove on"):
        pristine_copy(tmp_path / "nothing", (), tmp_path / "copy", tmp_path / "log")


def test_prove_survey_and_plan_through_doit(
    setup: Path, upstream: Upstream, fake_tools: FakeTools
) -> None:
    proof = (
        "Proof: sh -c \"! grep -q 'COMPONENTS system' src/CMake/boostUtil.cmake || "
        "{ echo 'CMake Error: boost_system not found' >&2; exit 1; }\"\n"
        "Proof-Error: boost_system not found\n"
    )
    patch = BOOST_PATCH.replace("Repository: xrt\n", f"Repository: xrt\n{proof}")
    write_recipe(setup, upstream, patches={"0001-boost.patch": patch})
    assert build(setup, fake_tools, "patch", "--target", "synthetic").rc == 0
    proved = build(setup, fake_tools, "prove", "--target", "synthetic")
    assert proved.rc == 0, proved.output
    assert "synthetic/0001-boost.patch: proven on host: fails without" in proved.stdout
    record = json.loads((setup / "artifacts/synthetic/prove.json").read_text())
    assert record["changes"][0]["first_error"] == "CMake Error: boost_system not found"
    assert record["environment"]["name"] == "host"
    surveyed = build(setup, fake_tools, "survey", "--target", "synthetic")
    assert surveyed.rc == 0, surveyed.output
    assert "libraries mapped by static table" in surveyed.stdout
    planned = build(setup, fake_tools, "plan", "--target", "synthetic")
    assert "survey: 0 warning(s)" in planned.stdout


def test_a_broken_proof_fails_the_command_after_writing_the_record(
    setup: Path, upstream: Upstream, fake_tools: FakeTools
) -> None:
    proof = "Proof: sh -c \"echo 'error: unrelated'; exit 1\"\nProof-Error: boost_system\n"
    patch = BOOST_PATCH.replace("Repository: xrt\n", f"Repository: xrt\n{proof}")
    write_recipe(setup, upstream, patches={"0001-boost.patch": patch})
    assert build(setup, fake_tools, "fetch", "--target", "synthetic").rc == 0
    proved = build(setup, fake_tools, "prove", "--target", "synthetic")
    assert proved.rc == 1
    assert "1 change(s) failed their proof: synthetic/0001-boost.patch" in proved.output
    record = json.loads((setup / "artifacts/synthetic/prove.json").read_text())
    assert record["changes"][0]["outcome"] == "wrong error"


AIEBU_PATCH = (
    "Subject: aiebu: a fix\nUpstream-Status: Pending [test]\nRepository: xrt/src/aiebu\n"
    "Proof: true\nProof-Error: never shown\n\n"
    "--- a/lib.txt\n+++ b/lib.txt\n@@ -1 +1 @@\n-aiebu library\n+aiebu library, fixed\n"
)


def test_without_a_fetch_the_local_snapshots_are_proven_and_a_missing_commit_named(
    setup: Path, upstream: Upstream, fake_tools: FakeTools, tmp_path: Path
) -> None:
    proof = (
        "Proof: sh -c \"! grep -q 'COMPONENTS system' src/CMake/boostUtil.cmake || "
        "{ echo 'CMake Error: boost_system not found' >&2; exit 1; }\"\n"
        "Proof-Error: boost_system not found\n"
    )
    patch = BOOST_PATCH.replace("Repository: xrt\n", f"Repository: xrt\n{proof}")
    write_recipe(
        setup, upstream, patches={"0001-boost.patch": patch, "0002-aiebu.patch": AIEBU_PATCH}
    )
    # the snapshots this machine has: xdna-driver and xrt, and an aiebu without the pin
    stale = tmp_path / "aiebu-snapshot"
    stale.mkdir()
    _git(stale, "init", "-q")
    _git(
        stale,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "old",
    )
    (setup / "site.yaml").write_text(
        "mirrors:\n"
        f"  {upstream.urls['xdna-driver']}: {upstream.root / 'xdna-driver'}\n"
        f"  {upstream.urls['xrt']}: {upstream.root / 'xrt'}\n"
        f"  {upstream.urls['aiebu']}: {stale}\n"
    )
    aiebu = _git(upstream.root / "aiebu", "rev-parse", "HEAD").strip()
    proved = build(setup, fake_tools, "prove", "--target", "synthetic")
    assert proved.rc == 0, proved.output
    assert not (setup / "build/synthetic/src").exists()  # nothing was fetched
    assert "synthetic/0001-boost.patch: proven on host: fails without" in proved.stdout
    assert (
        f"synthetic/0002-aiebu.patch: not provable here: xrt/src/aiebu at {aiebu} "
        f"({upstream.urls['aiebu']}) is not in the local snapshots" in proved.stdout
    )
    record = json.loads((setup / "artifacts/synthetic/prove.json").read_text())
    assert record["missing_repositories"] == [
        {"path": "xrt/src/aiebu", "commit": aiebu, "url": upstream.urls["aiebu"]}
    ]
    assert record["tree"].startswith("the local snapshots")
    surveyed = build(setup, fake_tools, "survey", "--target", "synthetic")
    assert surveyed.rc == 0, surveyed.output
    assert f"not surveyed: xrt/src/aiebu at {aiebu}" in surveyed.stdout
