"""The frames of a backtrace as gdb (`bt`, `thread apply all bt`) and pstack print them, and
whether the innermost frame of the NPU's userspace is one that waits for the device. A pure
parser; nothing is run here.

gdb's frame lines: "#1  0x00007f... in shim_xdna::hwq::wait_command (this=..., seq=3, ...)
at .../hwq.cpp:118" or, without an address, "#1  shim_xdna::hwq::wait_command(...)
[libxrt_driver_xdna.so.2]". The shim's functions that block until the NPU answers are named
wait* in every release (xdna-driver src/shim: hwq.cpp wait_command, fence.cpp wait and
wait_syncobj_done, platform.cpp wait_syncobj, host/platform_host.cpp wait_cmd_ioctl and
wait_cmd_syncobj, buffer.cpp wait_for_submitted, and the umq and virtio variants); XRT's
xrt::run::wait and xrt::bo's sync wait on them.

A Python traceback ("Traceback (most recent call last):", then '  File "<path>", line <n>, in
<function>' and the code line, innermost last) whose innermost frame is a program's call of an
XRT run's wait (pyxrt's `run.wait()`, mlir-aie's aie/utils/xrt.py `h.wait()`) ended there:
the wait raised, or the user interrupted a run that never completed. The same holds for
pyxrt's other objects whose creation talks to the device (XRT src/python/pybind11/src/
pyxrt.cpp: `xrt.device(i)` opens it, `xrt.hw_context(device, uuid)` creates a hardware
context, `xrt.bo(...)` allocates a buffer, `device.register_xclbin`/`load_xclbin` and
`xrt.xclbin(path)` read and register the xclbin): a traceback that ends in one of these
calls raised there, even when the paste stops before the exception's own line.

A traceback whose innermost frame is in mlir-aie's compiler packages (python/compiler,
python/utils/compile, python/iron/compile, installed as aie/compiler/..., aie/utils/
compile/..., aie/iron/compile/...: aiecc.py and IRON's JIT compile) raised while building
the design, before anything ran on the NPU.

A traceback whose innermost frame is CPython's subprocess starting a program, ending in
FileNotFoundError, names a program that is not installed or not on the PATH.

A traceback that starts in a build driver (the script run is `setup.py`, `build.py`,
`build_*.py` or `*_build.py`: setuptools' and pip's builds, ONNX Runtime's
tools/ci_build/build.py, a project's own) and whose innermost frame is CPython's subprocess
waiting for a program it checked (`run(check=True)`, `check_call`, `check_output` raise
CalledProcessError there) is a build step that exited with an error: the script stopped the
build there, even when the paste stops before the exception's own line (not when that line is
KeyboardInterrupt: the user stopped the step).

A traceback that ends in AssertionError (CPython's `assert` statement, or `raise
AssertionError(...)`) raised in the program's own code, not in a package it imports, is the
program's own check of its result: its innermost frame is in the file the traceback starts
in (the script that was run), or in a test file (`test_*.py`, `*_test.py`, as pytest and
unittest name them). An assertion inside a library (its innermost frame in another file) is
that library's check of its own state. IPython and Jupyter print a traceback's frames as
headers instead ("Cell In[3], line 286" for a notebook cell, "<ipython-input-3-...> in
<module>" before IPython 8, "File ~/lib/python3.10/site-packages/x.py:12, in f(a)" for a
file): a notebook cell is the program's own code, so an AssertionError whose innermost
header is a cell, or a file in ipykernel's temporary directory (where a cell's code is
compiled), is the program's own check.

A process that crashed ("Segmentation fault", SIGSEGV, SIGBUS, as the shell, gdb or the
kernel's core-dump line say) with a backtrace whose innermost frame of XRT's API is a method
of one of its objects (XRT src/runtime_src/core/include/xrt/*.h and their `_impl`s in
core/common/api: xrt::run and xrt::kernel, xrt::bo, xrt::hw_context, xrt::device,
xrt::xclbin) crashed in that step of the NPU's use: setting a kernel's arguments or running
it, a buffer, a context, the device, the xclbin.
"""

from __future__ import annotations

import re
from collections import deque

_FRAME_RE = re.compile(r"^#(\d+)\s+(?:0x[0-9a-fA-F]+ in )?([\w:~<>]+)\s*\(", re.M)
_SHIM_RE = re.compile(r"^shim_xdna(?:_edge)?::")


def frames(text: str) -> list[tuple[int, str]]:
    """(frame number, function) of each frame line, in the order printed."""
    return [(int(m.group(1)), m.group(2)) for m in _FRAME_RE.finditer(text)]


