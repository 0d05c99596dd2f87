"""LAVA job definitions for matrix cells; pure (returns plain data to dump as YAML).

One job per cell: an `ssh` device (a bare-metal laptop that keeps its OS) or a `docker`
device (a container host such as ZimaOS, the NPU node passed through). Jobs are matched to
devices by tags from stable facts, the NPU generation and the distro release; never the
kernel, which changes under the device and which gate 1 checks at run time.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from xdnaforge.config.fleet import FleetSettings
from xdnaforge.config.matrix import Cell
from xdnaforge.config.recipe import Npu, Recipe
from xdnaforge.fleet.aptly import HOST_KEYRING_DIR, KEYRING
from xdnaforge.host import npu_generation

DEVICE_TYPES = ("ssh", "docker")
ACCEL_NODE = "/dev/accel/accel0"
# xdna-driver's firmware directories name the generations: <device>_<revision>
GENERATIONS = {
    ("1502", "0x00"): "npu1",
    ("17f0", "0x00"): "npu2",
    ("17f0", "0x10"): "npu4",
    ("17f0", "0x11"): "npu5",
    ("17f0", "0x20"): "npu6",
}
KEPT = "/var/lib/xdnaforge/lava-kept"
CHECKOUT = "xdnaforge"


def generation(npu: Npu) -> str:
    if npu.name:
        return npu.name
    device = npu.pci.split(":")[1]
    known = npu_generation(device, npu.revision)
    if known is not None:
        return known.generation  # every device and revision the current driver binds
    return GENERATIONS.get((device, npu.revision or ""), f"npu-{device}-{npu.revision or 'any'}")


def tags(cell: Cell) -> list[str]:
    return [generation(cell.npu), f"{cell.distro_id}-{cell.distro_version}"]


def definition_name(cell: Cell) -> str:
    """The test definition's name; LAVA names the suite `<n>_<name>` after it."""
    return f"xdnaforge-{cell.name}"


def _fetch(url: str, path: str) -> str:
    return f"curl -fsSL --retry 3 -o {shlex.quote(path)} {shlex.quote(url)}"


def definition_steps(recipe: Recipe, fleet: FleetSettings) -> list[str]:
    """The shell lines of the inline test definition, run as root on the device.

    LAVA runs them as one `set -e` script (seen in a real lava-run: a failed `( ... ); true`
    ended the run there), so every line is a single `a && b || c` list or ends in
    `|| true`: a failure is reported and never skips the rollback at the end, which must
    leave the host as this job found it.
    """
    target = recipe.name
    packages = " ".join(recipe.install_order)
    apt = f"{fleet.apt_url}/{target}"
    records = f"{CHECKOUT}/artifacts/{target}"
    # <results_url>/<host>/<target>/: the layout of a host's artifacts, so the lab can hand
    # these directories to `doit fleet-report --from` as they are
    results = f"{fleet.results_url}/$(hostname)/{target}"
    sources = f"/etc/apt/sources.list.d/xdnaforge-{target}.list"
    pins = f"/etc/apt/preferences.d/xdnaforge-{target}.pref"
    keyring = f"{HOST_KEYRING_DIR}/{KEYRING}"
    kept = f"{KEPT}/{target}"
    return [
        f"mkdir -p {HOST_KEYRING_DIR} {kept} && rm -f {kept}/*.deb || true",
        # what is installed now is kept as .deb files, so the rollback restores exactly it
        f'for p in {packages}; do if dpkg-query -W "$p" >/dev/null 2>&1; then '
        f'(cd {kept} && dpkg-repack "$p") || true; fi; done',
        f"{_fetch(f'{fleet.apt_url}/{KEYRING}', keyring)} && "
        f"{_fetch(f'{apt}/xdnaforge-{target}.list', sources)} && "
        f"{_fetch(f'{apt}/xdnaforge-{target}.pref', pins)} && "
        "apt-get update -q && "
        f"apt-get install -y -q --allow-downgrades {packages} && "
        "lava-test-case install --result pass || lava-test-case install --result fail",
        f"git clone -q --depth 1 {shlex.quote(fleet.xdnaforge_url or '')} {CHECKOUT} && "
        f"python3 -m venv {CHECKOUT}/.venv && {CHECKOUT}/.venv/bin/pip install -q -e ./{CHECKOUT}"
        " && lava-test-case setup --result pass || lava-test-case setup --result fail",
        # validate exits 1 when a gate fails; each gate is reported on its own below
        f"(cd {CHECKOUT} && .venv/bin/doit validate --target {target}) || true",
        f"{CHECKOUT}/.venv/bin/python -m xdnaforge.fleet.lava_cases "
        f"{records}/validation.json > lava-cases.sh && sh lava-cases.sh "
        "|| lava-test-case validation-record --result fail",
        # the records go where the lab collects them (LAVA keeps no files of its own)
        f"for f in bench/history.jsonl kernel.json; do if [ -f {records}/$f ]; then "
        f"curl -fsS --retry 3 -T {records}/$f {results}/$f || true; fi; done",
        f"curl -fsS --retry 3 -T {records}/validation.json {results}/validation.json "
        "&& lava-test-case push-records --result pass "
        "|| lava-test-case push-records --result fail",
        f"(apt-get purge -y -q {packages} || true) && rm -f {sources} {pins} && "
        f"(if ls {kept}/*.deb >/dev/null 2>&1; then dpkg -i {kept}/*.deb; fi) && "
        "apt-get update -q && "
        "lava-test-case rollback --result pass || lava-test-case rollback --result fail",
    ]


