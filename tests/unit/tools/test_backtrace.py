"""Backtraces as gdb prints them, and the shim's waits for the NPU."""

from __future__ import annotations

import pytest

from xdnaforge.diagnosis.log_verdict import FAILURE, judge
from xdnaforge.tools.backtrace import (
    blocked_in_shim,
    crashed_in_xrt,
    frames,
    python_build_step,
    python_compile_step,
    python_missing_program,
    python_own_assertion,
    python_xrt_call,
)

# gdb's `bt` of a program blocked on the NPU (frame lines as gdb prints them, with and
# without the address; the system call first)
HUNG = (
    "#0  0x00007ffff7b1c8ff in __GI___ioctl (fd=4, request=3224397002) at ioctl.c:36\n"
    "#1  0x00007fffe5a3b2c1 in shim_xdna::platform_drv_host::wait_cmd_syncobj (this=0x5555)"
    " at /src/shim/host/platform_host.cpp:318\n"
    "#2  shim_xdna::hwq::wait_command(unsigned long, unsigned int)  [libxrt_driver_xdna.so.2]\n"
    "#3  0x00007ffff7e0a0d2 in xrt::run::wait (this=0x7fffffffd9a0) at xrt_kernel.cpp:3301\n"
    "#4  0x0000555555556b3e in main () at test.cpp:120\n"
)


def test_the_innermost_shim_frame_decides() -> None:
    assert frames(HUNG)[1] == (1, "shim_xdna::platform_drv_host::wait_cmd_syncobj")
    assert blocked_in_shim(HUNG) == "shim_xdna::platform_drv_host::wait_cmd_syncobj"
    # a crash inside the shim is not a wait
    crash = HUNG.replace("wait_cmd_syncobj", "create_bo")
    assert blocked_in_shim(crash) is None
    assert blocked_in_shim("#0  main () at test.cpp:3\n") is None


def test_a_backtrace_blocked_in_a_shim_wait_is_a_hang() -> None:
    verdict = judge(HUNG)
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].code == "command-hang-backtrace"


PY_WAIT = (
    "Traceback (most recent call last):\n"
    '  File "/work/test.py", line 123, in main\n'
    "    out = execute(app)\n"
    '  File "/venv/site-packages/mlir_aie/python/aie/utils/xrt.py", line 60, in run\n'
    "    r = h.wait()\n"
    "        ^^^^^^^^\n"
)


def test_a_python_traceback_ending_in_an_xrt_runs_wait_is_found() -> None:
    assert python_xrt_call(PY_WAIT) == ("wait", "xrt.py:60")
    # innermost frame elsewhere (the wait returned; something after it raised)
    later = PY_WAIT + '  File "/work/check.py", line 9, in compare\n    assert ok\n'
    assert python_xrt_call(later) is None
    # a wait of another library's (threading) is not the NPU's
    other = PY_WAIT.replace("mlir_aie/python/aie/utils/xrt.py", "threading.py")
    assert python_xrt_call(other.replace("h.wait()", "self._cond.wait()")) is None


@pytest.mark.parametrize(
    ("code", "call"),
    [
        ("self.ctx = xrt.hw_context(self.device, uuid)", "hw_context"),
        ("bo = pyxrt.bo(device, size, pyxrt.bo.host_only, kernel.group_id(0))", "bo"),
        ("device = xrt.device(0)", "device"),
        ("uuid = device.register_xclbin(xclbin)", "xclbin"),
        ("xclbin = xrt.xclbin(path)", "xclbin"),
        ("r = h.wait()", "wait"),
    ],
)
def test_a_traceback_ending_in_a_pyxrt_call_names_the_step(code: str, call: str) -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/work/bench.py", line 12, in main\n    run_all()\n'
        f'  File "/work/npu_xrt.py", line 40, in setup\n    {code}\n'
    )
    assert python_xrt_call(text) == (call, "npu_xrt.py:40")
    # a frame after it: the call returned
    assert python_xrt_call(text + '  File "/work/x.py", line 3, in f\n    g()\n') is None


def test_a_traceback_in_a_runs_wait_is_a_command_failure() -> None:
    assert [d.code for d in judge(PY_WAIT).diagnoses] == ["command-wait-raised"]


# gdb's frames of a crash (the shell's "Segmentation fault (core dumped)" above them)
CRASH = (
    "Segmentation fault (core dumped)\n"
    "#0  0x00007f3a in xrt::run_impl::validate_bo_at_index (this=0x5, index=5, bo=...)\n"
    "#1  xrt::run::set_arg_at_index(int, xrt::bo const&)\n"
    "#2  0x00007f3b in pybind11::cpp_function::dispatcher (self=..., args_in=...)\n"
)


