"""Matrix models: host profiles -> recipe, with what is expected of each cell; pure.

An expectation is precise: a known-broken cell says at which stage (for `validate`, which
gate) it breaks and with which diagnosis codes; a partly supported cell says which gates
pass and which fail with which codes. Whether stages, gates and codes exist is checked
against the recipe and the knowledge base in config/project.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xdnaforge.config.kernel import KernelRange
from xdnaforge.config.recipe import GATES, Npu
from xdnaforge.config.recipe_build import NAME_RE
from xdnaforge.config.recipe_parse import parse_distro, parse_kernel, parse_npu
from xdnaforge.host import AMD_VENDOR, NPU_GENERATIONS, HostFacts, npu_generation
from xdnaforge.schema import Reader, did_you_mean
from xdnaforge.yamlfile import Document

EXPECTATIONS = ("supported", "partial", "known-broken", "unverified")
USABLE = ("supported", "partial")  # a host in such a cell has a userspace line to run


@dataclass(frozen=True, slots=True, kw_only=True)
class Breakage:
    """Where and how a known-broken cell fails: a stage, the gate (for validate), codes."""

    stage: str
    gate: str | None
    codes: tuple[str, ...]  # every one of them is expected among the failure's diagnoses

    def describe(self) -> str:
        where = f"gate {self.gate}" if self.gate else self.stage
        return f"{where} fails with {', '.join(self.codes)}" if self.codes else f"{where} fails"


@dataclass(frozen=True, slots=True, kw_only=True)
class GateFailure:
    gate: str
    codes: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class PartialSupport:
    """The gates a partly supported cell passes and those it fails (with their codes);
    gates named in neither list are not judged."""

    passing: tuple[str, ...]
    failing: tuple[GateFailure, ...]

    def describe(self) -> str:
        text = f"{', '.join(self.passing)} pass"
        for failure in self.failing:
            text += f"; {failure.gate} fails with {', '.join(failure.codes)}"
        return text


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
    breaks: Breakage | None  # known-broken: where and how
    partial: PartialSupport | None  # partial: which gates pass and which fail
    origin: str
    key_path: str  # cells[2], for messages about this cell from other modules
    # (key, line, column) of recipe, host, npu and of each stage, gate and code named in
    # the expectation (keys like "fails.codes[0]"), for the checks against recipe and knowledge
    positions: tuple[tuple[str, int, int], ...]

    def expectation(self) -> str:
        """The expectation in words, for tables and reports."""
        if self.breaks is not None:
            return f"known-broken: {self.breaks.describe()}"
        if self.partial is not None:
            return f"partial: {self.partial.describe()}"
        return self.expect

    def named_codes(self) -> tuple[tuple[str, str], ...]:
        """(position key, code) of every diagnosis code the expectation names."""
        named = []
        if self.breaks is not None:
            named += [(f"fails.codes[{i}]", c) for i, c in enumerate(self.breaks.codes)]
        if self.partial is not None:
            for index, failure in enumerate(self.partial.failing):
                named += [
                    (f"gates.fail[{index}].codes[{i}]", c) for i, c in enumerate(failure.codes)
                ]
        return tuple(named)

    def named_gates(self) -> tuple[tuple[str, str], ...]:
        """(position key, gate) of every gate the expectation names."""
        named = []
        if self.breaks is not None and self.breaks.gate is not None:
            named.append(("fails.gate", self.breaks.gate))
        if self.partial is not None:
            named += [(f"gates.pass[{i}]", g) for i, g in enumerate(self.partial.passing)]
            named += [(f"gates.fail[{i}].gate", f.gate) for i, f in enumerate(self.partial.failing)]
        return tuple(named)


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
        reader.problem(("schema",), "unsupported schema; this xdnaforge reads schema 1")
    reader.string(top, "description", ())
    cells = []
    names: set[str] = set()
    for index, item in enumerate(reader.sequence(top, "cells", ())):
        cell = _cell(reader, item, ("cells", index))
        if cell is None:
            continue
        if cell.name in names:
            reader.problem(("cells", index, "name"), "another cell has this name")
        names.add(cell.name)
        cells.append(cell)
    # cells that parsed are returned even when others did not, so references get checked too
    return Matrix(name=name, origin=document.source, cells=tuple(cells)), reader


def _cell(reader: Reader, value: Any, path: tuple[str | int, ...]) -> Cell | None:
    cell = reader.mapping(
        value,
        path,
        required=("name", "host", "recipe", "expect", "evidence"),
        optional=("reason", "fails", "gates"),
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
        if npu is not None:
            _known_npu(reader, npu, (*here, "npu"))
    name = reader.string(cell, "name", path)
    if name is not None and not NAME_RE.match(name):
        reader.problem(
            (*path, "name"),
            "is not a name",
            hint="lowercase letters, digits, '.', '_', '-'; it names files (LAVA jobs, reports)",
        )
        name = None
    recipe = reader.string(cell, "recipe", path)
    expect = reader.choice(cell, "expect", path, EXPECTATIONS)
    reason = reader.string(cell, "reason", path)
    evidence = reader.string(cell, "evidence", path)
    if (
        expect in ("partial", "known-broken", "unverified")
        and reason is None
        and "reason" not in cell
    ):
        reader.problem(path, f"a cell expected '{expect}' must say why in 'reason'")
    breaks = _breakage(reader, cell, path, expect)
    partial = _partial(reader, cell, path, expect)
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
        breaks=breaks,
        partial=partial,
        origin=f"{reader.source}:{reader.document.where(path)[0]}",
        key_path=f"cells[{path[-1]}]",
        positions=tuple(
            (key, *reader.document.where(where))
            for key, where in (
                ("recipe", (*path, "recipe")),
                ("host", (*path, "host", "distro")),
                ("npu", (*path, "host", "npu")),
                *_expectation_positions(breaks, partial, path),
            )
        ),
    )


def _known_npu(reader: Reader, npu: Npu, path: tuple[str | int, ...]) -> None:
    """A cell's AMD NPU is a device and revision the driver binds (host.NPU_GENERATIONS)."""
    vendor, _, device = npu.pci.partition(":")
    if vendor != AMD_VENDOR or npu.revision is None:
        return
    if npu_generation(device, npu.revision) is not None:
        return
    revisions = [n.revision for n in NPU_GENERATIONS if n.device == device]
    known = (
        f"the driver binds this device at revision(s) {', '.join(revisions)}"
        if revisions
        else "known devices: " + ", ".join(sorted({n.pci for n in NPU_GENERATIONS}))
    )
    reader.problem(
        (*path, "revision"), "no amdxdna driver binds this device at this revision", hint=known
    )