def blocked_in_shim(text: str) -> str | None:
    """The shim function a backtrace is blocked in, when its innermost shim frame (below
    the system calls) is one that waits for the NPU; None otherwise."""
    for _number, function in sorted(frames(text)):
        if not _SHIM_RE.match(function):
            continue
        return function if function.rsplit("::", 1)[-1].startswith("wait") else None
    return None


# a frame's header (path, line, function), and a frame: its header and its code line
_PY_HEADER = r'^\s*File "([^"]+)", line (\d+), in (\S+)'
_PY_HEADER_RE = re.compile(_PY_HEADER, re.M)
_PY_FRAME_RE = re.compile(_PY_HEADER + r"\s*\n\s*(\S[^\n]*)", re.M)


def _innermost_py_frame(text: str) -> re.Match[str] | None:
    """A Python traceback's innermost frame (path, line, function, code), if there is one."""
    if "Traceback (most recent call last)" not in text:
        return None
    return next(iter(deque(_PY_FRAME_RE.finditer(text), maxlen=1)), None)


# what the innermost frame's code calls -> the step of the NPU's use it is
_XRT_CALLS = (
    (re.compile(r"\.wait\s*\("), "wait"),
    (re.compile(r"\bhw_context\s*\("), "hw_context"),
    (re.compile(r"\b(?:py)?xrt\.bo\s*\("), "bo"),
    (re.compile(r"\b(?:py)?xrt\.device\s*\("), "device"),
    (re.compile(r"\.(?:register|load)_xclbin\s*\(|\b(?:py)?xrt\.xclbin\s*\("), "xclbin"),
)


def python_xrt_call(text: str) -> tuple[str, str] | None:
    """(call, '<file>:<line>') of a Python traceback's innermost frame when it is a call of
    pyxrt that talks to the device (module doc), in a file or a line that names XRT; call is
    wait, hw_context, bo, device or xclbin. None otherwise."""
    innermost = _innermost_py_frame(text)
    if innermost is None:
        return None
    path, line, _function, code = innermost.groups()
    if "xrt" not in path.rsplit("/", 1)[-1].lower() and "xrt" not in code.lower():
        return None
    for pattern, call in _XRT_CALLS:
        if pattern.search(code):
            return call, f"{path.rsplit('/', 1)[-1]}:{line}"
    return None


_COMPILE_PACKAGE_RE = re.compile(r"/aie/(?:compiler|utils/compile|iron/compile)/|/aiecc(?:\.py|/)")


def python_compile_step(text: str) -> str | None:
    """'<file>:<line>' of a Python traceback's innermost frame when it is in mlir-aie's
    compiler packages (module doc); None otherwise."""
    innermost = _innermost_py_frame(text)
    if innermost is None:
        return None
    path, line, _function, _code = innermost.groups()
    if not _COMPILE_PACKAGE_RE.search(path.replace("\\", "/")):
        return None
    return f"{path.rsplit('/', 1)[-1]}:{line}"


# CPython's subprocess (Lib/subprocess.py, _execute_child: "raise child_exception_type(errno_num,
# err_msg, err_filename)", or os.posix_spawn under _posix_spawn) raises FileNotFoundError
# with the executable's name when the program it was to start is not there
_MISSING_PROGRAM_RE = re.compile(
    r"^FileNotFoundError: \[Errno 2\] No such file or directory: '([^'\n]+)'\s*$", re.M
)


def python_missing_program(text: str) -> str | None:
    """The program a Python traceback failed to start (its innermost frame in subprocess.py,
    then FileNotFoundError naming it), as its last path component; None otherwise."""
    innermost = _innermost_py_frame(text)
    if innermost is None or not innermost.group(1).replace("\\", "/").endswith("/subprocess.py"):
        return None
    missing = _MISSING_PROGRAM_RE.search(text, innermost.end())
    return missing.group(1).replace("\\", "/").rsplit("/", 1)[-1] if missing else None


# setuptools', pip's and projects' build drivers, by the name of the script that was run
_BUILD_SCRIPT_RE = re.compile(r"(?:^|[/\\])(?:setup|build|build_\w+|\w+_build)\.py$")
# CPython's subprocess (Lib/subprocess.py): where a checked program's exit status raises
_CHECKED_CALLS = ("run", "check_call", "check_output")


