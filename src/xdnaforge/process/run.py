"""The only module that starts processes: argv lists, a rebuilt environment, logs, timeouts.

Every command is echoed as `+ argv` to the log (and to stderr when asked), runs with stdin from
/dev/null in its own process group, and on expiry of its timeout, on Ctrl-C or SIGTERM is
terminated, then killed, with its whole tree, so a hung NPU tool or a build never outlives its
stage. Build steps run in a PID namespace tied to xdnaforge (process/containment.py), so not
even a SIGKILL of xdnaforge leaves their processes behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from xdnaforge.errors import Interrupted, StageFailed, ToolNotFound
from xdnaforge.process import containment, progress
from xdnaforge.process.logfile import open_log
from xdnaforge.process.sandbox import PATH_INSIDE

# The child environment is rebuilt from this allowlist (mkosi's approach): a user's
# LD_LIBRARY_PATH, PYTHONPATH or GIT_DIR must not leak into builds and tools.
ALLOWED_ENV = (
    "PATH",
    "HOME",
    "TMPDIR",
    "TERM",
    "USER",
    "LOGNAME",
    # network settings a fetch needs behind a proxy or a private CA
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)
# names a user (or a test harness with fake tools) adds to the allowlist, space-separated
PASS_ENV = "XDNAFORGE_PASS_ENV"
BASE_ENV = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
TAIL_LINES = 30
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True, slots=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    duration: float


class CommandFailed(StageFailed):
    """A command exited with a status not in ok_codes, died of a signal or timed out."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        returncode: int | None,
        output: str,
        log_file: Path | None,
        reason: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.argv = tuple(argv)
        self.returncode = returncode
        self.output = output
        if reason is None:
            if returncode is not None and returncode < 0:
                reason = f"killed by signal {signal.Signals(-returncode).name}"
            else:
                reason = f"exit status {returncode}"
        tail = "\n".join(output.rstrip().splitlines()[-TAIL_LINES:])
        text = f"command failed ({reason}): {shlex.join(self.argv)}"
        if tail:
            text += "\n" + "\n".join(f"  | {line}" for line in tail.splitlines())
        if log_file is not None:
            text += f"\nfull log: {log_file}"
        super().__init__(text, hint=hint)


def child_environment(extra: Mapping[str, str], inherit: Mapping[str, str]) -> dict[str, str]:
    allowed = (*ALLOWED_ENV, *inherit.get(PASS_ENV, "").split())
    env = {key: inherit[key] for key in allowed if key in inherit}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(BASE_ENV)
    env.update(extra)
    return env


def run(
    argv: Sequence[str | os.PathLike[str]],
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    log_file: Path | None = None,
    ok_codes: Collection[int] = (0,),
    input_text: str | None = None,
    wrapper: Sequence[str] = (),
) -> CommandResult:
    """Run argv (never through a shell); raise CommandFailed unless its status is in ok_codes.

    `wrapper` (process/sandbox.py) runs argv inside a build environment: `bwrap ... --` or
    `podman run ...`; it is resolved on the host's PATH, argv inside the environment.
    """
    args = [*wrapper, *(os.fspath(a) for a in argv)]
    child_env = child_environment(env or {}, os.environ)
    if wrapper and "PATH" not in (env or {}):
        child_env["PATH"] = PATH_INSIDE  # argv is looked up inside the environment
    program = _program(args[0], child_env.get("PATH"), bool(wrapper))
    started = time.monotonic()
    log: TextIO | None = None
    if log_file is not None:
        log = open_log(log_file)
        log.write(f"+ {shlex.join(args)}  (cwd {cwd})\n")
        log.flush()
    try:
        process = subprocess.Popen(
            [program, *args[1:]],
            cwd=cwd,
            env=child_env,
            stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,  # own process group: a timeout kills the whole tree
        )
        try:
            # a command taking more than a few seconds says so (process/progress.py)
            with progress.ticking(args):
                stdout, stderr = process.communicate(input_text, timeout=timeout)
        except (KeyboardInterrupt, Interrupted) as stop:
            raise _interrupted(stop, args, _stop(process)) from None
        except subprocess.TimeoutExpired:
            how = _stop(process)
            stdout, stderr = process.communicate()
            _log(log, stdout, stderr)
            raise CommandFailed(
                args,
                returncode=None,
                output=stdout + stderr,
                log_file=log_file,
                reason=f"no answer within {timeout:g} s; {how}",
                hint="the tool may hang on this device; see the log",
            ) from None
        _log(log, stdout, stderr)
    finally:
        if log is not None:
            log.close()
    result = CommandResult(
        argv=tuple(args),
        returncode=process.returncode,
        stdout=stdout,
        stderr=stderr,
        duration=time.monotonic() - started,
    )
    if process.returncode not in ok_codes:
        raise CommandFailed(
            args, returncode=process.returncode, output=stdout + stderr, log_file=log_file
        )
    return result


