"""doit track against a synthetic upstream: a new branch whose XRT gitlink moved, with a
submodule added and one removed and a changed dependency script."""

from __future__ import annotations

import json
from pathlib import Path

import git
import yaml

from tests.integration.conftest import Outcome, run_doit
from tests.integration.upstream import XDNA_BUILD_SH, Upstream, write_recipe

XRTDEPS = "src/runtime_src/tools/scripts/xrtdeps.sh"


def xrtdeps(*names: str) -> str:
    """xrtdeps.sh in miniature: the Debian list where upstream keeps it, and other lists."""
    listed = " \\\n     ".join(names)
    return (
        "#!/bin/bash\n"
        "rh_package_list()\n{\n    RH_LIST=(\\\n     boost-devel \\\n    )\n}\n\n"
        f"ub_package_list()\n{{\n    UB_LIST=(\\\n     {listed} \\\n    )\n\n"
        "    if [ $docker == 0 ]; then\n        UB_LIST+=(linux-headers-$(uname -r))\n"
        "    fi\n}\n"
    )


DRIVER_DEPS = (
    '#!/bin/bash\nif [ -x "$(command -v apt-get)" ]; then\n    apt-get install -y jq\nfi\n'
)


def info_json(version: str) -> str:
    return json.dumps(
        {
            "xrt": {"version": "202520.2.20.122"},
            "firmwares": [
                {
                    "device": "npu4",
                    "pci_device_id": "17f0",
                    "pci_revision_id": "10",
                    "version": version,
                    "fw_name": "npu.dev.sbin",
                }
            ],
        }
    )


def whence(version: str) -> str:
    return (
        "Driver: amdxdna - AMD Inference processor\n\n"
        f"File: amdnpu/17f0_10/2.0_npu.sbin.{version}\n"
        f"Link: amdnpu/17f0_10/npu.dev.sbin -> 2.0_npu.sbin.{version}\n"
        f"Link: amdnpu/17f0_20/npu.dev.sbin -> ../17f0_10/2.0_npu.sbin.{version}\n"
        "File: amdnpu/17f1_10/2.0_cert.sbin.1.8.0.46\n"
        "Link: amdnpu/17f1_10/cert.dev.sbin -> 2.0_cert.sbin.1.8.0.46\n"
    )


# the id tables of amdxdna_pci_drv.c: 1.7's (17f0 rev 0, 1569) and 1.8's (17f2, rev 0x11,
# and 17f1 rev 0x15, which no host fact names)
PCI_OLD = (
    "\t{ 0x1502, 0x0,  &dev_npu1_info },\n\t{ 0x17f0, 0x0,  &dev_npu2_info },\n"
    "\t{ 0x1569, 0x0,  &dev_npu3_info },\n\t{ 0x17f0, 0x10, &dev_npu4_info },\n"
)
PCI_NEW = (
    "\t{ 0x1502, 0x0,  &dev_npu1_info },\n\t{ 0x17f2, 0x10,  &dev_npu3_pf_info },\n"
    "\t{ 0x17f1, 0x11,  &dev_npu7_info },\n\t{ 0x17f1, 0x15,  &dev_npu11_info },\n"
    "\t{ 0x17f0, 0x10, &dev_npu4_info },\n"
)
PCI_DRV = "src/driver/amdxdna/amdxdna_pci_drv.c"


def track(project: Path, *args: str) -> Outcome:
    return run_doit(project, "track", *args)


MATRIX = """# Host profiles the project knows (a test's).
schema: 1
cells:
  - name: ubuntu26-npu4
    host:
      distro: {id: ubuntu, version: "26.04"}
      kernel: ">=7.0, <7.1"
      npu: {pci: "1022:17f0", revision: "0x10"}
    recipe: synthetic
    expect: unverified
    reason: a test
    evidence: a test
"""


