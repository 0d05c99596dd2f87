"""The audit section of a recipe from YAML data: rule waivers, the payload paths a recipe
admits beyond the stack's layout (`audit.admit`) and maintainer scripts accepted by their
exact digest (`audit.scripts`); every problem collected with its key path.

Pure, as config/recipe_parse.py, which calls it and checks that each package named is one
the recipe produces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from xdnaforge.config.recipe import SCRIPTS, Admitted, Justified, ScriptWaiver
from xdnaforge.config.recipe_build import parse_justified
from xdnaforge.schema import Reader, did_you_mean
from xdnaforge.yamlfile import KeyPath

# one component of an admitted path: these characters, with `*` matching within it
_COMPONENT_RE = re.compile(r"[A-Za-z0-9._+@*-]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class Audit:
    """What `audit:` says, each part in the order written."""

    waivers: tuple[Justified, ...] = ()
    admit: tuple[Admitted, ...] = ()
    scripts: tuple[ScriptWaiver, ...] = ()


def path_pattern_problem(pattern: str) -> str | None:
    """Why `pattern` is not a package path pattern, or None: components of
    [A-Za-z0-9._+@-] and `*` (within one component), a final `**` for anything below,
    no leading `/`, no empty, `.` or `..` component, and at least one literal component."""
    if pattern.startswith("/"):
        return "is an absolute path: write the package's path without the leading '/'"
    components = pattern.split("/")
    for number, component in enumerate(components, start=1):
        last = number == len(components)
        if not component:
            return f"component {number} is empty (a '//' or a trailing '/')"
        if component in (".", ".."):
            return f"component {number} is '{component}': a package path names its directories"
        if component == "**" and not last:
            return "'**' (anything below) may only be the last component"
        if "**" in component and component != "**":
            return f"component {number} has '**' inside it: '**' is a whole last component"
        if not _COMPONENT_RE.fullmatch(component):
            return (
                f"component {number} has a character other than letters, digits, "
                "'.', '_', '+', '@', '-' and '*'"
            )
    if all(set(component) <= {"*"} for component in components):
        return "admits every path: name the directories it is below"
    return None


def _admitted(reader: Reader, value: Any, path: KeyPath) -> Admitted | None:
    item = reader.mapping(value, path, required=("path", "reason"), optional=("package",))
    if item is None:
        return None
    pattern = reader.string(item, "path", path)
    reason = reader.string(item, "reason", path)
    package = reader.string(item, "package", path)  # recipe_parse: one the recipe produces
    if pattern is not None and (problem := path_pattern_problem(pattern)) is not None:
        reader.problem((*path, "path"), problem, hint="e.g. usr/share/xrt/** or usr/lib/*.so")
        pattern = None
    if pattern is None or reason is None or ("package" in item and package is None):
        return None
    return Admitted(path=pattern, reason=reason, package=package)


def _script(reader: Reader, value: Any, path: KeyPath) -> ScriptWaiver | None:
    item = reader.mapping(value, path, required=("package", "script", "sha256", "justification"))
    if item is None:
        return None
    package = reader.string(item, "package", path)
    script = reader.choice(item, "script", path, SCRIPTS)
    digest = reader.sha256(item, "sha256", path)
    justification = reader.string(item, "justification", path)
    if package is None or script is None or digest is None or justification is None:
        return None
    return ScriptWaiver(package=package, script=script, sha256=digest, justification=justification)


def _produced(reader: Reader, package: str | None, path: KeyPath, produced: set[str]) -> None:
    if package is not None and package not in produced:
        reader.problem(
            (*path, "package"),
            "names a package the recipe does not produce" + did_you_mean(package, produced),
            hint=f"the recipe produces: {', '.join(sorted(produced)) or 'nothing'}",
        )


def parse_audit(reader: Reader, value: Any, path: KeyPath, produced: set[str]) -> Audit:
    """`audit: {waivers, admit, scripts}`; each entry with a problem is left out, and each
    package named must be among `produced`, the packages the recipe makes or takes."""
    audit = reader.mapping(value, path, optional=("waivers", "admit", "scripts"))
    if audit is None:
        return Audit()
    waivers = []
    for index, item in enumerate(reader.sequence(audit, "waivers", path)):
        here = (*path, "waivers", index)
        waiver = parse_justified(reader, item, here, "rule")
        if waiver is not None:
            if waiver.package is None:
                reader.problem(here, "a waiver must name the package it applies to")
            _produced(reader, waiver.package, here, produced)
            waivers.append(waiver)
    admit: list[Admitted] = []
    for index, item in enumerate(reader.sequence(audit, "admit", path)):
        admitted = _admitted(reader, item, (*path, "admit", index))
        if admitted is not None:
            _produced(reader, admitted.package, (*path, "admit", index), produced)
        if admitted is not None and any(
            (a.path, a.package) == (admitted.path, admitted.package) for a in admit
        ):
            reader.problem((*path, "admit", index), "the same path is admitted twice")
        elif admitted is not None:
            admit.append(admitted)
    scripts: list[ScriptWaiver] = []
    for index, item in enumerate(reader.sequence(audit, "scripts", path)):
        script = _script(reader, item, (*path, "scripts", index))
        if script is not None:
            _produced(reader, script.package, (*path, "scripts", index), produced)
        if script is not None and any(
            (s.package, s.script, s.sha256) == (script.package, script.script, script.sha256)
            for s in scripts
        ):
            reader.problem((*path, "scripts", index), "the same script is waived twice")
        elif script is not None:
            scripts.append(script)
    return Audit(waivers=tuple(waivers), admit=tuple(admit), scripts=tuple(scripts))
