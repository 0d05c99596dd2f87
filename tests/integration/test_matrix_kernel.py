"""doit matrix, kernel upgrades (kernel-check, revalidate), the kernel hook, prebuilt recipes."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from tests.debs import build_deb, plugin, xrt_base, xrt_npu
from tests.fakes.fixture import FakeTools
from tests.integration.conftest import DEPENDS, Outcome, installed_here, run_doit
from tests.integration.npu import installed_xrt, npu_host, replay
from tests.integration.upstream import Upstream, write_recipe


def doit(project: Path, fakes: FakeTools, *args: str, env: dict[str, str] | None = None) -> Outcome:
    return run_doit(
        project,
        *args,
        env={**fakes.env, "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS", **(env or {})},
    )


def matrix_file(path: Path, cells: list[tuple[str, str, str]], fails: str = "") -> Path:
    text = "schema: 1\ncells:\n"
    for name, recipe, expect in cells:
        reason = "" if expect == "supported" else "    reason: test\n"
        where = f"    fails: {fails}\n" if expect == "known-broken" else ""
        text += (
            f"  - name: {name}\n    recipe: {recipe}\n    expect: {expect}\n{reason}{where}"
            '    evidence: test\n    host:\n      distro: {id: ubuntu, version: "26.04"}\n'
            '      kernel: ">=7.0, <7.1"\n      npu: {pci: "1022:17f0", revision: "0x10"}\n'
        )
    path.write_text(text)
    return path


def test_matrix_keeps_going_after_a_failing_cell_and_prints_the_table(
    project_dir: Path, upstream: Upstream, fake_tools: FakeTools, tmp_path: Path
) -> None:
    write_recipe(project_dir, upstream, name="good")
    write_recipe(project_dir, upstream, name="payload", nokmod=False)
    npu_host(project_dir / "sysroot")
    fake_tools.installed(DEPENDS)
    cells = matrix_file(
        tmp_path / "m.yaml",
        [("cell-payload", "payload", "supported"), ("cell-good", "good", "supported")],
    )
    outcome = doit(project_dir, fake_tools, "matrix", f"--matrix={cells}")
    assert outcome.rc == 1
    lines = outcome.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("cell "))
    table = "\n".join(lines[header : header + 4])
    assert "cell-payload  payload" in table
    assert "failed at audit" in table
    assert "NEWS: fails differently: fails at audit (no known diagnosis); expected supported" in (
        table
    )
    good = next(line for line in lines[header:] if line.startswith("cell-good"))
    assert " yes " in good
    assert " pass " in good
    # built and audited, but not installed here: the validation that would judge it is missing
    assert "not judged here: built and audited; not installed here" in good
    assert "NEWS" not in good
    assert (project_dir / "artifacts/good/packages.json").exists()  # built after the failure
    assert "!!! cell-payload: NEWS: fails differently: fails at audit" in outcome.stdout


def test_a_known_broken_cell_that_fails_is_not_news(
    project_dir: Path, upstream: Upstream, fake_tools: FakeTools, tmp_path: Path
) -> None:
    write_recipe(project_dir, upstream, name="payload", nokmod=False)
    npu_host(project_dir / "sysroot")
    fake_tools.installed(DEPENDS)
    cells = matrix_file(
        tmp_path / "m.yaml", [("cell-payload", "payload", "known-broken")], "{stage: audit}"
    )
    outcome = doit(project_dir, fake_tools, "matrix", f"--matrix={cells}")
    assert outcome.rc == 0, outcome.output
    assert "as expected: fails at audit (no known diagnosis)" in outcome.stdout


def test_kernel_upgrade_within_the_cell_is_revalidate_only(
    project_dir: Path, fake_tools: FakeTools
) -> None:
    npu_host(project_dir / "sysroot")
    installed_here(project_dir, "ubuntu26-compat")
    (project_dir / "sysroot/proc/sys/kernel/osrelease").write_text("7.0.5-31-generic\n")
    outcome = doit(project_dir, fake_tools, "kernel-check")
    assert outcome.rc == 0, outcome.output
    assert "revalidate only: kernel 7.0.5-31-generic is in cell ubuntu26-npu4" in outcome.stdout
    assert "nothing is compiled" in outcome.stdout


def driver_says(root: Path, version: str) -> None:
    """The kernel log line by which the running amdxdna reports its DRM driver version."""
    log = root / "var/log/kern.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(
        f"[    9.8] [drm] Initialized amdxdna_accel_driver {version} for 0000:c5:00.1 on minor 0\n"
    )


def test_the_running_drivers_version_places_the_host_not_its_release(
    project_dir: Path, fake_tools: FakeTools
) -> None:
    root = npu_host(project_dir / "sysroot")
    installed_here(project_dir, "ubuntu26-compat")
    # a vendor kernel outside the cell's 7.0 range with 7.0's driver backported
    (root / "proc/sys/kernel/osrelease").write_text("6.17.0-1010-oem\n")
    driver_says(root, "0.7.0")
    outcome = doit(project_dir, fake_tools, "kernel-check")
    assert outcome.rc == 0, outcome.output
    assert (
        "revalidate only: kernel 6.17.0-1010-oem is in cell ubuntu26-npu4 (by driver: its "
        "amdxdna reports DRM 0.7.0 (in-tree-0.7), a backport" in outcome.stdout
    )
    # and `doit plan` without --target picks the cell's recipe by the same word
    planned = doit(project_dir, fake_tools, "plan")
    assert planned.rc == 0, planned.output
    assert "target ubuntu26-compat: cell ubuntu26-npu4, by driver: its amdxdna reports DRM" in (
        planned.stdout
    )
    # a 7.0 release whose driver is a later one: the cell's evidence does not speak for it
    (root / "proc/sys/kernel/osrelease").write_text("7.0.5-31-generic\n")
    driver_says(root, "0.10.0")
    later = doit(project_dir, fake_tools, "kernel-check")
    assert later.rc == 0, later.output
    assert "no supported matrix cell matches kernel 7.0.5-31-generic" in later.stdout
    assert (
        "ubuntu26-npu4: by driver: its amdxdna reports DRM 0.10.0 (in-tree-0.10); Linux "
        ">=7.0, <7.1 carries in-tree-0.6-7.0, in-tree-0.7" in later.stdout
    )


def test_kernel_upgrade_into_another_cell_says_build(
    project_dir: Path, fake_tools: FakeTools
) -> None:
    npu_host(project_dir / "sysroot")
    installed_here(project_dir, "ubuntu26-compat")
    # a later kernel lifts the 32 KiB command buffer limit (a hypothetical cell)
    (project_dir / "matrices/later.yaml").write_text(
        "schema: 1\ncells:\n  - name: ubuntu26-npu4-7.1\n    recipe: upstream-main\n"
        "    expect: supported\n    evidence: test\n    host:\n"
        '      distro: {id: ubuntu, version: "26.04"}\n      kernel: ">=7.1, <7.2"\n'
        '      npu: {pci: "1022:17f0", revision: "0x10"}\n'
    )
    outcome = doit(project_dir, fake_tools, "kernel-check", "--kernel", "7.1.2-3-generic")
    assert outcome.rc == 0, outcome.output
    assert (
        "build upstream-main: kernel 7.1.2-3-generic is in cell ubuntu26-npu4-7.1; "
        "installed is ubuntu26-compat" in outcome.stdout
    )
    unknown = doit(project_dir, fake_tools, "kernel-check", "--kernel", "7.3.0-1-generic")
    assert "unverified; keep ubuntu26-compat" in unknown.stdout


def test_kernel_hook_installs_into_a_root_and_only_records(
    project_dir: Path, fake_tools: FakeTools, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (project_dir / "site.yaml").write_text("npu_user: me\n")
    shown = doit(project_dir, fake_tools, "kernel-hook", "--install", "--root", str(root))
    assert shown.rc == 0  # a preview: it said what it would install, and installed nothing
    assert not (root / "etc").exists()
    done = doit(project_dir, fake_tools, "kernel-hook", "--install", "--yes", "--root", str(root))
    assert done.rc == 0, done.output
    hook = root / "etc/kernel/postinst.d/zz-xdnaforge-revalidate"
    assert hook.stat().st_mode & 0o111
    unit = (root / "etc/systemd/system/xdnaforge-revalidate.service").read_text()
    assert "ConditionPathExists=/var/lib/xdnaforge/revalidate-%v" in unit
    assert "dodo.py revalidate --root-validate /var/lib/xdnaforge/validate-%v.json" in unit
    # the gates run as the NPU's user in a login session; only xrt-smi validate as root
    assert "\nUser=me\nPAMName=login\n" in unit
    assert (
        "ExecStartPre=+-/opt/xilinx/xrt/bin/xrt-smi validate --format JSON "
        "--output /var/lib/xdnaforge/validate-%v.json" in unit
    )
    assert "the revalidation runs as the NPU's user me (from site.yaml npu_user)" in done.stdout
    wants = root / "etc/systemd/system/multi-user.target.wants/xdnaforge-revalidate.service"
    assert wants.is_symlink()
    assert wants.resolve() == (root / "etc/systemd/system/xdnaforge-revalidate.service").resolve()
    # the kernel package runs it with the new version; it writes a marker and nothing else
    state = tmp_path / "state"
    ran = subprocess.run(
        [str(hook), "7.0.9-40-generic", "/boot/vmlinuz-7.0.9-40-generic"],
        env={"PATH": "/usr/bin:/bin", "XDNAFORGE_STATE_DIR": str(state)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0
    marker = (state / "revalidate-7.0.9-40-generic").read_text()
    assert marker.startswith("revalidation needed for kernel 7.0.9-40-generic")
    assert [p.name for p in state.iterdir()] == ["revalidate-7.0.9-40-generic"]


def test_first_boot_revalidation_writes_the_outcome_to_the_report(
    project_dir: Path, fake_tools: FakeTools
) -> None:
    npu_host(project_dir / "sysroot")
    replay(fake_tools, "healthy-npu4")
    installed_xrt(fake_tools)
    installed_here(project_dir, "ubuntu26-compat")
    (project_dir / "sysroot/proc/sys/kernel/osrelease").write_text("7.0.5-31-generic\n")
    outcome = doit(project_dir, fake_tools, "revalidate")
    assert outcome.rc == 0, outcome.output
    kernel = json.loads((project_dir / "artifacts/ubuntu26-compat/kernel.json").read_text())
    assert (kernel["decision"], kernel["outcome"]) == ("revalidate", "pass")
    report = (project_dir / "artifacts/ubuntu26-compat/BUILD_REPORT.md").read_text()
    assert "Kernel 7.0.5-31-generic" in report
    assert "Outcome: pass." in report
    assert fake_tools.calls("apt-get") == []


def _vendor(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "vendor"
    folder.mkdir()
    return {spec.package: build_deb(folder, spec) for spec in (xrt_base(), xrt_npu(), plugin())}


def _prebuilt_recipe(project: Path, debs: dict[str, Path], digests: dict[str, str]) -> None:
    packages = "".join(
        f"    - file: {path.name}\n      package: {name}\n      sha256: {digests[name]}\n"
        for name, path in debs.items()
    )
    (project / "recipes/vendor.yaml").write_text(
        "schema: 1\nname: vendor\nkind: prebuilt\ndescription: a vendor bundle\n"
        'hosts:\n  distro: {id: ubuntu, version: "24.04"}\n  kernel: ">=6.14"\n'
        '  npu:\n    - {pci: "1022:17f0", revision: "0x10"}\n'
        "driver:\n  driver: amdxdna (in-tree)\n"
        f"prebuilt:\n  packages:\n{packages}"
        "install:\n  order: [xrt-base, xrt-npu, xrt_plugin-amdxdna]\n"
        "validate:\n  gates: [host]\n"
    )


def test_prebuilt_packages_are_checked_collected_and_audited(
    project_dir: Path, fake_tools: FakeTools, tmp_path: Path
) -> None:
    debs = _vendor(tmp_path)
    site = tmp_path / "site.yaml"
    site.write_text(f"vendor_dirs: [{tmp_path / 'vendor'}]\n")
    env = {"XDNAFORGE_SITE": str(site)}
    digests = {name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in debs.items()}

    _prebuilt_recipe(project_dir, debs, {**digests, "xrt-npu": "unpinned"})
    refused = doit(project_dir, fake_tools, "build", "--target", "vendor", env=env)
    assert refused.rc == 1
    assert f"has sha256 {digests['xrt-npu']}; the recipe does not pin its sha256 yet" in (
        refused.output
    )

    _prebuilt_recipe(project_dir, debs, digests)
    outcome = doit(project_dir, fake_tools, "build", "--target", "vendor", env=env)
    assert outcome.rc == 0, outcome.output
    assert "fetch" not in outcome.stdout  # nothing to fetch, patch or build
    packages = json.loads((project_dir / "artifacts/vendor/packages.json").read_text())
    assert {p["package"] for p in packages["packages"]} == set(debs)
    audit = json.loads((project_dir / "artifacts/vendor/audit.json").read_text())
    assert audit["verdict"] == "pass"
