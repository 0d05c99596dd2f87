"""The checks `doit pyxrt` makes before compiling, on trees in tmp_path (no process): the
library to link, XRT's headers, Python.h, pybind11, the installed release; pyxrt.json keeps
one binding per interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.hardware.test_xrt_layout import FORKY
from tests.unit.tools.test_python import VENV
from xdnaforge.errors import UsageError
from xdnaforge.hardware.xrt_layout import XrtLayout, layout_from_files
from xdnaforge.install.pyxrt import (
    _install_file,
    coreutil_library,
    include_dirs,
    installed_version,
    record_binding,
)
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record
from xdnaforge.tools.python import parse_answer

LIB = "usr/lib/x86_64-linux-gnu"
DEV = {**FORKY, "libxrt-dev": ["/usr/include/xrt/xrt_device.h", f"/{LIB}/libxrt_coreutil.so"]}


def layout() -> XrtLayout:
    found = layout_from_files(DEV)
    assert found is not None
    return found


def test_the_dev_link_is_linked_when_present_else_the_soname_file(tmp_path: Path) -> None:
    (tmp_path / LIB).mkdir(parents=True)
    (tmp_path / LIB / "libxrt_coreutil.so.2.25.00").write_bytes(b"")
    (tmp_path / LIB / "libxrt_coreutil.so.2").symlink_to("libxrt_coreutil.so.2.25.00")
    (tmp_path / LIB / "libxrt_coreutil.a").write_bytes(b"")  # never the static one
    assert coreutil_library(tmp_path, layout()) == tmp_path / LIB / "libxrt_coreutil.so.2"
    (tmp_path / LIB / "libxrt_coreutil.so").symlink_to("libxrt_coreutil.so.2")
    assert coreutil_library(tmp_path, layout()) == tmp_path / LIB / "libxrt_coreutil.so"


def test_no_library_is_no_installed_xrt(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no installed XRT: no libxrt_coreutil\.so"):
        coreutil_library(tmp_path, layout())


def test_headers_then_python_h_then_pybind11_each_named_when_missing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    python = tmp_path / "py"
    answer = VENV.replace("/root/.pyenv/versions/3.11.7/include/python3.11", str(python))
    interpreter = parse_answer("/tmp/r24/venv/bin/python", answer)
    with pytest.raises(UsageError, match=r"no XRT headers \(xrt/xrt_device.h\)") as missing:
        include_dirs(root, layout(), interpreter)
    assert missing.value.hint is not None
    assert "libxrt-dev" in missing.value.hint
    (root / "usr/include/xrt").mkdir(parents=True)
    (root / "usr/include/xrt/xrt_device.h").write_text("")
    with pytest.raises(UsageError, match=r"no Python\.h in") as no_python:
        include_dirs(root, layout(), interpreter)
    assert no_python.value.hint is not None
    assert "python3.11-dev" in no_python.value.hint
    python.mkdir()
    (python / "Python.h").write_text("")
    assert include_dirs(root, layout(), interpreter) == (
        root / "usr/include",
        Path("/tmp/r24/venv/lib/python3.11/site-packages/pybind11/include"),
        python,
    )


def test_the_installed_release_comes_from_the_runtime_packages_dpkg_version(
    tmp_path: Path,
) -> None:
    assert layout().version_package == "libxrt2"  # not libxrt-dev's .so link
    (tmp_path / "var/lib/dpkg").mkdir(parents=True)
    (tmp_path / "var/lib/dpkg/status").write_text(
        "Package: libxrt2\nStatus: install ok installed\nVersion: 1:2.25.0-4+b1\n"
    )
    assert installed_version(tmp_path, layout()) == "2.25.0"


def test_a_rebuild_replaces_that_interpreters_binding_only(tmp_path: Path) -> None:
    space = Workspace("t", tmp_path / "build", tmp_path / "artifacts")
    record_binding(space, {"python": "/a/bin/python", "sha256": "1"})
    record_binding(space, {"python": "/b/bin/python", "sha256": "2"})
    record_binding(space, {"python": "/a/bin/python", "sha256": "3"})
    record = read_record(space.record("pyxrt"))
    assert record is not None
    assert record["bindings"] == [
        {"python": "/a/bin/python", "sha256": "3"},
        {"python": "/b/bin/python", "sha256": "2"},
    ]


def test_a_failed_copy_leaves_no_half_file_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = tmp_path / "pyxrt.cpython-311-x86_64-linux-gnu.so"
    built.write_bytes(b"\x7fELF binding")
    destination = tmp_path / "site-packages" / built.name

    def full_disk(self: Path, _mode: int) -> None:
        raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(Path, "chmod", full_disk)
    with pytest.raises(OSError, match="No space left"):
        _install_file(built, destination)
    assert list(destination.parent.iterdir()) == []  # neither the binding nor a partial copy