def _program(name: str, path: str | None, wrapped: bool) -> str:
    """The executable to start: a wrapper (bwrap, podman) is looked up on the host's PATH,
    since the child's PATH may be the one inside the environment."""
    if "/" in name:
        return name
    search = os.pathsep.join(p for p in (path, os.environ.get("PATH")) if p) if wrapped else path
    program = shutil.which(name, path=search)
    if program is None:
        hint = (
            f"install {name} (Debian/Ubuntu: apt-get install bubblewrap for bwrap)"
            if wrapped
            else f"install {name} or put it on PATH"
        )
        raise ToolNotFound(f"{name} not found on PATH ({search})", hint=hint)
    return program


def _die_with_parent() -> None:
    """In the child: get SIGKILL when xdnaforge dies, even by SIGKILL (Linux prctl)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass  # not Linux: the timeout still bounds the child


def keeper_prefix() -> tuple[str, ...]:
    """The argv prefix of the step keeper (process/keeper.py): a subreaper that ends the
    step's tree when xdnaforge dies. Isolated mode (-I): the step's environment is not the
    keeper's business; the package is found where this one was imported from."""
    source = str(Path(__file__).resolve().parents[2])  # src/, above xdnaforge/process/
    code = (
        f"import sys; sys.path.insert(0, {source!r}); "
        "from xdnaforge.process.keeper import main; sys.exit(main(sys.argv[1:]))"
    )
    return (sys.executable, "-I", "-c", code, str(os.getpid()), "--")


def bwrap_holds_steps() -> bool:
    """Whether host steps run in bubblewrap's PID namespace (else under the keeper)."""
    return pid_namespace_prefix() == containment.PID_NAMESPACE_PREFIX


@functools.cache
def pid_namespace_prefix() -> tuple[str, ...]:
    """The argv prefix that holds a host step's tree (process/containment.py); where bwrap is
    missing or a user namespace is refused, the keeper (a subreaper with a parent-death signal,
    which needs nothing but Linux); that fallback is said once per run."""
    probe = [*containment.PID_NAMESPACE_PREFIX, "true"]
    why = None
    if shutil.which(probe[0]) is None:
        why = "bwrap is not installed (Debian/Ubuntu package bubblewrap)"
    else:
        done = subprocess.run(
            probe, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, check=False
        )
        if done.returncode != 0:
            why = (
                f"bwrap cannot make a PID namespace here ({done.stderr.strip() or done.returncode})"
            )
    if why is None:
        return containment.PID_NAMESPACE_PREFIX
    print(
        f"note: {why}; build steps run under a keeper process that ends their whole tree "
        "when xdnaforge dies",
        file=sys.stderr,
    )
    return keeper_prefix()