def job(
    cell: Cell, recipe: Recipe, fleet: FleetSettings, device_type: str, snapshot: str | None
) -> dict[str, Any]:
    """The LAVA job for one cell on one device type."""
    minutes = {"minutes": 90}
    definition = {
        "metadata": {
            "format": "Lava-Test Test Definition 1.0",
            "name": definition_name(cell),
            "description": f"xdnaforge gates for cell {cell.name} ({recipe.name})",
            "os": [cell.distro_id],
            "devices": [generation(cell.npu)],
        },
        "run": {"steps": definition_steps(recipe, fleet)},
    }
    actions: list[dict[str, Any]]
    if device_type == "ssh":
        actions = [
            {"deploy": {"to": "ssh", "os": cell.distro_id, "timeout": {"minutes": 5}}},
            {
                "boot": {
                    "method": "ssh",
                    "connection": "ssh",
                    "prompts": ["root@"],
                    "timeout": {"minutes": 5},
                }
            },
        ]
    else:
        actions = [
            {"deploy": {"to": "docker", "image": fleet.docker_image or "", "os": cell.distro_id}},
            {
                "boot": {
                    "method": "docker",
                    "command": "bash",
                    "prompts": ["root@"],
                    "timeout": {"minutes": 5},
                }
            },
        ]
    actions.append(
        {
            "test": {
                "timeout": {"minutes": 75},
                "definitions": [
                    {
                        "from": "inline",
                        "name": definition_name(cell),
                        "path": f"inline/{definition_name(cell)}.yaml",
                        "repository": definition,
                    }
                ],
            }
        }
    )
    metadata = {
        "xdnaforge.cell": cell.name,
        "xdnaforge.target": recipe.name,
        "xdnaforge.expect": cell.expect,
    }
    if snapshot:
        metadata["xdnaforge.snapshot"] = snapshot
    return {
        "job_name": f"xdnaforge {cell.name} ({recipe.name}) on {device_type}",
        "device_type": device_type,
        "tags": tags(cell),
        "visibility": "public",
        "priority": "medium",
        "timeouts": {"job": minutes, "action": {"minutes": 75}, "connection": {"minutes": 2}},
        "metadata": metadata,
        "actions": actions,
    }


def docker_device_dictionary(cell: Cell) -> str:
    """What the lab's docker device needs in its device dictionary: LAVA jobs cannot pass
    devices or ulimits to docker themselves, the device does (docker.jinja2's docker_devices
    and docker_extra_arguments; checked by rendering LAVA 2023.01's template)."""
    return (
        "{% extends 'docker.jinja2' %}\n"
        f"{{# xdnaforge: a container host for cell {cell.name} (tags: "
        f"{', '.join(tags(cell))}) #}}\n"
        f'{{% set docker_devices = ["{ACCEL_NODE}"] %}}\n'
        '{% set docker_extra_arguments = ["--ulimit=memlock=-1:-1"] %}\n'
    )


def missing_settings(fleet: FleetSettings, device_type: str) -> Sequence[str]:
    """The site.yaml fleet keys a job cannot do without."""
    needed = ["apt_url", "results_url", "xdnaforge_url"]
    if device_type == "docker":
        needed.append("docker_image")
    return [key for key in needed if not getattr(fleet, key)]