def _expectation_positions(
    breaks: Breakage | None, partial: PartialSupport | None, path: tuple[str | int, ...]
) -> list[tuple[str, tuple[str | int, ...]]]:
    keys: list[tuple[str, tuple[str | int, ...]]] = []
    if breaks is not None:
        keys.append(("fails.stage", (*path, "fails", "stage")))
        if breaks.gate is not None:
            keys.append(("fails.gate", (*path, "fails", "gate")))
        keys += [
            (f"fails.codes[{i}]", (*path, "fails", "codes", i)) for i in range(len(breaks.codes))
        ]
    if partial is not None:
        here = (*path, "gates")
        keys += [(f"gates.pass[{i}]", (*here, "pass", i)) for i in range(len(partial.passing))]
        for index, failure in enumerate(partial.failing):
            item = (*here, "fail", index)
            keys.append((f"gates.fail[{index}].gate", (*item, "gate")))
            keys += [
                (f"gates.fail[{index}].codes[{i}]", (*item, "codes", i))
                for i in range(len(failure.codes))
            ]
    return keys


def _gate_name(reader: Reader, value: str, path: tuple[str | int, ...]) -> bool:
    if value in GATES:
        return True
    reader.problem(path, f"unknown gate{did_you_mean(value, GATES)}", f"gates: {', '.join(GATES)}")
    return False


