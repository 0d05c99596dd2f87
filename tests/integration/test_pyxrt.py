"""`doit pyxrt --python PATH`: a real binding compiled with g++ for a real venv against a fake
installed stack (XRT's headers, a tiny real libxrt_coreutil.so.2) in either layout, installed
into the venv, recorded, and then found by the pyxrt gate; a system interpreter without --yes
and bad input are refused before anything is built."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import missing_tool, require_tool
from tests.fakes.fixture import FakeTools
from tests.integration.conftest import Outcome, run_doit
from tests.integration.npu import PYXRT, installed_xrt, npu_host, replay

LIB = "usr/lib/x86_64-linux-gnu"
# the stand-in for XRT's pyxrt.cpp: a CPython module (pybind11's header here only brings
# Python.h) that calls into the stack's libxrt_coreutil and then defines the calls the gate
# makes from tests/fixtures/pyxrt_fake/pyxrt.py
PYXRT_CPP = """\
#include <pybind11/pybind11.h>
#include "xrt/xrt_device.h"

static const char* SOURCE = R"PY({source})PY";
static struct PyModuleDef definition = {{PyModuleDef_HEAD_INIT, "pyxrt", nullptr, -1, nullptr}};

PyMODINIT_FUNC PyInit_pyxrt(void) {{
  PyObject* module = PyModule_Create(&definition);
  if (module == nullptr) return nullptr;
  PyObject* names = PyModule_GetDict(module);
  PyDict_SetItemString(names, "__builtins__", PyEval_GetBuiltins());
  PyObject* done = PyRun_String(SOURCE, Py_file_input, names, names);
  if (done == nullptr) {{ Py_DECREF(module); return nullptr; }}
  Py_DECREF(done);
  PyModule_AddStringConstant(module, "coreutil", xrt::coreutil_version());
  return module;
}}
"""
HEADER = "#pragma once\nnamespace xrt { const char* coreutil_version(); }\n"
CORE = (
    '#include "xrt/xrt_device.h"\n'
    'namespace xrt { __attribute__((visibility("default"))) '
    'const char* coreutil_version() { return "coreutil 2.25.0 (test)"; } }\n'
)


@pytest.fixture
def host(project_dir: Path) -> Path:
    root = project_dir / "sysroot"  # run_doit's XDNAFORGE_SYSROOT
    root.mkdir(exist_ok=True)
    return root


def python_headers() -> None:
    include = Path(sysconfig.get_paths()["include"])
    if not (include / "Python.h").is_file():
        missing_tool("Python.h", f"which {sys.executable} does not have in {include}")


def make_venv(where: Path) -> Path:
    """A real venv whose pybind11 is a stand-in package: get_include() names its headers."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin/python"
    platlib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    package = Path(platlib) / "pybind11"
    (package / "include/pybind11").mkdir(parents=True)
    (package / "include/pybind11/pybind11.h").write_text("#pragma once\n#include <Python.h>\n")
    (package / "__init__.py").write_text(
        "import os\n__version__ = '3.1.0'\n"
        "def get_include():\n    return os.path.join(os.path.dirname(__file__), 'include')\n"
    )
    return python


def make_stack(root: Path, lib: str, include: str) -> Path:
    """XRT's header and a real libxrt_coreutil.so.2 (compiled here) under `root`."""
    compiler = require_tool("g++")
    headers = root / include / "xrt"
    headers.mkdir(parents=True, exist_ok=True)
    (headers / "xrt_device.h").write_text(HEADER)
    library = root / lib / "libxrt_coreutil.so.2"
    library.parent.mkdir(parents=True, exist_ok=True)
    source = root.parent / "core.cpp"
    source.write_text(CORE)
    subprocess.run(
        [
            compiler,
            "-shared",
            "-fPIC",
            f"-I{root / include}",
            "-Wl,-soname,libxrt_coreutil.so.2",
            "-o",
            str(library),
            str(source),
        ],
        check=True,
    )
    return library


