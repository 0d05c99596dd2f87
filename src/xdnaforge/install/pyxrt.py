"""pyxrt for an interpreter the user names (`doit pyxrt --python PATH`): asks the interpreter
about itself, finds the installed stack (its layout, libxrt_coreutil, headers) and the pyxrt
source, compiles XRT's pybind11 target for that interpreter, checks that it imports, installs
it into the interpreter's environment (a system interpreter only with consent) and records it
in pyxrt.json, where the pyxrt gate and the report find it.

Edge module: every check that needs no compile runs first, so bad input costs nothing.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdnaforge.config.recipe import Recipe
from xdnaforge.config.site import Site
from xdnaforge.errors import StageFailed, UsageError
from xdnaforge.hardware.xrt_layout import (
    KNOWN_PACKAGES,
    XrtLayout,
    find_layout,
    installed_files,
    layout_from_files,
    system_lib_dir,
)
from xdnaforge.install import consent
from xdnaforge.planning.pyxrt_build import (
    COMPILE_TIMEOUT_S,
    BindingCompile,
    binding_name,
    compile_binding,
    missing_header,
    upstream_version,
    version_tags,
)
from xdnaforge.process.run import CommandFailed, run
from xdnaforge.sources.xrt_source import XRT_URL, PyxrtSource, from_git, from_tree
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_record
from xdnaforge.tools.dpkg import parse_status
from xdnaforge.tools.git import cache_name, is_local
from xdnaforge.tools.python import Interpreter, parse_answer, query_argv

COMPILER = "c++"
RECORD = "pyxrt"


@dataclass(frozen=True, slots=True, kw_only=True)
class BindingRequest:
    """One binding to build, every input found and checked."""

    interpreter: Interpreter
    layout: XrtLayout
    library: Path  # libxrt_coreutil as this machine reaches it (under the sysroot)
    xrt_version: str | None
    source: PyxrtSource
    compile: BindingCompile
    destination: Path  # the binding's path in the interpreter's environment
    work: Path
    log: Path


def _absolute(python: str) -> str:
    """The interpreter's path as named (a venv's bin/python is a link: never resolved)."""
    if "/" not in python:
        found = shutil.which(python)
        if found is None:
            raise UsageError(
                f"--python {python}: not found on PATH",
                hint="name the interpreter by path: a venv's bin/python, /usr/bin/python3.12",
            )
        return found
    # absolute, not resolved: Path.resolve() would follow the venv's link out of it
    return os.path.normpath(Path.cwd() / python)


def ask_interpreter(python: str, work: Path, log: Path) -> Interpreter:
    path = _absolute(python)
    if not (Path(path).is_file() and os.access(path, os.X_OK)):
        raise UsageError(
            f"--python {python}: no executable file at {path}",
            hint="name an interpreter: a venv's bin/python, /usr/bin/python3.12",
        )
    try:
        result = run(query_argv(path), cwd=work, timeout=60, log_file=log)
        interpreter = parse_answer(path, result.stdout)
    except (CommandFailed, ValueError, KeyError) as error:
        why = error.message.splitlines()[0] if isinstance(error, CommandFailed) else str(error)
        raise UsageError(
            f"--python {python} is not a Python interpreter: {why}",
            hint="name a CPython 3 interpreter: a venv's bin/python, /usr/bin/python3.12",
        ) from None
    if interpreter.implementation != "cpython" or not interpreter.ext_suffix:
        raise UsageError(
            f"--python {python} is {interpreter.implementation} {interpreter.version}: "
            "pyxrt is a CPython extension",
            hint="name a CPython interpreter",
        )
    return interpreter


def _under(root: Path, path: Path) -> Path:
    return root / path.relative_to("/") if path.is_absolute() else path


def coreutil_library(root: Path, layout: XrtLayout) -> Path:
    """libxrt_coreutil to link: the unversioned -dev link, else the runtime's SONAME file."""
    directory = _under(root, layout.lib_dir)
    for pattern in ("libxrt_coreutil.so", "libxrt_coreutil.so.[0-9]"):
        found = sorted(directory.glob(pattern))
        if found:
            return found[-1]
    raise UsageError(
        f"no installed XRT: no libxrt_coreutil.so* in {directory} ({layout.source})",
        hint="install the stack first (`doit install --target T --yes`), or name its prefix "
        "in site.yaml (xrt_prefix) when dpkg did not install it",
    )