def start(project: Path, upstream: Upstream) -> None:
    """Two synthetic lines of one family, `older` and `synthetic` (deps scripts and a
    firmware manifest on main); no other recipe."""
    for shipped in (project / "recipes").glob("*.yaml"):
        shipped.unlink()
    (project / "matrices/default.yaml").write_text(MATRIX)
    write_recipe(project, upstream, name="older")
    upstream.commit("xrt", {XRTDEPS: xrtdeps("cmake", "g++", "libncurses5-dev", "dkms")}, "deps")
    upstream.link("xdna-driver", "xrt", "xrt")
    upstream.commit(
        "xdna-driver",
        {
            "tools/amdxdna_deps.sh": DRIVER_DEPS,
            "tools/info.json": info_json("1.0.20.31"),
            PCI_DRV: PCI_OLD,
        },
        "tools",
    )
    recipe = write_recipe(project, upstream)
    text = recipe.read_text().replace(
        "ubuntu-26.04: [cmake, g++, libboost-dev]",
        "ubuntu-26.04: [cmake, g++, jq, libboost-dev, libncurses-dev]",
    )
    recipe.write_text(text)


def new_branch(upstream: Upstream, root: Path) -> str:
    """Branch 2.0 of xdna-driver: XRT moved, xdp added, libqdma gone, deps changed, new fw."""
    (root / "xdp").mkdir()
    git.Repo.init(root / "xdp", initial_branch="main")
    upstream.urls["xdp"] = (root / "xdp").as_uri()
    upstream.commit("xdp", {"xdp.txt": "profiling\n"}, "xdp 1")
    xrt = upstream.repo("xrt")
    modules = root / "xrt/.gitmodules"
    text = modules.read_text()
    kept = text.split('[submodule "src/libqdma"]')[0]
    modules.write_text(kept)
    xrt.git.add(".gitmodules")
    xrt.git.rm("--cached", "--quiet", "src/libqdma")
    xrt.git.commit("--quiet", "-m", "drop libqdma")
    upstream.commit(
        "xrt",
        {
            XRTDEPS: xrtdeps("cmake", "elfutils", "g++", "dkms"),
            "src/CMake/settings.cmake": "VERSION 2.25\n",
        },
        "xrt 2.25",
    )
    upstream.link("xrt", "src/xdp", "xdp")
    driver = upstream.repo("xdna-driver")
    driver.git.checkout("--quiet", "-b", "2.0")
    upstream.commit(
        "xdna-driver",
        {
            "tools/WHENCE": whence("1.1.2.64"),
            # 1.9 on: info.json says the line's XRT version and lists no firmware
            "tools/info.json": json.dumps({"xrt": {"version": "202620.2.25.37"}}),
            PCI_DRV: PCI_NEW,
        },
        "2.0 firmware",
    )
    return upstream.link("xdna-driver", "xrt", "xrt")


