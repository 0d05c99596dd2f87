"""The runtime gate checks the recipe's own packages, at the versions recorded for the
target, and their files against dpkg's md5sums: a recipe like the real XRT 2.19 `-npu`
output (xrt-runtime, xrt-base-dev, xrt-npu; no xrt-base) passes on a healthy host."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.fakes.fixture import FakeTools
from tests.integration.conftest import run_doit
from tests.integration.npu import npu_host

ORDER = ["xrt-runtime", "xrt-base-dev", "xrt-npu", "xrt_plugin-amdxdna"]
VERSIONS = {
    "xrt-runtime": "2.19.0",
    "xrt-base-dev": "2.19.0",
    "xrt-npu": "2.19.0",
    "xrt_plugin-amdxdna": "2.19.0",
}
LIBRARY = "opt/xilinx/xrt/lib/libxrt_coreutil.so.2"


def recipe_219(project: Path) -> None:
    """ubuntu26-compat with the package set a real XRT 2.19 -npu build makes."""
    text = (REPO / "recipes/ubuntu26-compat.yaml").read_text()
    text = text.replace("name: ubuntu26-compat", "name: xrt219")
    text = text.replace(
        'packages: ["Release/xrt_*-base.deb", "Release/xrt_*-base-dev.deb", '
        '"Release/xrt_*-npu.deb"]\n      produces: [xrt-base, xrt-base-dev, xrt-npu]',
        'packages: ["Release/xrt_*-Runtime.deb", "Release/xrt_*-runtime.deb", '
        '"Release/xrt_*-base-dev.deb", "Release/xrt_*-npu.deb"]\n'
        "      produces: [xrt-runtime, xrt-base-dev, xrt-npu]",
    )
    text = text.replace(
        "order: [xrt-base, xrt-npu, xrt_plugin-amdxdna]", f"order: [{', '.join(ORDER)}]"
    )
    text = text.replace(
        "gates: [host, memlock, device, runtime, examine, validate, pyxrt]",
        "gates: [host, runtime]",
    )
    assert "xrt-base," not in text.split("install:")[1]
    (project / "recipes/xrt219.yaml").write_text(text)


def write(project: Path, name: str, body: dict[str, Any]) -> None:
    path = project / f"artifacts/xrt219/{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema": 1, "kind": name, "xdnaforge": "0.1.0", **body}))


def packages_record(project: Path) -> None:
    # two files with Package xrt-runtime, as the real 2.19 build makes
    files = [*ORDER[:1], *ORDER]
    write(
        project,
        "packages",
        {
            "packages": [
                {
                    "file": f"debs/{p}.deb",
                    "package": p,
                    "version": VERSIONS[p],
                    "architecture": "amd64",
                    "size": 1,
                    "sha256": "0" * 64,
                }
                for p in files
            ]
        },
    )


def validate(project: Path, fakes: FakeTools) -> dict[str, Any]:
    outcome = run_doit(
        project,
        "validate",
        "--target",
        "xrt219",
        env={**fakes.env, "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS"},
    )
    assert outcome.rc in (0, 1), outcome.output
    record = json.loads((project / "artifacts/xrt219/validation.json").read_text())
    gate: dict[str, Any] = next(g for g in record["gates"] if g["name"] == "runtime")
    return gate


@pytest.fixture
def host(project_dir: Path, fake_tools: FakeTools) -> Path:
    recipe_219(project_dir)
    root = npu_host(project_dir / "sysroot")
    (root / LIBRARY).write_bytes(b"XRT 2.19 core library\n")
    info = root / "var/lib/dpkg/info"
    info.mkdir(parents=True)
    digest = hashlib.md5((root / LIBRARY).read_bytes(), usedforsecurity=False).hexdigest()
    (info / "xrt-npu.md5sums").write_text(f"{digest}  {LIBRARY}\n")
    # another package whose name starts the same: its md5sums must not be taken for xrt-npu's
    (info / "xrt-npu-extra.md5sums").write_text(f"{'0' * 32}  {LIBRARY}\n")
    fake_tools.installed(VERSIONS)
    packages_record(project_dir)
    return root


@pytest.mark.usefixtures("host")
def test_the_recipes_packages_pass_without_xrt_base(
    project_dir: Path, fake_tools: FakeTools
) -> None:
    gate = validate(project_dir, fake_tools)
    assert gate["status"] == "pass", gate
    assert gate["summary"] == (
        "xrt-runtime 2.19.0, xrt-base-dev 2.19.0, xrt-npu 2.19.0, xrt_plugin-amdxdna 2.19.0 "
        "(as packages.json records); 1 files match dpkg's md5sums"
    )
    assert (
        "xrt-npu 2.19.0 (2.19.0 in packages.json); 1 files against dpkg's md5sums, 0 differ"
        in (gate["evidence"])
    )
    assert (
        "xrt-runtime 2.19.0 (2.19.0 in packages.json); dpkg keeps no md5sums for it"
        in (gate["evidence"])
    )
    asked = fake_tools.calls("dpkg-query")[-1]
    assert asked[-4:] == ORDER


@pytest.mark.usefixtures("host")
def test_a_missing_package_is_named(project_dir: Path, fake_tools: FakeTools) -> None:
    fake_tools.installed({p: v for p, v in VERSIONS.items() if p != "xrt-base-dev"})
    gate = validate(project_dir, fake_tools)
    assert gate["status"] == "fail"
    assert gate["summary"] == "xrt-base-dev is not installed"


@pytest.mark.usefixtures("host")
def test_another_version_is_named(project_dir: Path, fake_tools: FakeTools) -> None:
    fake_tools.installed({**VERSIONS, "xrt-npu": "2.19.1"})
    gate = validate(project_dir, fake_tools)
    assert gate["status"] == "fail"
    assert gate["summary"] == "xrt-npu is 2.19.1, packages.json has 2.19.0"


def test_a_changed_file_is_named(project_dir: Path, host: Path, fake_tools: FakeTools) -> None:
    (host / LIBRARY).write_bytes(b"overwritten by another XRT\n")
    gate = validate(project_dir, fake_tools)
    assert gate["status"] == "fail"
    assert gate["summary"] == f"xrt-npu: /{LIBRARY} differs from what dpkg installed"


def test_install_record_for_this_root_wins(
    project_dir: Path, host: Path, fake_tools: FakeTools
) -> None:
    installed = [
        {"package": p, "version": "2.19.2", "sha256": "0" * 64, "replaced": None} for p in ORDER
    ]
    write(
        project_dir,
        "install",
        {"root": str(host.resolve()), "state": "installed", "installed": installed},
    )
    gate = validate(project_dir, fake_tools)
    assert gate["status"] == "fail"
    assert gate["summary"].startswith(
        "xrt-runtime is 2.19.0, install.json has 2.19.2; xrt-base-dev is 2.19.0, install.json"
    )
    # installed into another root: this host's packages are judged against packages.json
    write(project_dir, "install", {"root": "/elsewhere", "state": "installed", "installed": []})
    assert validate(project_dir, fake_tools)["status"] == "pass"