def run_streaming(
    argv: Sequence[str | os.PathLike[str]],
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str],
    log_file: Path,
    on_line: Callable[[str], None] = lambda _: None,
    contain: bool = True,
    grace: float = containment.GRACE_S,
    wrapper: Sequence[str] = (),
) -> CommandResult:
    """Run a long command (a build): output goes line by line to the log and to `on_line`.

    The environment is exactly `env` (the caller builds it: builds get a private HOME).
    Nothing is kept in memory but the last lines; stdout and stderr are merged in order.
    `contain` runs it in a PID namespace tied to xdnaforge; with a `wrapper` (an
    environment's bwrap or container engine, see `run`) argv runs inside the environment,
    whose wrapper has its own PID namespace, so nothing is wrapped twice.
    Ctrl-C or SIGTERM stops the whole tree (SIGTERM, `grace` seconds, SIGKILL) and raises
    Interrupted.
    """
    args = [*wrapper, *(os.fspath(a) for a in argv)]
    program = _program(args[0], env.get("PATH"), bool(wrapper))
    prefix = list(pid_namespace_prefix()) if contain and not wrapper else []
    started = time.monotonic()
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    # line-buffered: whoever tails the log (a user, the progress line) sees each line at once
    with open_log(log_file, buffering=1) as log:
        log.write(f"+ {shlex.join(args)}  (cwd {cwd})\n")
        process = subprocess.Popen(
            [*prefix, program, *args[1:]],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            # own session: the terminal's Ctrl-C reaches xdnaforge only, which stops the tree
            # in order (SIGTERM first, so make deletes the targets it was writing)
            start_new_session=True,
            preexec_fn=_die_with_parent,  # only a prctl call: safe between fork and exec
        )
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            _stop_tree(process, grace)

        timer = threading.Timer(timeout, expire)
        timer.start()
        try:
            assert process.stdout is not None
            for line in process.stdout:
                log.write(line)
                tail.append(line.rstrip("\n"))
                on_line(line.rstrip("\n"))
            process.wait()
        except (KeyboardInterrupt, Interrupted) as stop:
            timer.cancel()
            how = _stop_tree(process, grace)
            log.write(f"xdnaforge: interrupted; {how}\n")
            # the step's own command, not the wrapper that runs it inside an environment
            raise _interrupted(stop, args[len(wrapper) :], how) from None
        except OSError as error:
            # a full disk while writing the log: the step must not run on unseen
            timer.cancel()
            _stop_tree(process, grace)
            if error.filename is None:
                raise OSError(error.errno, error.strerror, str(log_file)) from None
            raise
        except BaseException:
            timer.cancel()
            _stop_tree(process, grace)
            raise
        finally:
            timer.cancel()
    output = "\n".join(tail)
    if expired.is_set():
        raise CommandFailed(
            args,
            returncode=None,
            output=output,
            log_file=log_file,
            reason=f"still running after {timeout:g} s; stopped",
        )
    if process.returncode != 0:
        raise CommandFailed(args, returncode=process.returncode, output=output, log_file=log_file)
    return CommandResult(
        argv=tuple(args),
        returncode=0,
        stdout=output,
        stderr="",
        duration=time.monotonic() - started,
    )


def _interrupted(stop: BaseException, argv: Sequence[str], how: str) -> Interrupted:
    signum = stop.signum if isinstance(stop, Interrupted) else signal.SIGINT
    return Interrupted(signum, f"{shlex.join(argv[:3])}{' ...' if len(argv) > 3 else ''}: {how}")


def _stop_tree(process: subprocess.Popen[str], grace: float) -> str:
    """Stop the process and every descendant: SIGTERM, `grace` seconds, SIGKILL.

    Wrappers (bwrap) are left to the end: killing one ends its PID namespace with SIGKILL,
    so they go when their command has gone, or with the SIGKILL of the stragglers.
    """
    tree = [p for p in containment.descendants(process.pid) if p.name not in containment.WRAPPERS]
    own = containment.read_process(process.pid)
    wrapped = own is not None and own.name in containment.WRAPPERS
    pids = [p.pid for p in tree] + ([] if wrapped else [process.pid])
    if not wrapped:
        # the group also holds orphans that are no longer below the process
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGTERM)
    how = containment.stop(pids, grace=grace) if pids else "it had already exited"
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            # the wrapper (or a group member): its namespace and what is left in it go too
            os.kill(process.pid, signal.SIGKILL)
            if not wrapped:
                os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return how


def _log(log: TextIO | None, stdout: str, stderr: str) -> None:
    if log is not None:
        log.write(stdout)
        log.write(stderr)


def _stop(process: subprocess.Popen[str]) -> str:
    """Terminate the process group, then kill it; say which it took."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return "it had already exited"
    try:
        process.wait(timeout=5)
        return "terminated (SIGTERM)"
    except (KeyboardInterrupt, Interrupted):
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return "killed (SIGKILL) at the second interruption"
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return "killed (SIGKILL) after SIGTERM was ignored for 5 s"
