"""A Python interpreter asked about itself: the argv of the question and a pure parser of its
answer (version, ABI tag, extension suffix, headers, where its packages go, venv or system,
its pybind11). It never decides what to build; install/pyxrt.py does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

# Run with -I (isolated: no PYTHON* variables, no user site, no script directory), so the
# answer is the interpreter's own and not the caller's environment's.
QUERY = """
import json, sys, sysconfig
paths = sysconfig.get_paths()
answer = {
    "executable": sys.executable,
    "version": "%d.%d.%d" % sys.version_info[:3],
    "implementation": sys.implementation.name,
    "soabi": sysconfig.get_config_var("SOABI") or "",
    "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX") or "",
    "prefix": sys.prefix,
    "base_prefix": sys.base_prefix,
    "platlib": paths["platlib"],
    "include": paths["include"],
    "pybind11_include": None,
    "pybind11_version": None,
}
try:
    import pybind11
    answer["pybind11_include"] = pybind11.get_include()
    answer["pybind11_version"] = getattr(pybind11, "__version__", None)
except Exception:
    pass
print("xdnaforge-python " + json.dumps(answer))
"""
MARK = "xdnaforge-python "


def query_argv(python: str) -> list[str]:
    return [python, "-I", "-c", QUERY]


@dataclass(frozen=True, slots=True, kw_only=True)
class Interpreter:
    path: str  # as the user named it (a venv's bin/python is a link: never resolved)
    executable: str
    version: str
    implementation: str
    soabi: str  # cpython-312-x86_64-linux-gnu
    ext_suffix: str  # .cpython-312-x86_64-linux-gnu.so
    prefix: Path
    base_prefix: Path
    platlib: Path  # where compiled modules of this environment go
    include: Path  # Python.h
    pybind11_include: Path | None
    pybind11_version: str | None

    @property
    def venv(self) -> bool:
        """A virtual environment (PEP 405): its own prefix over the base interpreter's."""
        return self.prefix != self.base_prefix

    @property
    def tag(self) -> str:
        """The ABI tag a binding carries: cpython-312 (from SOABI, else the version)."""
        parts = self.soabi.split("-")
        if len(parts) >= 2 and parts[1].isdigit():
            return f"{parts[0]}-{parts[1]}"
        major, minor = self.version.split(".")[:2]
        return f"{self.implementation}-{major}{minor}"

    def describe(self) -> str:
        kind = f"virtual environment {self.prefix}" if self.venv else "system interpreter"
        return f"{self.path} (Python {self.version}, {self.tag}, {kind})"


def parse_answer(path: str, output: str) -> Interpreter:
    """The interpreter's answer to QUERY; ValueError when the output holds none."""
    line = next((x for x in output.splitlines() if x.startswith(MARK)), None)
    if line is None:
        raise ValueError("it printed no answer to the sysconfig question")
    data = json.loads(line[len(MARK) :])
    if not isinstance(data, dict):
        raise ValueError("its answer is not a JSON object")
    include = data.get("pybind11_include")
    version = data.get("pybind11_version")
    return Interpreter(
        path=path,
        executable=str(data["executable"]),
        version=str(data["version"]),
        implementation=str(data["implementation"]),
        soabi=str(data["soabi"]),
        ext_suffix=str(data["ext_suffix"]),
        prefix=Path(data["prefix"]),
        base_prefix=Path(data["base_prefix"]),
        platlib=Path(data["platlib"]),
        include=Path(data["include"]),
        pybind11_include=Path(include) if include else None,
        pybind11_version=str(version) if version else None,
    )
