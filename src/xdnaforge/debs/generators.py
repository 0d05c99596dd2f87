"""Maintainer scripts known by construction: a script is known only when it is, character for
character, what debhelper (dh_installdeb's frame and the dh_* helpers' autoscript snippets),
dh_python3 or dh_makeshlibs' triggers write for this package, with its name (`name:arch` where
dh_python3 writes that) as the only variable. No shell is parsed, so nothing fails open.

The templates come from the generated catalogue data/maintscripts.json (written by
scripts/gen_maintscripts.py from the generators' own .debs; docs/generators.md). Pure: text
in, a ScriptMatch out; the only file read is that catalogue, once. Matching is one pass over
the script (each block is compared with the few candidates its first line selects), so a
hostile 1 MiB script costs what reading it costs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).resolve().parent / "data" / "maintscripts.json"
SCRIPTS = ("preinst", "postinst", "prerm", "postrm", "config", "triggers")
# Debian policy 5.6.1 (package) and dpkg-architecture's names; anything else names no package
_PACKAGE_RE = re.compile(r"[a-z0-9][a-z0-9+.-]+")
_ARCH_RE = re.compile(r"[a-z0-9][a-z0-9-]*")
_VARIABLE_RE = re.compile(r"#([A-Z][A-Z0-9_]*)#")


@dataclass(frozen=True, slots=True)
class ScriptMatch:
    known: bool  # exactly a known generator's output (or a script that runs nothing)
    generators: tuple[str, ...]  # e.g. ("dh_python3 (dh-python 7.20260309..7.20261019)",)
    unknown_line: tuple[int, str] | None  # 1-based number and text of the first unknown line


@dataclass(frozen=True, slots=True)
class _Block:
    text: str  # the block as the generator writes it for this package
    label: str  # which generator, which versions
    newlines: int


@cache
def catalogue() -> dict[str, Any]:
    """The generated catalogue (read once)."""
    data: dict[str, Any] = json.loads(DATA_FILE.read_text("utf-8"))
    return data


def _span(versions: list[str]) -> str:
    """The catalogue lists versions in dpkg order: the first and the last name the span."""
    return versions[0] if len(versions) == 1 else f"{versions[0]}..{versions[-1]}"


def _render(text: str, values: dict[str, str]) -> str | None:
    """The template with its variables filled in; None when one has no value here."""
    missing = [name for name in _VARIABLE_RE.findall(text) if name not in values]
    if missing:
        return None
    return _VARIABLE_RE.sub(lambda m: values[m.group(1)], text)


@lru_cache(maxsize=64)
def _blocks(
    script: str, package: str, version: str, architecture: str
) -> dict[str, tuple[_Block, ...]]:
    """The blocks this package's script may be made of, by their first line."""
    data = catalogue()
    frame = data["frame"]
    markers = {(g["source"], g["version"]): g["marker_version"] for g in data["generators"]}
    found: dict[str, list[_Block]] = {}

    def add(text: str, label: str) -> None:
        first = text[: text.index("\n") + 1]
        found.setdefault(first, []).append(_Block(text, label, text.count("\n")))

    if script == "triggers":
        for trigger in data["triggers"]:
            for ver in trigger["versions"]:
                begin = frame["triggers"]["begin"].format(
                    helper=trigger["helper"], marker_version=markers[("debhelper", ver)]
                )
                line = frame["triggers"]["line"].format(
                    type=trigger["type"], target=trigger["target"]
                )
                add(begin + line, f"{trigger['helper']} (debhelper {ver})")
        return {first: tuple(blocks) for first, blocks in found.items()}

    qualified = package if architecture == "all" else f"{package}:{architecture}"
    for template in data["templates"]:
        if template["script"] != script:
            continue
        source, helper = template["generator"], template["helper"]
        values = dict(template.get("defaults", {}))
        values["VERSION"] = version
        if source == "debhelper":
            values["PACKAGE"] = package
            body = _render(template["text"], values)
            if body is None:
                continue
            for ver in template["versions"]:
                begin = frame["debhelper"]["begin"].format(
                    helper=helper, marker_version=markers[(source, ver)]
                )
                add(begin + body + frame["debhelper"]["end"], f"{helper} (debhelper {ver})")
        elif source == "dh-python":
            values["PACKAGE"] = qualified
            body = _render(template["text"], values)
            if body is None:
                continue
            begin = frame["dh-python"]["begin"].format(helper=helper)
            add(
                begin + body + frame["dh-python"]["end"],
                f"{helper} (dh-python {_span(template['versions'])})",
            )
    return {first: tuple(blocks) for first, blocks in found.items()}