def make_source(tree: Path) -> Path:
    """An XRT tree holding the stand-in pyxrt.cpp and a stub."""
    folder = tree / "src/python/pybind11"
    (folder / "src").mkdir(parents=True)
    (folder / "src/pyxrt.cpp").write_text(PYXRT_CPP.format(source=PYXRT.read_text()))
    (folder / "pyxrt.pyi").write_text("class device: ...\n")
    return tree


def pyxrt(project: Path, *args: str, env: dict[str, str] | None = None) -> Outcome:
    return run_doit(project, "pyxrt", *args, env=env)


def record(project: Path, target: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (project / f"artifacts/{target}/pyxrt.json").read_text(encoding="utf-8")
    )
    return data


def imported(python: Path) -> str:
    return subprocess.run(
        [python, "-I", "-c", "import pyxrt; print(pyxrt.__file__, pyxrt.coreutil)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_a_venv_gets_a_binding_for_the_opt_stack_and_the_pyxrt_gate_then_passes_for_it(
    project_dir: Path, host: Path, fake_tools: FakeTools, tmp_path: Path
) -> None:
    python_headers()
    npu_host(host, pyxrt=False)  # /opt/xilinx/xrt with no binding at all
    make_stack(host, "opt/xilinx/xrt/lib", "opt/xilinx/xrt/include")
    venv = make_venv(tmp_path / "flm-venv")
    site = tmp_path / "site.yaml"
    site.write_text(f"python: [{venv}]\n")
    replay(fake_tools, "healthy-npu4")
    installed_xrt(fake_tools)
    env = {
        **fake_tools.env,
        "XDNAFORGE_PASS_ENV": "FAKE_SCENARIO FAKE_CALLS",
        "XDNAFORGE_SITE": str(site),
    }

    def validate() -> dict[str, Any]:
        done = run_doit(project_dir, "validate", "--target", "ubuntu26-compat", env=env)
        assert "Traceback" not in done.output, done.output
        validation = json.loads(
            (project_dir / "artifacts/ubuntu26-compat/validation.json").read_text()
        )
        return next(g for g in validation["gates"] if g["name"] == "pyxrt")

    before = validate()
    assert before["status"] == "fail"
    assert f"`doit pyxrt --python {venv}` builds one" in before["summary"]

    source = make_source(tmp_path / "XRT")
    outcome = pyxrt(
        project_dir, "--target", "ubuntu26-compat", "--python", str(venv), "--source", str(source)
    )
    assert outcome.rc == 0, outcome.output
    tag = f"cpython-{sys.version_info[0]}{sys.version_info[1]}"
    (binding,) = record(project_dir, "ubuntu26-compat")["bindings"]
    assert binding["python"] == str(venv)  # as named: the venv's link, not the base interpreter
    assert binding["tag"] == tag
    assert binding["environment"] == f"venv {tmp_path / 'flm-venv'}"
    assert binding["rpath"] == str(host / "opt/xilinx/xrt/lib")  # not a loader default
    assert binding["source"] == f"--source {source}"
    installed = Path(binding["binding"])
    assert installed.name == f"pyxrt{sysconfig.get_config_var('EXT_SUFFIX')}"
    assert installed.parent.is_relative_to(tmp_path / "flm-venv")
    assert (installed.parent / "pyxrt.pyi").is_file()
    assert binding["command"][0] == "c++"
    assert f"{host / 'opt/xilinx/xrt/lib/libxrt_coreutil.so.2'}" in binding["command"]
    # the binding is the venv's own: it imports without any path set, linked to the stack
    assert imported(venv) == f"{installed} coreutil 2.25.0 (test)"

    after = validate()
    assert after["status"] == "pass", after
    assert any(f"{venv}: {tag} binding from `doit pyxrt`" in e for e in after["evidence"])
    assert "buffer round trip ok" in after["summary"]
    report = (project_dir / "artifacts/ubuntu26-compat/BUILD_REPORT.md").read_text()
    assert "## pyxrt bindings" in report
    assert f"| `{venv}` | {sys.version.split()[0]} | {tag} |" in report
    stack_own = (
        f"Found by the last pyxrt gate: the stack's own pyxrt in {host}/opt/xilinx/xrt/python"
    )
    assert f"{stack_own}: none." in report


def test_the_installed_versions_tag_is_the_source_for_a_distro_stack_in_usr(
    project_dir: Path, host: Path, tmp_path: Path
) -> None:
    python_headers()
    require_tool("git")
    make_stack(host, LIB, "usr/include")
    (host / LIB / "libxrt_coreutil.so").symlink_to("libxrt_coreutil.so.2")  # libxrt-dev's
    info = host / "var/lib/dpkg/info"
    info.mkdir(parents=True)
    lists = {
        "libxrt2": [f"/{LIB}/libxrt_coreutil.so.2"],
        "libxrt-npu2": [f"/{LIB}/libxrt_driver_xdna.so.2"],
        "libxrt-utils": ["/usr/bin/xrt-smi"],
        "libxrt-dev": ["/usr/include/xrt/xrt_device.h", f"/{LIB}/libxrt_coreutil.so"],
    }
    for package, files in lists.items():
        (info / f"{package}:amd64.list").write_text("".join(f"{f}\n" for f in files))
    (host / "var/lib/dpkg/status").write_text(
        "Package: libxrt2\nStatus: install ok installed\nVersion: 1:2.25.0-4+b1\n"
    )
    # XRT's repository with the release tag, as a local mirror the site names
    repository = make_source(tmp_path / "xrt-repo")
    for argv in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "2.25.0"],
        ["tag", "2.25.0"],
    ):
        subprocess.run(["git", "-C", str(repository), *argv], check=True)
    site = tmp_path / "site.yaml"
    site.write_text(f"mirrors:\n  https://github.com/Xilinx/XRT.git: {repository}/.git\n")
    venv = make_venv(tmp_path / "venv")
    outcome = pyxrt(
        project_dir,
        "--target",
        "debian-forky-archive",
        "--python",
        str(venv),
        env={"XDNAFORGE_SITE": str(site)},
    )
    assert outcome.rc == 0, outcome.output
    (binding,) = record(project_dir, "debian-forky-archive")["bindings"]
    assert binding["xrt_version"] == "2.25.0"
    assert binding["source"].startswith("XRT 2.25.0 (tag 2.25.0, commit ")
    assert f"libxrt_coreutil in /{LIB}" in binding["stack"]
    assert binding["library"] == str(host / LIB / "libxrt_coreutil.so")  # -dev's link
    assert imported(venv).endswith("coreutil 2.25.0 (test)")