def include_dirs(root: Path, layout: XrtLayout, interpreter: Interpreter) -> tuple[Path, ...]:
    """XRT's headers (the stack's -dev files), Python.h, pybind11: each checked to exist."""
    candidates = [layout.include_dir]
    if layout.include_dir is None:  # a -dev package the recipe does not install
        other = layout_from_files(installed_files(root, KNOWN_PACKAGES))
        candidates.append(other.include_dir if other is not None else None)
    candidates.append(layout.bin_dir.parent / "include")
    xrt = next(
        (
            _under(root, d)
            for d in candidates
            if d is not None and (_under(root, d) / "xrt/xrt_device.h").is_file()
        ),
        None,
    )
    if xrt is None:
        raise UsageError(
            f"no XRT headers (xrt/xrt_device.h) for the stack in {layout.lib_dir} under {root}",
            hint="install libxrt-dev (a distro stack) or the -dev package built with the stack",
        )
    if not (interpreter.include / "Python.h").is_file():
        raise UsageError(
            f"no Python.h in {interpreter.include} for {interpreter.describe()}",
            hint="install the interpreter's headers "
            f"(python{'.'.join(interpreter.version.split('.')[:2])}-dev on Debian and Ubuntu)",
        )
    pybind11 = interpreter.pybind11_include
    if pybind11 is None and Path("/usr/include/pybind11/pybind11.h").is_file():
        pybind11 = Path("/usr/include")  # Debian's pybind11-dev
    if pybind11 is None:
        raise UsageError(
            f"no pybind11 for {interpreter.describe()}",
            hint=f"`{interpreter.path} -m pip install 'pybind11>=2.6'` (a virtual "
            "environment), or install pybind11-dev",
        )
    return (xrt, pybind11, interpreter.include)


def installed_version(root: Path, layout: XrtLayout) -> str | None:
    """The installed XRT release (2.25.0), from the version dpkg records for its package."""
    if layout.version_package is None:
        return None
    status = root / "var/lib/dpkg/status"
    text = status.read_text(errors="replace") if status.is_file() else ""
    version = parse_status(text).get(layout.version_package)
    return upstream_version(version) if version else None


def xrt_git_dirs(site: Site) -> list[Path]:
    """Where XRT's history may be on this machine: its local mirror, its object cache."""
    places = []
    mirror = site.mirror_for(XRT_URL)
    if mirror is not None and is_local(mirror):
        places.append(Path(mirror.removeprefix("file://")))
    places.append(site.cache_dir / cache_name(XRT_URL))
    return places


def find_source(
    site: Site,
    recipe: Recipe,
    workspace: Workspace,
    given: str,
    version: str | None,
    work: Path,
    log: Path,
) -> PyxrtSource:
    """The named tree; else the recipe's fetched tree (a source recipe: what was built and
    installed); else the installed release's tag in XRT's mirror or object cache."""
    if given:
        named = from_tree(Path(given).resolve(), "--source")
        if named is None:
            raise UsageError(
                f"--source {given} holds no src/python/pybind11/src/pyxrt.cpp",
                hint="name an XRT tree (a checkout, `apt-get source xrt`) or an xdna-driver "
                "tree with its xrt submodule",
            )
        return named
    if recipe.kind == "source":
        fetched = from_tree(workspace.source_tree, "the recipe's fetched tree")
        if fetched is not None:
            return fetched
    tagged = (
        from_git(xrt_git_dirs(site), version, version_tags(version), work, log) if version else None
    )
    if tagged is not None:
        return tagged
    release = f"XRT {version}" if version else "the installed XRT (its version is unknown)"
    raise UsageError(
        f"no pyxrt source for {release}: no fetched tree of {recipe.name}, no tag "
        f"{version or '?'} in {', '.join(str(p) for p in xrt_git_dirs(site))}",
        hint=f"give --source DIR (an XRT tree at {version or 'that release'}), "
        f"`doit fetch --target {recipe.name}` for a source recipe, or add XRT's repository "
        f"to site.yaml's mirrors ({XRT_URL}: /path/to/XRT.git)",
    )


def prepare(
    site: Site, recipe: Recipe, workspace: Workspace, python: str, source: str, yes: bool
) -> BindingRequest:
    """Every input of the build, found and checked; UsageError (exit 3) for what is missing,
    StageFailed for a system interpreter without consent (before anything else is looked at)."""
    root = site.sysroot
    work = workspace.work / "pyxrt"
    work.mkdir(parents=True, exist_ok=True)
    log = workspace.logs / "pyxrt" / "pyxrt.log"
    interpreter = ask_interpreter(python, work, log)
    authorise(interpreter, yes)
    layout = find_layout(
        root,
        recipe.install_order,
        site_prefix=site.xrt_prefix if site.xrt_prefix_given else None,
    )
    library = coreutil_library(root, layout)
    includes = include_dirs(root, layout, interpreter)
    version = installed_version(root, layout)
    found = find_source(site, recipe, workspace, source, version, work, log)
    if shutil.which(COMPILER) is None:
        raise UsageError(f"no {COMPILER} on PATH", hint="install g++ (build-essential)")
    # the loader finds a /usr stack's library; one elsewhere (/opt/xilinx/xrt/lib, a sysroot)
    # is recorded in the binding, so it imports without setup.sh or LD_LIBRARY_PATH
    rpath = None if system_lib_dir(library.parent) else library.parent
    compiled = compile_binding(
        compiler=COMPILER,
        source=found.cpp,
        work=work / interpreter.tag,
        ext_suffix=interpreter.ext_suffix,
        include_dirs=includes,
        library=library,
        rpath=rpath,
    )
    return BindingRequest(
        interpreter=interpreter,
        layout=layout,
        library=library,
        xrt_version=version,
        source=found,
        compile=compiled,
        destination=interpreter.platlib / binding_name(interpreter.ext_suffix),
        work=work,
        log=log,
    )


