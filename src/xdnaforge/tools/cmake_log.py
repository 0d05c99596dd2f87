"""What CMake's configure said in a build log: the Python interpreters it found; pure.

A build may find one interpreter for its scripts and another for its extension modules
(pyxrt): `-- Found Python3: /root/.pyenv/shims/python3 (found version "3.11.7") found
components: Interpreter` and then `/usr/bin/python3 (found version "3.11.2") ... Development`.
The toolchain probe sees only the first on PATH; the log says which one the build used.
"""

from __future__ import annotations

import re

_FOUND = re.compile(
    r"^-- Found (Python3?|PythonInterp|PythonLibs): (\S+) \(found (?:suitable )?version "
    r"\"([^\"]+)\"\)(?:.*?found components: (.*))?$"
)


def found_pythons(log: str) -> list[dict[str, str]]:
    """Each distinct `-- Found Python3: PATH (found version "V") found components: ...`."""
    found: list[dict[str, str]] = []
    for line in log.splitlines():
        match = _FOUND.match(line.strip())
        if match is None:
            continue
        entry = {
            "path": match.group(2),
            "version": match.group(3),
            "components": " ".join((match.group(4) or "").split()),
        }
        if entry not in found:
            found.append(entry)
    return found