def _breakage(
    reader: Reader, cell: dict[str, Any], path: tuple[str | int, ...], expect: str | None
) -> Breakage | None:
    here = (*path, "fails")
    if expect != "known-broken":
        if "fails" in cell:
            reader.problem(here, "only a known-broken cell says where it fails")
        return None
    if "fails" not in cell:
        reader.problem(
            path,
            "a known-broken cell must say where and how it fails in 'fails'",
            "fails: {stage: validate, gate: validate, codes: [a code of the knowledge base]}",
        )
        return None
    fails = reader.mapping(cell["fails"], here, required=("stage",), optional=("gate", "codes"))
    if fails is None:
        return None
    stage = reader.string(fails, "stage", here)
    gate = reader.string(fails, "gate", here)
    codes = reader.strings(fails, "codes", here)
    if stage == "validate":
        if gate is None and "gate" not in fails:
            reader.problem(here, "a failure at validate names the gate that fails in 'gate'")
        if fails.get("codes") in (None, []):  # a wrong type is reported by strings()
            reader.problem(
                here, "a failure at validate names the diagnosis codes expected in 'codes'"
            )
    elif stage is not None and gate is not None:
        reader.problem((*here, "gate"), "only a failure at validate has a gate")
        gate = None
    if gate is not None and not _gate_name(reader, gate, (*here, "gate")):
        return None
    if stage is None:
        return None
    return Breakage(stage=stage, gate=gate, codes=codes)


def _partial(
    reader: Reader, cell: dict[str, Any], path: tuple[str | int, ...], expect: str | None
) -> PartialSupport | None:
    here = (*path, "gates")
    if expect != "partial":
        if "gates" in cell:
            reader.problem(here, "only a partial cell lists the gates that pass and fail")
        return None
    if "gates" not in cell:
        reader.problem(
            path,
            "a partial cell must list the gates that pass and those that fail in 'gates'",
            "gates: {pass: [examine], fail: [{gate: validate, codes: [a code]}]}",
        )
        return None
    gates = reader.mapping(cell["gates"], here, required=("pass",), optional=("fail",))
    if gates is None:
        return None
    passing = reader.strings(gates, "pass", here)
    if not passing and "pass" in gates:
        reader.problem((*here, "pass"), "name at least one gate that passes")
    failing = []
    for index, item in enumerate(reader.sequence(gates, "fail", here)):
        where = (*here, "fail", index)
        entry = reader.mapping(item, where, required=("gate", "codes"))
        if entry is None:
            continue
        gate = reader.string(entry, "gate", where)
        codes = reader.strings(entry, "codes", where)
        if not codes and "codes" in entry:
            reader.problem((*where, "codes"), "name the diagnosis codes the failure shows")
        if gate is not None and _gate_name(reader, gate, (*where, "gate")):
            failing.append(GateFailure(gate=gate, codes=codes))
    known = [_gate_name(reader, g, (*here, "pass", i)) for i, g in enumerate(passing)]
    ok = all(known)
    both = set(passing) & {f.gate for f in failing}
    if both:
        reader.problem(here, f"gate(s) {', '.join(sorted(both))} listed both to pass and to fail")
    if not ok or both:
        return None
    return PartialSupport(passing=passing, failing=tuple(failing))


def matching_cells(cells: Sequence[Cell], host: HostFacts, any_kernel: bool = False) -> list[Cell]:
    """Matrix cells whose distro, kernel range and NPU match this host (`any_kernel`: whatever
    the range, for compat.placement to judge by the driver)."""
    found = []
    for cell in cells:
        if (cell.distro_id, cell.distro_version) != (host.distro_id, host.distro_version):
            continue
        if not any_kernel and (host.kernel is None or not cell.kernel.contains(host.kernel)):
            continue
        if any(
            n.pci == cell.npu.pci and cell.npu.revision in (None, n.revision) for n in host.npus
        ):
            found.append(cell)
    return found