@pytest.mark.parametrize(
    ("frame", "step"),
    [
        ("xrt::run_impl::validate_bo_at_index", "run"),
        ("xrt::kernel_impl::kernel_impl", "run"),
        ("xrt::bo_impl::bo_impl", "bo"),
        ("xrt::hw_context_impl::hw_context_impl", "hw_context"),
        ("xrt::device::register_xclbin", "device"),
        ("xrt::xclbin_impl::xclbin_impl", "xclbin"),
    ],
)
def test_a_crash_in_an_xrt_object_names_its_step(frame: str, step: str) -> None:
    text = CRASH.replace("xrt::run_impl::validate_bo_at_index", frame)
    assert crashed_in_xrt(text) == (step, frame)


def test_a_crash_outside_xrts_objects_or_without_a_crash_names_nothing() -> None:
    assert crashed_in_xrt(CRASH.replace("Segmentation fault (core dumped)", "")) is None
    # XRT's core below its API (xrt_core::) is passed over: the innermost API frame decides
    inner = (
        "Segmentation fault\n#0  0x1 in xrt_core::bo_cache::get (this=...)\n"
        "#1  0x2 in xrt::bo_impl::bo_impl (this=...)\n#2  0x3 in xrt::run::set_arg (i=1)\n"
    )
    assert crashed_in_xrt(inner) == ("bo", "xrt::bo_impl::bo_impl")
    other = "Thread 1 received signal SIGSEGV, Segmentation fault.\n#0  0x1 in main (argc=1)\n"
    assert crashed_in_xrt(other) is None
    assert crashed_in_xrt("#0  xrt::ip::ip (this=...)\nSegmentation fault") is None


def test_a_crash_in_a_kernels_run_is_a_command_failure() -> None:
    verdict = judge(CRASH)
    assert verdict.status == FAILURE
    assert [d.code for d in verdict.diagnoses] == ["xrt-run-crashed"]


def test_a_traceback_ending_in_mlir_aies_compiler_is_the_designs_build() -> None:
    jit = (
        "Traceback (most recent call last):\n"
        '  File "/w/run.py", line 3, in <module>\n    design.compile()\n'
        '  File "/venv/lib/python3.12/site-packages/aie/utils/compile/utils.py", line 329, in '
        "_rename\n    raise RuntimeError(msg)\n"
        "RuntimeError: Cannot find symtab/strtab in AIE ELF: /home/u/.npu/cache/k.o\n"
    )
    assert python_compile_step(jit) == "utils.py:329"
    windows = jit.replace("/venv/lib/python3.12/site-packages/aie/", "C:\\env\\Lib\\aie\\")
    assert python_compile_step(windows.replace("utils/compile/", "utils\\compile\\")) is not None
    # the program's own file, or XRT's, is not the compiler
    assert python_compile_step(jit.replace("aie/utils/compile/", "aie/utils/xrt/")) is None
    assert python_compile_step("no traceback") is None
    verdict = judge(jit)
    assert [d.code for d in verdict.diagnoses] == ["build-compile-raised"]


SPAWN = (
    "Traceback (most recent call last):\n"
    '  File "/venv/lib/python3.13/site-packages/aie/compiler/aiecc/main.py", line 900, in run\n'
    "    proc = await asyncio.create_subprocess_exec(*cmd)\n"
    '  File "/usr/lib/python3.13/subprocess.py", line 1969, in _execute_child\n'
    "    raise child_exception_type(errno_num, err_msg, err_filename)\n"
    "FileNotFoundError: [Errno 2] No such file or directory: '/opt/tools/bin/xclbinutil'\n"
)


def test_a_program_subprocess_could_not_start_is_named() -> None:
    assert python_missing_program(SPAWN) == "xclbinutil"
    # a file the program itself opened is no program it started
    opened = SPAWN.replace("/usr/lib/python3.13/subprocess.py", "/w/run.py")
    assert python_missing_program(opened) is None
    assert [d.code for d in judge(SPAWN).diagnoses] == ["build-command-not-found"]
    # the NPU stack's own tool missing is XRT not set up, not a build's toolchain
    xrt = SPAWN.replace("/opt/tools/bin/xclbinutil", "xrt-smi")
    assert python_missing_program(xrt) == "xrt-smi"
    assert "build-command-not-found" not in [d.code for d in judge(xrt).diagnoses]