def _line_at(text: str, start: int, number: int) -> tuple[int, str]:
    end = text.find("\n", start)
    return number, text[start : len(text) if end < 0 else end]


def _first_difference(
    text: str, start: int, line: int, blocks: tuple[_Block, ...]
) -> tuple[int, str]:
    """The first line of text from `start` (line number `line`) that no candidate block
    continues: the line where the candidate that goes furthest stops agreeing."""
    best = 0
    for block in blocks:
        limit = min(len(block.text), len(text) - start)
        same = 0
        while same < limit and text[start + same] == block.text[same]:
            same += 1
        best = max(best, same)
    agreed = text[start : start + best]
    line_start = start + agreed.rfind("\n") + 1
    return _line_at(text, line_start, line + agreed.count("\n"))


def _runs_nothing(text: str, start: str) -> bool:
    return text == "" or (text.startswith(start) and text[len(start) :].strip("\n") == "")


def match(script: str, text: str, package: str, version: str, architecture: str) -> ScriptMatch:
    """Is `text`, the `script` (preinst, postinst, prerm, postrm, config or triggers) of
    `package` `version` for `architecture`, exactly what a known generator writes?

    A maintainer script is the frame (`#!/bin/sh`, `set -e`) then one or more snippets, each
    between its generator's markers, in any order; a triggers file is one or more of
    dh_makeshlibs' marker-and-trigger pairs. A script that runs nothing (empty, or the frame
    followed only by empty lines) is known, with no generator named. Anything else is
    unknown, with its first line that differs from every candidate (a script cut short
    points past its last line, with empty text)."""
    if script not in SCRIPTS:
        raise ValueError(f"not a maintainer script: {script!r}")
    start = "" if script == "triggers" else catalogue()["frame"]["script_start"]
    if _runs_nothing(text, start):
        return ScriptMatch(True, (), None)
    if not (_PACKAGE_RE.fullmatch(package) and _ARCH_RE.fullmatch(architecture)):
        blocks: dict[str, tuple[_Block, ...]] = {}
    else:
        blocks = _blocks(script, package, version, architecture)
    if not text.startswith(start):
        return ScriptMatch(False, (), _first_difference(text, 0, 1, (_Block(start, "", 0),)))
    position, line = len(start), 1 + start.count("\n")
    labels: list[str] = []
    while position < len(text):
        end = text.find("\n", position)
        first = text[position : len(text) if end < 0 else end + 1]
        candidates = blocks.get(first, ())
        found = next((b for b in candidates if text.startswith(b.text, position)), None)
        if found is None:
            if not candidates:
                return ScriptMatch(False, tuple(labels), _line_at(text, position, line))
            where = _first_difference(text, position, line, candidates)
            return ScriptMatch(False, tuple(labels), where)
        if found.label not in labels:
            labels.append(found.label)
        position += len(found.text)
        line += found.newlines
    return ScriptMatch(True, tuple(labels), None)


def known_generators() -> tuple[str, ...]:
    """Each generator and the versions the catalogue holds, for messages and docs."""
    data = catalogue()
    spans = []
    for source in ("debhelper", "dh-python"):
        versions = [g["version"] for g in data["generators"] if g["source"] == source]
        spans.append(f"{source} {', '.join(versions)}")
    return tuple(spans)
