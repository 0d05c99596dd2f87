"""The runtime Containerfile follows the layout the audited packages make: /opt/xilinx/xrt for
ours (variables pointing there), Debian's multiarch /usr for a distro stack (none needed)."""

from __future__ import annotations

import dataclasses
from typing import Any

from tests.conftest import REPO
from tests.unit.hardware.test_xrt_layout import FORKY, OPT
from xdnaforge.config.project import load_project
from xdnaforge.config.recipe import Recipe
from xdnaforge.environments.runtime_container import containerfile, environment, readme
from xdnaforge.hardware.xrt_layout import layout_from_files

PROJECT = load_project(REPO, {})


def in_container(name: str) -> Recipe:
    recipe = PROJECT.recipes[name]
    hosts = dataclasses.replace(recipe.hosts, runtime="container", runtime_image="debian:forky")
    return dataclasses.replace(recipe, hosts=hosts)


def passed(recipe: Recipe) -> dict[str, Any]:
    return {
        "packages": [
            {
                "package": name,
                "version": "1",
                "file": f"debs/{name}_1_amd64.deb",
                "sha256": f"{index:064x}",
                "verdict": "pass",
            }
            for index, name in enumerate(recipe.install_order)
        ]
    }


def test_a_distro_stack_in_usr_needs_no_variables_and_is_checked_where_debian_puts_it() -> None:
    recipe = in_container("debian-forky-archive")
    layout = layout_from_files(FORKY)
    assert layout is not None
    text = containerfile(recipe, passed(recipe), layout)
    assert environment(layout) == ""
    assert "\nENV " not in text
    assert "/opt/xilinx" not in text
    assert " && if ! test -x /usr/bin/xrt-smi; then \\\n" in text
    assert (
        " && if ! ls /usr/lib/x86_64-linux-gnu/libxrt_driver_xdna.so* >/dev/null 2>&1; then" in text
    )
    assert text.endswith('CMD ["/usr/bin/xrt-smi", "examine"]\n')
    assert "plugin in /usr/lib/x86_64-linux-gnu" in readme(recipe, passed(recipe), layout)


def test_our_opt_stack_gets_its_prefix_on_path_and_in_the_loader_path() -> None:
    recipe = in_container("ubuntu26-compat")
    layout = layout_from_files(OPT)
    assert layout is not None
    text = containerfile(recipe, passed(recipe), layout)
    assert (
        "\nENV XILINX_XRT=/opt/xilinx/xrt PATH=/opt/xilinx/xrt/bin:$PATH "
        "LD_LIBRARY_PATH=/opt/xilinx/xrt/lib\n"
    ) in text
    assert " && if ! test -x /opt/xilinx/xrt/bin/xrt-smi; then \\\n" in text
    assert "ls /opt/xilinx/xrt/lib/libxrt_driver_xdna.so* >/dev/null" in text
    assert text.endswith('CMD ["/opt/xilinx/xrt/bin/xrt-smi", "examine"]\n')


def test_a_stack_without_the_plugin_fails_the_image_build_naming_it() -> None:
    recipe = in_container("debian-forky-archive")
    layout = layout_from_files({k: v for k, v in FORKY.items() if k != "libxrt-npu2"})
    assert layout is not None
    text = containerfile(recipe, passed(recipe), layout)
    assert (
        "echo 'xdnaforge: no amdxdna plugin (libxrt_driver_xdna.so*) in "
        "/usr/lib/x86_64-linux-gnu' >&2" in text
    )
