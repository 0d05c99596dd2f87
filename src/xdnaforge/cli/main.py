"""`xdnaforge`: the doit tasks of dodo.py, from any directory, through doit's own API.

The project directory (recipes/, matrices/, patches/, site.yaml, build/, artifacts/) is `-C
DIR`, else XDNAFORGE_PROJECT_DIR, else the current directory when it holds recipes/, else the
checkout or the installed copy dodo.py came with. dodo.py is loaded as a module and run with
DoitMain(ModuleTaskLoader(...)): the same tasks, the same engine as `doit` in the checkout. Only
doit's verbs that apply here are offered (run, list, help); the others refuse in one line.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from doit.cmd_base import ModuleTaskLoader
from doit.cmd_help import Help
from doit.cmd_list import List
from doit.cmd_run import Run
from doit.doit_cmd import DoitMain
from doit.exceptions import InvalidDodoFile

import xdnaforge
from xdnaforge.actions.command import PROGRAM_ENV
from xdnaforge.cli import completion, manpage, tasklist
from xdnaforge.cli.refused import refusal
from xdnaforge.errors import EXIT_CONFIG

PROJECT_ENV = "XDNAFORGE_PROJECT_DIR"
PROGRAM = "xdnaforge"


class Main(DoitMain):  # type: ignore[misc]
    """doit's main with xdnaforge's name and only the verbs that apply."""

    BIN_NAME = PROGRAM
    DOIT_CMDS = (Help, Run, List)


def checkout_dodo() -> Path | None:
    """dodo.py of the checkout this package runs from (an editable install), or the copy
    installed beside the package's data (a wheel: share/xdnaforge)."""
    here = Path(xdnaforge.__file__).resolve().parent
    for candidate in (here.parent.parent / "dodo.py", Path(sys.prefix) / "share/xdnaforge/dodo.py"):
        if candidate.is_file():
            return candidate
    return None


def project_dir(given: str | None, environ: dict[str, str], cwd: Path, dodo: Path) -> Path:
    """-C DIR, XDNAFORGE_PROJECT_DIR, the current directory if it is a project, dodo's own."""
    if given:
        return Path(given).expanduser().resolve()
    if environ.get(PROJECT_ENV):
        return Path(environ[PROJECT_ENV]).expanduser().resolve()
    if (cwd / "recipes").is_dir():
        return cwd
    return dodo.parent


def split_directory(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """`-C DIR` / `--directory DIR` / `--directory=DIR` before the task, and the rest."""
    rest = list(argv)
    given = None
    while rest:
        if rest[0] in ("-C", "--directory") and len(rest) > 1:
            given, rest = rest[1], rest[2:]
        elif rest[0].startswith("--directory="):
            given, rest = rest[0].split("=", 1)[1], rest[1:]
        elif rest[0].startswith("-C") and len(rest[0]) > 2:
            given, rest = rest[0][2:], rest[1:]
        else:
            break
    return given, rest


HELP_ONLY_ENV = "XDNAFORGE_HELP_ONLY"


# doit's own options that take a value, before the command (`doit -f dodo.py help build`)
_DOIT_VALUED = frozenset({"-f", "--file", "-d", "--dir", "--db-file", "--backend"})


def asks_help(args: Sequence[str], *, bare_is_help: bool = True) -> bool:
    """Whether the command line only asks for help (the overview, a task's page, the man
    page, completion): what a broken configuration does not stop. A command line of no
    command is the overview here, and doit's default task under doit (bare_is_help=False)."""
    if any(arg in ("--help", "-h") for arg in args):
        return True
    words = [
        arg
        for at, arg in enumerate(args)
        if not arg.startswith("-") and (at == 0 or args[at - 1] not in _DOIT_VALUED)
    ]
    if not words:
        return bare_is_help
    return words[0] in ("help", "man", "completion", "__complete")


def load_dodo(path: Path) -> ModuleType:
    """dodo.py as a module (its import loads and validates the project)."""
    spec = importlib.util.spec_from_file_location("dodo", path)
    if spec is None or spec.loader is None:
        raise InvalidDodoFile(f"{path}: cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    sys.modules["dodo"] = module
    spec.loader.exec_module(module)
    return module


def overview(dodo: ModuleType) -> str:
    found = tasklist.commands(dodo)
    width = max(len(c.name) for c in found)
    lines = [
        f"{PROGRAM} {xdnaforge.__version__}: build, audit, install and validate AMD NPU "
        "userspace from pinned recipes",
        "",
        f"usage: {PROGRAM} [-C PROJECT_DIR] TASK [options]   ({PROGRAM} TASK --help for one)",
        "",
        "tasks:",
        *(f"  {c.name:<{width}}  {c.doc}" for c in found),
        "",
        "also: list (the tasks, as doit lists them), completion bash|zsh, man",
        "exit codes: 0 done or a preview, 1 a stage failed, 2 a bug, 3 bad configuration or an "
        "unknown target, 130/143 stopped (README.md, 'Exit codes')",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    given, args = split_directory(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--version"]:
        print(f"{PROGRAM} {xdnaforge.__version__}")
        return 0
    refused = refusal(args[0], PROGRAM) if args else None
    if refused:
        print(refused, file=sys.stderr)
        return EXIT_CONFIG
    dodo_path = checkout_dodo()
    if dodo_path is None:
        print(f"{PROGRAM}: dodo.py was not installed with the package; reinstall", file=sys.stderr)
        return EXIT_CONFIG
    root = project_dir(given, dict(os.environ), Path.cwd(), dodo_path)
    if not (root / "recipes").is_dir():
        print(
            f"{PROGRAM}: {root} is not an xdnaforge project (no recipes/ in it); give one with "
            f"-C DIR or {PROJECT_ENV}",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    os.environ[PROJECT_ENV] = str(root)
    os.environ[PROGRAM_ENV] = PROGRAM  # the help pages name this command
    try:
        dodo = load_dodo(dodo_path)
    except InvalidDodoFile as error:
        print(str(error), file=sys.stderr)  # the configuration's problems, each with its line
        if not asks_help(args):
            return EXIT_CONFIG
        # help is read from the tasks, not the configuration: shown all the same
        os.environ[HELP_ONLY_ENV] = "1"
        try:
            dodo = load_dodo(dodo_path)
        finally:
            del os.environ[HELP_ONLY_ENV]
    if not args or args[0] in ("--help", "-h"):
        print(overview(dodo), end="")
        return 0
    if args[0] == "help" and len(args) > 1:
        args = [args[1], "--help"]
    if args[0] == "completion":
        shell = args[1] if len(args) > 1 else "bash"
        print(completion.script(shell, dodo), end="")
        return 0
    if args[0] == "man":
        print(manpage.render(dodo), end="")
        return 0
    if args[0] == "__complete":  # what the completion scripts ask for
        print("\n".join(completion.words(args[1:], dodo)))
        return 0
    return int(Main(ModuleTaskLoader(dodo)).run(args))