def test_an_assertion_of_the_program_itself_is_its_own_check() -> None:
    own = (
        "Traceback (most recent call last):\n"
        '  File "C:\\w\\tests\\test_dfl_kernel.py", line 540, in main\n'
        "    hardware(args, directory)\n"
        "    ~~~~~~~~^^^^^^^^^^^^^^^^^\n"
        '  File "C:\\w\\tests\\test_dfl_kernel.py", line 448, in hardware\n'
        '    raise AssertionError(f"DFL output failed parity at dispatch {index}")\n'
        "AssertionError: DFL output failed parity at dispatch 0\n"
    )
    assert python_own_assertion(own) == (
        "test_dfl_kernel.py:448: AssertionError DFL output failed parity at dispatch 0"
    )
    verdict = judge("[XRT] loaded\n" + own)
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].code == "npu-run-check-failed"
    # the script that was run asserting, a bare assert (no message)
    script = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/run.py", line 9, in <module>\n'
        "    check(out)\n"
        '  File "/home/u/run.py", line 4, in check\n'
        "    assert np.allclose(out, ref)\n"
        "AssertionError\n"
    )
    assert python_own_assertion(script) == "run.py:4: AssertionError"


def test_an_assertion_in_a_notebook_cell_is_the_programs_own_check() -> None:
    cell = (
        "---------------------------------------------------------------------------\n"
        "AssertionError                            Traceback (most recent call last)\n"
        "Cell In[1], line 286\n"
        '    285 print("difference::", torch.max(torch.abs(out - gold)))\n'
        "--> 286 assert(np.allclose(out, gold, rtol=0, atol=2.))\n"
        "\n"
        "AssertionError: \n"
    )
    assert python_own_assertion(cell) == "Cell In[1], line 286: AssertionError"
    old = cell.replace("Cell In[1], line 286", "<ipython-input-3-5f2c1e0a9b7d> in <module>")
    assert python_own_assertion(old) == "<ipython-input-3-5f2c1e0a9b7d> in <module>: AssertionError"
    kernel = cell.replace(
        "Cell In[1], line 286", "File /tmp/ipykernel_9248/271668325.py:286, in check(out)"
    )
    assert python_own_assertion(kernel) == "271668325.py:286: AssertionError"
    # the innermost header a library's file: that library's own check
    library = cell.replace(
        "--> 286 assert",
        "--> 286 check(out)\n\nFile ~/venv/lib/python3.10/site-packages/allo/build.py:769, "
        "in check(out)\n    768 def check(out):\n--> 769     assert",
    )
    assert python_own_assertion(library) is None
    # an AssertionError long after the traceback's context was raised elsewhere
    assert (
        python_own_assertion(cell.replace("\nAssertionError: ", "\n" * 30 + "AssertionError: "))
        is None
    )
    verdict = judge("AIE output::: tensor([5, 3])\n" + cell)
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].code == "npu-run-check-failed"


def test_an_assertion_inside_a_library_is_not_the_programs_check() -> None:
    library = (
        "Traceback (most recent call last):\n"
        '  File "gemm.py", line 163, in <module>\n'
        "    build(M, N, K)\n"
        '  File "allo/backend/aie/__init__.py", line 769, in build\n'
        "    logical_node_num <= physical_node_num\n"
        "AssertionError: Unresolvable mapping from 97 logical nodes to 16 physical nodes\n"
    )
    assert python_own_assertion(library) is None
    # another exception, or an AssertionError far below the traceback, is no assertion
    assert python_own_assertion(library.replace("AssertionError", "ValueError")) is None
    late = library.replace("allo/backend/aie/__init__.py", "gemm.py").replace(
        "AssertionError:", "ValueError:"
    )
    assert python_own_assertion(late + "\n\n\n\nAssertionError: later\n") is None


def test_a_build_script_whose_checked_step_failed_stopped_the_build() -> None:
    # ONNX Runtime's tools/ci_build/build.py running its tests, the paste cut in subprocess
    built = (
        "Traceback (most recent call last):\n"
        '  File "C:\\SRC\\onnxruntime\\tools\\ci_build\\build.py", line 2918, in <module>\n'
        "    sys.exit(main())\n"
        '  File "C:\\SRC\\onnxruntime\\tools\\python\\util\\run.py", line 49, in run\n'
        "    completed_process = subprocess.run(\n"
        '  File "C:\\Dev\\miniconda3\\Lib\\subprocess.py", line 571, in run\n'
    )
    assert python_build_step(built) == "build.py:2918"
    setup = built.replace("ci_build\\build.py", "setup.py").replace("in run\n", "in check_call\n")
    assert python_build_step(setup) == "setup.py:2918"
    # a program that is not a build driver, or a subprocess that only started, is not one
    assert python_build_step(built.replace("build.py", "serve.py")) is None
    assert python_build_step(built.replace("in run\n", "in _execute_child\n")) is None
    assert python_build_step("no traceback") is None
    # nor a step the user stopped with Ctrl-C
    assert python_build_step(built + "    self.wait()\nKeyboardInterrupt\n") is None
    assert [d.code for d in judge(built).diagnoses] == ["build-script-step-failed"]