def test_a_system_interpreter_is_refused_without_yes(project_dir: Path) -> None:
    system = Path(sys.base_prefix) / "bin/python3"
    outcome = pyxrt(project_dir, "--target", "ubuntu26-compat", "--python", str(system))
    assert outcome.rc == 0, outcome.output  # a preview without --yes (README "Exit codes")
    assert f"{system} is a system interpreter, not a virtual environment" in outcome.output
    assert "rerun with --yes" in outcome.output
    assert "Traceback" not in outcome.output
    assert not (project_dir / "artifacts/ubuntu26-compat/pyxrt.json").exists()


@pytest.mark.parametrize(
    ("python", "expected"),
    [
        ("/nonexistent/python3", "--python /nonexistent/python3: no executable file at"),
        ("/bin/true", "--python /bin/true is not a Python interpreter: it printed no answer"),
    ],
)
def test_what_is_not_an_interpreter_is_one_line_and_exit_3(
    project_dir: Path, python: str, expected: str
) -> None:
    outcome = pyxrt(project_dir, "--target", "ubuntu26-compat", "--python", python)
    assert outcome.rc == 3, outcome.output
    assert expected in outcome.stderr
    assert "Traceback" not in outcome.output


def test_no_installed_stack_is_exit_3_saying_what_to_do(project_dir: Path, tmp_path: Path) -> None:
    venv = make_venv(tmp_path / "venv")
    outcome = pyxrt(project_dir, "--target", "ubuntu26-compat", "--python", str(venv))
    assert outcome.rc == 3, outcome.output
    assert "no installed XRT: no libxrt_coreutil.so* in" in outcome.stderr
    assert "doit install --target T --yes" in outcome.stderr
