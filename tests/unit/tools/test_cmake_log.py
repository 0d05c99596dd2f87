"""The interpreters CMake found, from the lines of a real XRT 2.19 configure (Debian 12, a
pyenv shim first on PATH)."""

from __future__ import annotations

import json

from tests.conftest import DATA
from xdnaforge.report.build_report import build_model, render_markdown
from xdnaforge.tools.cmake_log import found_pythons

SHIM = '-- Found Python3: /root/.pyenv/shims/python3 (found version "3.11.7") found components: '
SYSTEM = '-- Found Python3: /usr/bin/python3 (found version "3.11.2") found components: '
DEVELOPMENT = "Development Interpreter Development.Module Development.Embed "
LOG = (
    f"{SHIM}Interpreter \n{SYSTEM}{DEVELOPMENT}\n"
    '-- Found pybind11: /usr/include (found version "2.10.3")\n'
    f"{SYSTEM}{DEVELOPMENT}\n"
)


def test_each_interpreter_cmake_found_is_read_once() -> None:
    assert found_pythons(LOG) == [
        {"path": "/root/.pyenv/shims/python3", "version": "3.11.7", "components": "Interpreter"},
        {
            "path": "/usr/bin/python3",
            "version": "3.11.2",
            "components": "Development Interpreter Development.Module Development.Embed",
        },
    ]


def test_the_report_names_the_interpreter_the_build_used() -> None:
    records = json.loads((DATA / "report/records.json").read_text())
    step = records["build"]["steps"]["xrt"]
    step["python"] = found_pythons(LOG)
    text = render_markdown(build_model("t", records, None, "t0", "0.1.0"))
    assert (
        "- python found by CMake in step xrt: /root/.pyenv/shims/python3 3.11.7 (Interpreter)\n"
        "- python found by CMake in step xrt: /usr/bin/python3 3.11.2 (Development Interpreter "
    ) in text
