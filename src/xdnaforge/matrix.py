"""Matrix models: host profiles -> recipe, with what is expected of each cell; pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .kernel import KernelRange
from .recipe import Npu
from .recipe_parse import parse_distro, parse_kernel, parse_npu
from .schema import Reader
from .yamlfile import Document

EXPECTATIONS = ("supported", "known-broken", "unverified")


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    name: str
    recipe: str
    distro_id: str
    distro_version: str
    kernel: KernelRange
    npu: Npu
    expect: str
    reason: str | None  # why it is broken / what does not work there
    evidence: str
    origin: str
    key_path: str  # cells[2], for messages about this cell from other modules
    positions: tuple[tuple[str, int, int], ...]  # (key, line, column) of recipe, host, npu


@dataclass(frozen=True, slots=True, kw_only=True)
class Matrix:
    name: str
    origin: str
    cells: tuple[Cell, ...]


def parse_matrix(document: Document, name: str) -> tuple[Matrix | None, Reader]:
    reader = Reader(document)
    top = reader.mapping(document.data, (), required=("schema", "cells"), optional=("description",))
    if top is None:
        return None, reader
    schema = reader.integer(top, "schema", ())
    if schema is not None and schema != 1:
        reader.problem(("schema",), f"unsupported schema {schema}; this xdnaforge reads schema 1")
    reader.string(top, "description", ())
    cells = []
    names: set[str] = set()
    for index, item in enumerate(reader.sequence(top, "cells", ())):
        cell = _cell(reader, item, ("cells", index))
        if cell is None:
            continue
        if cell.name in names:
            reader.problem(("cells", index, "name"), f"cell '{cell.name}' is defined twice")
        names.add(cell.name)
        cells.append(cell)
    # cells that parsed are returned even when others did not, so references get checked too
    return Matrix(name=name, origin=document.source, cells=tuple(cells)), reader


def _cell(reader: Reader, value: Any, path: tuple[str | int, ...]) -> Cell | None:
    cell = reader.mapping(
        value, path, required=("name", "host", "recipe", "expect", "evidence"), optional=("reason",)
    )
    if cell is None:
        return None
    here = (*path, "host")
    host = reader.mapping(cell.get("host"), here, required=("distro", "kernel", "npu"))
    distro = kernel = npu = None
    if host is not None:
        distro = parse_distro(reader, host.get("distro"), (*here, "distro"))
        kernel = parse_kernel(reader, host, here)
        npu = parse_npu(reader, host.get("npu"), (*here, "npu"))
    name = reader.string(cell, "name", path)
    recipe = reader.string(cell, "recipe", path)
    expect = reader.choice(cell, "expect", path, EXPECTATIONS)
    reason = reader.string(cell, "reason", path)
    evidence = reader.string(cell, "evidence", path)
    if expect in ("known-broken", "unverified") and reason is None and "reason" not in cell:
        reader.problem(path, f"a cell expected '{expect}' must say why in 'reason'")
    if (
        name is None
        or recipe is None
        or expect is None
        or evidence is None
        or distro is None
        or kernel is None
        or npu is None
    ):
        return None
    return Cell(
        name=name,
        recipe=recipe,
        distro_id=distro[0],
        distro_version=distro[1],
        kernel=kernel,
        npu=npu,
        expect=expect,
        reason=reason,
        evidence=evidence,
        origin=f"{reader.source}:{reader.document.where(path)[0]}",
        key_path=f"cells[{path[-1]}]",
        positions=tuple(
            (key, *reader.document.where(where))
            for key, where in (
                ("recipe", (*path, "recipe")),
                ("host", (*path, "host", "distro")),
                ("npu", (*path, "host", "npu")),
            )
        ),
    )
