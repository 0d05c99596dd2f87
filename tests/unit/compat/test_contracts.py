"""Recipes' driver contracts against what the compat resolver reads."""

from __future__ import annotations

import dataclasses

from tests.conftest import REPO
from xdnaforge.compat import contracts, facts
from xdnaforge.config.project import load_project

UPSTREAM = facts.load_upstream()
RECIPES = load_project(REPO, {}).recipes


def test_every_shipped_contract_is_readable() -> None:
    for recipe in RECIPES.values():
        assert contracts.check_contract(recipe, UPSTREAM) == [], recipe.name


def test_every_shipped_contract_states_or_explains_each_field() -> None:
    for recipe in RECIPES.values():
        assert contracts.unexplained(recipe) == [], recipe.name
    assert dict(RECIPES["ubuntu26-compat"].driver.unknown).keys() == {"firmware_protocol_major"}


def test_a_field_left_silent_is_named() -> None:
    recipe = RECIPES["ubuntu26-compat"]
    silent = dataclasses.replace(recipe.driver, unknown=(), drm_version=None)
    assert contracts.unexplained(dataclasses.replace(recipe, driver=silent)) == [
        "drm_version",
        "firmware_protocol_major",
    ]


def test_unreadable_contract_fields_are_named() -> None:
    recipe = RECIPES["ubuntu26-compat"]
    driver = dataclasses.replace(
        recipe.driver,
        drm_version="seven",
        firmware_version="1.1",
        firmware_protocol_major=9,
        cmd_bo_max_bytes=65536,
    )
    npus = (dataclasses.replace(recipe.hosts.npus[0], pci="1022:abcd"),)
    broken = dataclasses.replace(
        recipe, driver=driver, hosts=dataclasses.replace(recipe.hosts, npus=npus)
    )
    found = dict(contracts.check_contract(broken, UPSTREAM))
    assert found[("driver", "drm_version")] == "'seven' is not a DRM driver version like 0.7.0"
    assert "is not a firmware version" in found[("driver", "firmware_version")]
    assert "speaks protocol 9 (known: 5, 6, 7)" in found[("driver", "firmware_protocol_major")]
    # the pinned 1.6 shim creates 32 KiB command BOs (src/shim/umq/hwq.cpp)
    assert "the shim at the pinned commit creates 32768" in found[("driver", "cmd_bo_max_bytes")]
    assert "binds 1022:abcd" in found[("hosts", "npu", 0, "pci")]