def test_track_writes_a_candidate_check_accepts_and_names_every_change(
    project_dir: Path, upstream: Upstream
) -> None:
    start(project_dir, upstream)
    old_xrt = upstream.heads["xrt"]
    tip = new_branch(upstream, upstream.root)
    outcome = track(project_dir, "--line", "synthetic-2.0", "--branch", "2.0")
    assert outcome.rc == 0, outcome.output
    out = outcome.output
    assert "carried from synthetic\n" in out  # the nearest pin of the family, not `older`
    assert f"xrt {old_xrt[:12]} -> {upstream.heads['xrt'][:12]}" in out
    assert f"submodule added: xrt/src/xdp at {upstream.heads['xdp'][:12]}" in out
    assert "submodule gone: xrt/src/libqdma" in out
    assert "unused_submodules: xrt/src/libqdma dropped" in out
    assert "upstream adds elfutils" in out
    assert "upstream drops libncurses5-dev" in out
    assert "build.depends.ubuntu-26.04: +elfutils -libncurses-dev" in out
    assert "firmware: 17f0_10/npu.dev.sbin released with 1.1.2.64 (was 1.0.20.31)" in out
    assert "firmware: 17f0_20/npu.dev.sbin released with 1.1.2.64 (was nothing)" in out
    assert "firmware: 17f1_10/cert.dev.sbin released with 1.8.0.46 (was nothing)" in out
    assert "xrt version: the line's own 2.20.122 -> 2.25.37 (tools/info.json)" in out
    assert (
        "pci ids: the driver now binds 1022:17f1 rev 0x11, 1022:17f1 rev 0x15, "
        "1022:17f2 rev 0x10; not in xdnaforge's host facts: 1022:17f1 rev 0x15"
    ) in out
    assert "pci ids: the driver no longer binds 1022:1569 rev 0x00, 1022:17f0 rev 0x00" in out
    assert "patches: synthetic not carried" in out
    assert "driver: contract carried from synthetic" in out
    assert "survey: ran on the host" in out

    recipe_path = project_dir / "recipes/synthetic-2.0.yaml"
    text = recipe_path.read_text()
    assert text.startswith("# Candidate written by `doit track --line synthetic-2.0`")
    header = " ".join(line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))
    assert "driver contract is carried from synthetic and must be checked against the" in header
    assert "Survey: ran on the host: 0 warning(s)" in header
    recipe = yaml.safe_load(text)
    assert recipe["source"]["commit"] == tip
    assert recipe["source"]["track"] == "2.0"
    assert recipe["source"]["submodules"] == [{"path": "xrt", "commit": upstream.heads["xrt"]}]
    assert "unused_submodules" not in recipe["source"]  # libqdma is gone upstream
    assert "patches" not in recipe
    assert recipe["build"]["depends"] == {
        "ubuntu-26.04": ["cmake", "elfutils", "g++", "jq", "libboost-dev"]
    }
    assert all("ctest" not in step for step in recipe["build"]["steps"])
    assert recipe["driver"]["notes"].startswith("Carried unchanged from recipe synthetic")
    matrix = yaml.safe_load((project_dir / "matrices/default.yaml").read_text())
    cells = [c for c in matrix["cells"] if c["recipe"] == "synthetic-2.0"]
    assert [(c["name"], c["expect"]) for c in cells] == [
        ("ubuntu26-npu4-synthetic-2-0", "unverified")
    ]
    assert (
        "# Host profiles the project knows" in (project_dir / "matrices/default.yaml").read_text()
    )
    record = json.loads((project_dir / "artifacts/synthetic-2.0/track.json").read_text())
    assert record["commit"] == tip
    assert record["driver"]["checked_against_resolver"] is False
    assert record["driver"]["resolver_problems"] == []  # doit check held it to the facts
    assert {g["path"] for g in record["gitlinks"]} == {"xrt", "xrt/src/aiebu", "xrt/src/xdp"}
    assert record["missing"] == []
    assert record["xrt"]["line_version"] == "2.25.37"
    assert record["blobs"]["17f1_10/cert.dev.sbin"] == "1.8.0.46"
    assert record["pci_ids"]["dropped"] == ["1022:1569 rev 0x00", "1022:17f0 rev 0x00"]
    assert record["pci_ids"]["unknown_to_host_facts"] == ["1022:17f1 rev 0x15"]
    assert (project_dir / "artifacts/synthetic-2.0/survey.json").is_file()

    # a fixed point: tracking the same commit again reproduces the candidate byte for
    # byte, what changed still said against the recipe it came from
    written = recipe_path.read_bytes()
    again = track(project_dir, "--line", "synthetic-2.0", "--branch", "2.0")
    assert again.rc == 0, again.output
    assert "carried from synthetic\n" in again.output
    assert recipe_path.read_bytes() == written

    checked = run_doit(project_dir, "check")
    assert checked.rc == 0, checked.output
    plan = run_doit(project_dir, "plan", "--target", "synthetic-2.0")
    assert "recipe changed since" not in plan.output


def test_check_exits_1_when_the_branch_moved_and_0_after_tracking(
    project_dir: Path, upstream: Upstream
) -> None:
    start(project_dir, upstream)
    new_branch(upstream, upstream.root)
    assert track(project_dir, "--line", "synthetic-2.0", "--branch", "2.0").rc == 0
    recipe = project_dir / "recipes/synthetic-2.0.yaml"
    before = recipe.read_bytes()
    quiet = track(project_dir, "--line", "synthetic-2.0", "--check")
    assert quiet.rc == 0, quiet.output
    assert "is at the pin" in quiet.output

    moved = upstream.commit("xdna-driver", {"NEWS": "a fix\n"}, "a fix on 2.0")
    outcome = track(project_dir, "--line", "synthetic-2.0", "--check")
    assert outcome.rc == 1, outcome.output
    assert "branch 2.0 moved past the recipe's pin" in outcome.output
    assert f"-> {moved} (1 commits ahead" in outcome.output
    assert recipe.read_bytes() == before  # --check changes nothing

    again = track(project_dir, "--line", "synthetic-2.0")  # follows source.track
    assert again.rc == 0, again.output
    assert "carried from synthetic-2.0" in again.output
    retracked = yaml.safe_load(recipe.read_text())
    assert retracked["source"]["commit"] == moved
    # still carried from where it first came: the notes say synthetic, once
    assert retracked["driver"]["notes"].count("Carried unchanged from recipe synthetic ") == 1
    assert track(project_dir, "--line", "synthetic-2.0", "--check").rc == 0
    # the cell was added once
    matrix = yaml.safe_load((project_dir / "matrices/default.yaml").read_text())
    assert sum(c["recipe"] == "synthetic-2.0" for c in matrix["cells"]) == 1