def _writable(path: Path) -> bool:
    existing = next(p for p in (path, *path.parents) if p.exists())
    return os.access(existing, os.W_OK)


def authorise(interpreter: Interpreter, yes: bool) -> None:
    """A venv is the user's own; a system interpreter's packages are the system's."""
    if not interpreter.venv:
        consent.require(
            yes,
            f"{interpreter.path} is a system interpreter, not a virtual environment: "
            f"installing pyxrt into {interpreter.platlib} changes the system",
            shown="the build and the install",
        )


def show(request: BindingRequest) -> None:
    """What will be built from what, and where it goes; stops if it cannot go there."""
    print(f"pyxrt for {request.interpreter.describe()}")
    print(f"  stack: {request.layout.describe()}")
    print(f"  source: {request.source.described}")
    print(f"  installs {request.destination}")
    if not _writable(request.destination.parent):
        raise StageFailed(
            f"cannot write {request.destination.parent}",
            hint="run as the owner of that environment (sudo for a system interpreter)",
        )


def _compile(request: BindingRequest) -> None:
    request.compile.output.parent.mkdir(parents=True, exist_ok=True)
    try:
        run(
            request.compile.argv,
            cwd=request.compile.output.parent,
            timeout=COMPILE_TIMEOUT_S,
            log_file=request.log,
        )
    except CommandFailed as error:
        missing = missing_header(error.output)
        raise StageFailed(
            f"the pyxrt compile for {request.interpreter.describe()} failed:\n{error}",
            hint=f"{missing[0]} is missing: install {missing[1]}" if missing else None,
        ) from None


IMPORT_CHECK = "import sys; sys.path.insert(0, sys.argv[1]); import pyxrt; print(pyxrt.__file__)"


def _check_import(request: BindingRequest) -> None:
    """The built binding imports in its interpreter (the right ABI, libxrt_coreutil found)."""
    folder = str(request.compile.output.parent)
    try:
        result = run(
            [request.interpreter.path, "-I", "-c", IMPORT_CHECK, folder],
            cwd=request.work,
            timeout=120,
            log_file=request.log,
        )
    except CommandFailed as error:
        tail = [line for line in error.output.splitlines() if line.strip()][-1:]
        raise StageFailed(
            f"the built binding does not import in {request.interpreter.path}: "
            f"{tail[0] if tail else error.message}; nothing was installed",
            hint=f"see {request.log}",
        ) from None
    if not result.stdout.strip().startswith(folder):
        raise StageFailed(
            f"{request.interpreter.path} imported another pyxrt ({result.stdout.strip()}), "
            "not the one just built; nothing was installed"
        )


def _install_file(source: Path, destination: Path) -> str:
    """Copy atomically (a reader sees the old binding or the new one); the sha256."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    data = source.read_bytes()
    partial = destination.with_name(f".{destination.name}.xdnaforge")
    try:
        partial.write_bytes(data)
        partial.chmod(0o755 if destination.suffix == ".so" else 0o644)
        partial.replace(destination)
    except BaseException:  # a full disk, Ctrl-C: no half copy left in the environment
        partial.unlink(missing_ok=True)
        raise
    return hashlib.sha256(data).hexdigest()


def build_and_install(request: BindingRequest, workspace: Workspace) -> dict[str, Any]:
    """Compile, check the import, install, record; the record's entry."""
    _compile(request)
    _check_import(request)
    digest = _install_file(request.compile.output, request.destination)
    stub = None
    if request.source.stub is not None:
        stub = request.destination.with_name("pyxrt.pyi")
        _install_file(request.source.stub, stub)
    interpreter = request.interpreter
    entry: dict[str, Any] = {
        "python": interpreter.path,
        "version": interpreter.version,
        "tag": interpreter.tag,
        "environment": f"venv {interpreter.prefix}" if interpreter.venv else "system",
        "binding": str(request.destination),
        "sha256": digest,
        "stub": str(stub) if stub else None,
        "source": request.source.described,
        "xrt_commit": request.source.commit,
        "xrt_version": request.xrt_version,
        "stack": request.layout.describe(),
        "library": str(request.library),
        "rpath": str(request.compile.rpath) if request.compile.rpath else None,
        "command": list(request.compile.argv),
        "built": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "log": str(request.log),
    }
    record_binding(workspace, entry)
    print(f"pyxrt installed: {request.destination} (sha256 {digest[:12]})")
    return entry


def record_binding(workspace: Workspace, entry: dict[str, Any]) -> None:
    """pyxrt.json keeps one binding per interpreter; a rebuild replaces that one only."""
    path = workspace.record(RECORD)
    before = read_record(path) or {}
    kept = [b for b in before.get("bindings", []) if b.get("python") != entry["python"]]
    bindings = sorted([*kept, entry], key=lambda b: str(b["python"]))
    write_record(path, RECORD, {"target": workspace.target, "bindings": bindings})