def python_build_step(text: str) -> str | None:
    """'<script>:<line>' of a Python traceback that starts in a build driver and ends in
    subprocess waiting for a checked program (module doc); None otherwise."""
    start = text.rfind("Traceback (most recent call last)")
    if start < 0:
        return None
    # the innermost frame's header: a paste cut there has no code line after it
    innermost = next(iter(deque(_PY_HEADER_RE.finditer(text, start), maxlen=1)), None)
    if innermost is None:
        return None
    path, function = innermost.group(1), innermost.group(3)
    if not path.replace("\\", "/").endswith("/subprocess.py") or function not in _CHECKED_CALLS:
        return None
    # the user's Ctrl-C while the step ran stopped it, not the step's exit status
    if re.search(r"^KeyboardInterrupt\b", text[innermost.end() : innermost.end() + 2000], re.M):
        return None
    first = _PY_FRAME_RE.search(text, start)
    if first is None or not _BUILD_SCRIPT_RE.search(first.group(1)):
        return None
    name = first.group(1).replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name}:{first.group(2)}"


_ASSERTION_RE = re.compile(r"^[ \t]*AssertionError\b:?[ \t]*(.*)$", re.M)
_TEST_FILE_RE = re.compile(r"(?:^|[/\\])(?:test_\w+|\w+_test)\.py$")


# IPython's frame headers (module doc): a cell, a cell before IPython 8, a file
_IPY_FRAME_RE = re.compile(
    r"(Cell In ?\[\d+\], line (\d+)|<ipython-input-\d+-[0-9a-f]+> in \S+"
    r"|File \S[^\n]*?:(\d+), in \w+)"
)
_IPY_OWN_RE = re.compile(r"^(?:Cell|<ipython-input)|[/\\]ipykernel_\d+[/\\]")


def _ipython_own_assertion(text: str) -> str | None:
    """python_own_assertion for IPython's form of a traceback (module doc)."""
    failed = deque(_ASSERTION_RE.finditer(text), maxlen=1)
    start = text.rfind("Traceback (most recent call last)")
    if not failed or start < 0 or failed[0].start() < start:
        return None
    headers = deque(_IPY_FRAME_RE.finditer(text, start, failed[0].start()), maxlen=1)
    if not headers or not _IPY_OWN_RE.search(headers[0].group(1)):
        return None
    header = headers[0]
    if text.count("\n", header.end(), failed[0].start()) > 20:
        return None  # the context IPython prints is a few lines: this one was raised later
    place = header.group(1)
    if header.group(3) is not None:  # a file: its name and line, as for CPython's frames
        path = place[len("File ") :].rsplit(":", 1)[0]
        name = re.split(r"[/\\]", path)[-1]
        place = f"{name}:{header.group(3)}"
    return f"{place}: AssertionError {failed[0].group(1).strip()}".strip()[:160]


def python_own_assertion(text: str) -> str | None:
    """The AssertionError line of a Python traceback raised in the program's own code (module
    doc), as '<file>:<line>: <message>'; None otherwise."""
    innermost = _innermost_py_frame(text)
    if innermost is None:
        return _ipython_own_assertion(text) if "Traceback (most" in text else None
    # the exception's line follows the innermost frame's code (and 3.11's ~~~^^^ marks)
    after = "\n".join(text[innermost.end() :].split("\n", 4)[:4])
    failed = _ASSERTION_RE.search(after)
    if failed is None:
        return None
    start = text.rfind("Traceback (most recent call last)", 0, innermost.start())
    first = _PY_FRAME_RE.search(text, start)
    path, line = innermost.group(1), innermost.group(2)
    own = first is not None and first.group(1) == path
    if not own and not _TEST_FILE_RE.search(path):
        return None
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name}:{line}: AssertionError {failed.group(1).strip()}".strip()[:160]


_CRASH_RE = re.compile(r"Segmentation fault|\bSIGSEGV\b|\bSIGBUS\b|\bBus error\b")
# XRT's API objects (xrt::run_impl, xrt::kernel_impl ... their implementations) -> the step
_XRT_OBJECTS = (
    (re.compile(r"^xrt::(?:run|kernel|runlist)(?:_impl)?::"), "run"),
    (re.compile(r"^xrt::bo(?:_impl)?::"), "bo"),
    (re.compile(r"^xrt::hw_context(?:_impl)?::"), "hw_context"),
    (re.compile(r"^xrt::device(?:_impl)?::"), "device"),
    (re.compile(r"^xrt::xclbin(?:_impl)?::"), "xclbin"),
)


def crashed_in_xrt(text: str) -> tuple[str, str] | None:
    """(step, function) when the process crashed (module doc) and its backtrace's innermost
    frame of XRT's API is a method of one of its objects; step is run, bo, hw_context,
    device or xclbin. None otherwise (a crash elsewhere, or no backtrace)."""
    if not _CRASH_RE.search(text):
        return None
    for _number, function in sorted(frames(text)):
        if not function.startswith("xrt::"):
            continue
        for pattern, step in _XRT_OBJECTS:
            if pattern.match(function):
                return step, function
        return None  # the innermost XRT frame is not one of its objects' methods
    return None
