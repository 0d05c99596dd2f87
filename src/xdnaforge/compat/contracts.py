"""Recipes' `driver:` contracts checked against what the resolver can read (pure).

A contract field the resolver cannot read (a DRM version that is not a version, a protocol no
driver in the facts speaks, a command-BO size the pinned shim contradicts, an NPU no driver
binds) is a problem for `doit check`: a contract nothing reads is a contract nobody holds.
"""

from __future__ import annotations

from typing import Any

from xdnaforge.compat.facts import version_tuple
from xdnaforge.config import recipe as recipe_model
from xdnaforge.config.recipe import CONTRACT_FIELDS

KeyPath = tuple[str | int, ...]


def known_protocol_majors(upstream: dict[str, Any]) -> set[int]:
    majors = {int(b["protocol_major"]) for b in upstream["firmware"]}
    for driver in upstream["drivers"]:
        for rule in driver["protocol"].values():
            majors.update(int(r["major"]) for r in rule["rules"])
    return majors


def check_contract(
    recipe: recipe_model.Recipe, upstream: dict[str, Any]
) -> list[tuple[KeyPath, str]]:
    """(key path in the recipe, message) for each field the resolver cannot read."""
    contract = recipe.driver
    found: list[tuple[KeyPath, str]] = []
    if contract.drm_version is not None and version_tuple(contract.drm_version) is None:
        found.append(
            (
                ("driver", "drm_version"),
                f"'{contract.drm_version}' is not a DRM driver version like 0.7.0",
            )
        )
    if contract.firmware_version is not None:
        parsed = version_tuple(contract.firmware_version)
        if parsed is None or len(parsed) != 4:
            found.append(
                (
                    ("driver", "firmware_version"),
                    f"'{contract.firmware_version}' is not a firmware version like 1.1.2.64",
                )
            )
    majors = known_protocol_majors(upstream)
    if contract.firmware_protocol_major is not None and contract.firmware_protocol_major not in (
        majors
    ):
        found.append(
            (
                ("driver", "firmware_protocol_major"),
                f"no driver or firmware in the compat facts speaks protocol "
                f"{contract.firmware_protocol_major} (known: "
                f"{', '.join(map(str, sorted(majors)))})",
            )
        )
    if contract.cmd_bo_max_bytes is not None and recipe.source is not None:
        pinned = next(
            (
                e
                for e in upstream["xdna_driver"]
                if e["commit"] == recipe.source.commit and e.get("userspace")
            ),
            None,
        )
        size = pinned["userspace"]["cmd_bo_bytes"] if pinned else None
        if size is not None and size != contract.cmd_bo_max_bytes:
            found.append(
                (
                    ("driver", "cmd_bo_max_bytes"),
                    f"{contract.cmd_bo_max_bytes} bytes, but the shim at the pinned "
                    f"commit creates {size} ({pinned['userspace']['from'] if pinned else ''}"
                    "; compat_facts.json)",
                )
            )
    bound = {pci for d in upstream["drivers"] for pci in d["pci_ids"]}
    for index, npu in enumerate(recipe.hosts.npus):
        if npu.pci not in bound:
            found.append(
                (
                    ("hosts", "npu", index, "pci"),
                    f"no amdxdna generation in the compat facts binds {npu.pci}",
                )
            )
    return found


def unexplained(recipe: recipe_model.Recipe) -> list[str]:
    """The contract fields a recipe neither states nor explains under `driver.unknown`: the
    resolver can say nothing about them, and nobody said why."""
    contract = recipe.driver
    explained = {name for name, _ in contract.unknown}
    return [
        name
        for name in CONTRACT_FIELDS
        if getattr(contract, name) is None and name not in explained
    ]
