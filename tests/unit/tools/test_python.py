"""The interpreter's answer about itself, parsed: real answers of a venv (pyenv's 3.11 base,
pybind11 from PyPI) and of Debian bookworm's /usr/bin/python3, recorded on 2026-12-01."""

from __future__ import annotations

from pathlib import Path

import pytest

from xdnaforge.tools.python import parse_answer, query_argv

VENV = (
    'xdnaforge-python {"executable": "/tmp/r24/venv/bin/python", "version": "3.11.7", '
    '"implementation": "cpython", "soabi": "cpython-311-x86_64-linux-gnu", "ext_suffix": '
    '".cpython-311-x86_64-linux-gnu.so", "prefix": "/tmp/r24/venv", "base_prefix": '
    '"/root/.pyenv/versions/3.11.7", "platlib": "/tmp/r24/venv/lib/python3.11/site-packages", '
    '"include": "/root/.pyenv/versions/3.11.7/include/python3.11", "pybind11_include": '
    '"/tmp/r24/venv/lib/python3.11/site-packages/pybind11/include", "pybind11_version": "3.1.0"}\n'
)
DEBIAN = (
    'xdnaforge-python {"executable": "/usr/bin/python3", "version": "3.11.2", "implementation": '
    '"cpython", "soabi": "cpython-311-x86_64-linux-gnu", "ext_suffix": '
    '".cpython-311-x86_64-linux-gnu.so", "prefix": "/usr", "base_prefix": "/usr", "platlib": '
    '"/usr/local/lib/python3.11/dist-packages", "include": "/usr/include/python3.11", '
    '"pybind11_include": null, "pybind11_version": null}\n'
)


def test_a_venv_is_its_own_environment_with_its_pybind11() -> None:
    found = parse_answer("/tmp/r24/venv/bin/python", VENV)
    assert found.venv
    assert found.tag == "cpython-311"
    assert found.ext_suffix == ".cpython-311-x86_64-linux-gnu.so"
    assert found.platlib == Path("/tmp/r24/venv/lib/python3.11/site-packages")
    assert found.pybind11_include == Path(
        "/tmp/r24/venv/lib/python3.11/site-packages/pybind11/include"
    )
    assert found.describe() == (
        "/tmp/r24/venv/bin/python (Python 3.11.7, cpython-311, virtual environment /tmp/r24/venv)"
    )


def test_debians_system_interpreter_installs_under_usr_local_not_dpkgs_dist_packages() -> None:
    found = parse_answer("/usr/bin/python3", DEBIAN)
    assert not found.venv
    assert found.platlib == Path("/usr/local/lib/python3.11/dist-packages")
    assert found.pybind11_include is None
    assert found.describe().endswith("system interpreter)")


def test_output_without_an_answer_is_not_an_interpreter() -> None:
    with pytest.raises(ValueError, match="no answer"):
        parse_answer("/bin/echo", "-I -c ...\n")


def test_the_question_runs_isolated() -> None:
    assert query_argv("/usr/bin/python3")[:3] == ["/usr/bin/python3", "-I", "-c"]