def test_a_nested_commit_no_mirror_holds_is_named_and_the_survey_says_why(
    project_dir: Path, upstream: Upstream
) -> None:
    start(project_dir, upstream)
    new_branch(upstream, upstream.root)
    empty = upstream.root / "empty-xdp"
    git.Repo.init(empty, bare=True)
    (project_dir / "site.yaml").write_text(
        f"offline: true\nmirrors:\n  {upstream.urls['xdp']}: {empty}\n"
    )
    outcome = track(project_dir, "--line", "synthetic-2.0", "--branch", "2.0")
    assert outcome.rc == 0, outcome.output
    missing = f"xrt/src/xdp {upstream.heads['xdp']} is in no mirror ({empty})"
    assert missing in outcome.output
    assert "survey: could not run: nested commit(s) no local mirror holds" in outcome.output
    text = (project_dir / "recipes/synthetic-2.0.yaml").read_text()
    assert "# Survey: could not run" in text
    record = json.loads((project_dir / "artifacts/synthetic-2.0/track.json").read_text())
    assert record["missing"] == [
        {"path": "xrt/src/xdp", "commit": upstream.heads["xdp"], "url": upstream.urls["xdp"]}
    ]
    assert run_doit(project_dir, "check").rc == 0


def test_a_line_whose_script_refuses_a_carried_option_writes_nothing(
    project_dir: Path, upstream: Upstream
) -> None:
    start(project_dir, upstream)
    driver = upstream.repo("xdna-driver")
    driver.git.checkout("--quiet", "-b", "old")
    upstream.commit(
        "xdna-driver", {"build/build.sh": XDNA_BUILD_SH.replace("-nokmod) nokmod=1 ;;", "")}, "old"
    )
    matrix = (project_dir / "matrices/default.yaml").read_bytes()
    outcome = track(project_dir, "--line", "synthetic-old", "--branch", "old")
    assert outcome.rc == 1, outcome.output
    assert "step shim: the carried argv passes -nokmod" in outcome.output
    assert "no candidate written" in outcome.output
    assert not (project_dir / "recipes/synthetic-old.yaml").exists()
    assert (project_dir / "matrices/default.yaml").read_bytes() == matrix


def test_usage_errors_are_one_line_without_a_traceback(
    project_dir: Path, upstream: Upstream
) -> None:
    start(project_dir, upstream)
    outcome = track(project_dir, "--line", "synthetic", "--branch", "main", "--tag", "x")
    assert outcome.rc == 3, outcome.output  # a usage error, as every wrong command line
    assert "give one of --branch, --tag or --commit" in outcome.output
    assert "Traceback" not in outcome.output


def test_offline_without_a_mirror_says_the_branch_is_not_known_here(
    project_dir: Path, upstream: Upstream
) -> None:
    start(project_dir, upstream)
    # a line of a repository no mirror holds, offline: the empty object cache cannot say
    write_recipe(project_dir, upstream, name="elsewhere", url="https://example.invalid/x.git")
    (project_dir / "site.yaml").write_text("offline: true\n")
    outcome = track(project_dir, "--line", "elsewhere-9", "--branch", "9.9", "--from", "elsewhere")
    assert outcome.rc == 1, outcome.output
    assert "not known here, offline with no local mirror of it" in outcome.output
    assert "whether it exists upstream cannot be told" in outcome.output
    assert "Traceback" not in outcome.output
