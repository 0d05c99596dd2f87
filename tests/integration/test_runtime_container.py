"""Recipes whose hosts run userspace in a container get the runtime image of exactly the
audited packages, written by the audit stage."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.fakes.fixture import FakeTools
from tests.integration.conftest import build

NPU_LINE = '    - {pci: "1022:17f0", revision: "0x10"}\n'


def in_container(project: Path, image: str) -> None:
    recipe = project / "recipes/synthetic.yaml"
    text = recipe.read_text()
    text = re.sub(r'  runtime: container\n  runtime_image: ".*"\n', "", text)
    recipe.write_text(
        text.replace(NPU_LINE, f'{NPU_LINE}  runtime: container\n  runtime_image: "{image}"\n')
    )


@pytest.mark.tools("dpkg-deb")
def test_the_containerfile_installs_exactly_the_audited_files(
    setup: Path, fake_tools: FakeTools
) -> None:
    in_container(setup, "ubuntu:26.04")
    outcome = build(setup, fake_tools)
    assert outcome.rc == 0, outcome.output
    records = setup / "artifacts/synthetic"
    audit = json.loads((records / "audit.json").read_text())
    by_name = {p["package"]: p for p in audit["packages"]}
    order = ["xrt-base", "xrt-npu", "xrt_plugin-amdxdna"]  # the synthetic recipe's install.order
    text = (records / "container/Containerfile").read_text()
    assert "\nFROM ubuntu:26.04\n" in text
    assert f"\nCOPY {' '.join(by_name[n]['file'] for n in order)} /tmp/xdnaforge/\n" in text
    names = [Path(by_name[n]["file"]).name for n in order]
    assert f"apt-get install -y --no-install-recommends {' '.join('./' + n for n in names)}" in text
    assert "Firmware-free" in text
    # the checksum list the image build runs, run here against the real packages
    checks = re.findall(r"^      '([0-9a-f]{64}  [^']+)' \\$", text, re.MULTILINE)
    assert [c.split()[1] for c in checks] == names
    done = subprocess.run(
        ["sha256sum", "--check", "--strict", "-"],
        input="".join(f"{c}\n" for c in checks),
        cwd=records / "debs",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    readme = (records / "container/README.md").read_text()
    image = re.search(r"podman build -t (\S+)", text)
    assert image is not None
    assert (
        f"podman run --rm -it --device /dev/accel/accel0 --ulimit memlock=-1:-1 "
        f"--group-add keep-groups {image.group(1)}"
    ) in readme
    assert '--group-add "$(getent group render | cut -d: -f3)"' in readme
    assert f"runtime container: {records / 'container/Containerfile'}" in outcome.stdout


@pytest.mark.tools("dpkg-deb")
def test_a_new_runtime_image_reruns_only_the_audit(setup: Path, fake_tools: FakeTools) -> None:
    in_container(setup, "ubuntu:26.04")
    assert build(setup, fake_tools).rc == 0
    in_container(setup, "registry.example.invalid:5000/base/ubuntu:26.04")
    again = build(setup, fake_tools)
    assert again.rc == 0, again.output
    text = (setup / "artifacts/synthetic/container/Containerfile").read_text()
    assert "\nFROM registry.example.invalid:5000/base/ubuntu:26.04\n" in text
    assert "runtime container:" in again.stdout
    for tree in ("xrt/build", "build"):  # the fake build scripts count their compiles
        counter = setup / "build/synthetic/src" / tree / "Release/compile-count"
        assert len(counter.read_text().splitlines()) == 1


def test_a_host_runtime_writes_no_container(setup: Path, fake_tools: FakeTools) -> None:
    assert build(setup, fake_tools).rc == 0
    assert not (setup / "artifacts/synthetic/container").exists()
