"""The matrix cell `doit track` adds for a candidate: its name (distro, release, NPU
generation, line), the host profile it is on (the starting recipe's cell, else its hosts) and
the matrix text with it appended, comments kept. Edge helper of stages/track.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from xdnaforge.config.project import Project
from xdnaforge.config.recipe import Recipe
from xdnaforge.errors import StageFailed
from xdnaforge.host import npu_generation


def cell_name(host: Mapping[str, Any], line: str) -> str:
    """`ubuntu26-npu4-xdna-1-9`: distro, release (Ubuntu's year), NPU generation, line."""
    distro = host["distro"]
    version = str(distro["version"])
    release = version.split(".")[0] if distro["id"] == "ubuntu" else version.replace(".", "")
    npu = host["npu"]
    generation = npu_generation(npu["pci"], npu.get("revision"))
    name = generation.generation if generation else npu["pci"].split(":")[-1]
    # no dots: a cell names files (artifacts/lava/<cell>.<type>.yaml) and CI jobs
    return f"{distro['id']}{release}-{name}-{line.replace('.', '-')}"


def cell_for(project: Project, recipe: Recipe) -> tuple[dict[str, Any], Path]:
    """The host of the starting recipe's matrix cell and its file, or one from its hosts."""
    for matrix in project.matrices:
        for cell in matrix.cells:
            if cell.recipe == recipe.name:
                host = {
                    "distro": {"id": cell.distro_id, "version": cell.distro_version},
                    "kernel": cell.kernel.text,
                    "npu": {"pci": cell.npu.pci, "revision": cell.npu.revision},
                }
                return host, project.root / matrix.origin
    npu = recipe.hosts.npus[0]
    host = {
        "distro": {"id": recipe.hosts.distro_id, "version": recipe.hosts.distro_version},
        "kernel": recipe.hosts.kernel.text,
        "npu": {"pci": npu.pci, "revision": npu.revision},
    }
    return host, project.root / "matrices" / "default.yaml"


def append_cell(path: Path, cell: dict[str, Any]) -> str:
    """The matrix text with the cell appended to its `cells:` list (comments kept)."""
    text = path.read_text(encoding="utf-8") if path.exists() else "schema: 1\ncells:\n"
    block = yaml.safe_dump([cell], sort_keys=False, width=92, allow_unicode=True)
    indented = "".join(f"  {line}" if line.strip() else line for line in block.splitlines(True))
    new = text.rstrip("\n") + "\n\n" + indented
    data = yaml.safe_load(new)
    before = yaml.safe_load(text) or {}
    if (
        not isinstance(data, dict)
        or len(data.get("cells") or []) != len(before.get("cells") or []) + 1
    ):
        raise StageFailed(
            f"{path}: cannot append a cell (its `cells:` list is not the last key)",
            hint=f"add this cell by hand:\n{block}",
        )
    return new
