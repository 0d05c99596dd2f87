"""Shell completion for `xdnaforge` (bash, zsh): task names and their options from dodo.py's
creators, target names from the project's recipes at the moment of completing (the scripts
ask `xdnaforge __complete targets`); the shipped files under completions/ are this output."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType

from xdnaforge.cli import tasklist
from xdnaforge.errors import UsageError

EXTRA = ("list", "help", "completion", "man")


def _options(command: tasklist.Command) -> list[str]:
    found = []
    for param in command.params:
        if param["name"] == "help":
            continue  # said last, for every task
        found.append(f"--{param.get('long') or param['name']}")
        if param.get("short"):
            found.append(f"-{param['short']}")
    return [*found, "--help"]


def words(request: Sequence[str], dodo: ModuleType) -> list[str]:
    """`targets`, `tasks` or `options TASK`: the words completion offers."""
    kind = request[0] if request else "tasks"
    if kind == "targets":
        return sorted(dodo.PROJECT.recipes)
    commands = tasklist.commands(dodo)
    if kind == "options" and len(request) > 1:
        return next((_options(c) for c in commands if c.name == request[1]), [])
    return [c.name for c in commands] + list(EXTRA)


BASH = """\
# bash completion for xdnaforge (generated: xdnaforge completion bash)
_xdnaforge() {
    local cur prev task i
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    task=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            -C|--directory) ((i++)) ;;
            -*) ;;
            *) task="${COMP_WORDS[i]}"; break ;;
        esac
    done
    case "$prev" in
        -t|--target)
            COMPREPLY=($(compgen -W "$(xdnaforge __complete targets 2>/dev/null)" -- "$cur"))
            return ;;
        -C|--directory) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    esac
    if [[ -z "$task" ]]; then
        COMPREPLY=($(compgen -W "@TASKS@" -- "$cur"))
    elif [[ "$task" == completion ]]; then
        COMPREPLY=($(compgen -W "bash zsh" -- "$cur"))
    else
        case "$task" in
@OPTIONS@
        esac
    fi
}
complete -o default -F _xdnaforge xdnaforge
"""

ZSH = """\
#compdef xdnaforge
# zsh completion for xdnaforge (generated: xdnaforge completion zsh)
_xdnaforge() {
    local -a tasks
    tasks=(
@DESCRIBED@
    )
    if (( CURRENT == 2 )); then
        _describe 'task' tasks
        return
    fi
    case "${words[CURRENT-1]}" in
        -t|--target) compadd -- ${(f)"$(xdnaforge __complete targets 2>/dev/null)"}; return ;;
        -C|--directory) _files -/; return ;;
    esac
    case "${words[2]}" in
@ZOPTIONS@
    esac
}
_xdnaforge "$@"
"""


def script(shell: str, dodo: ModuleType) -> str:
    commands = tasklist.commands(dodo)
    if shell == "bash":
        reply = 'COMPREPLY=($(compgen -W "{}" -- "$cur")) ;;'
        options = "\n".join(
            f"            {c.name}) {reply.format(' '.join(_options(c)))}" for c in commands
        )
        names = " ".join([c.name for c in commands] + list(EXTRA))
        return BASH.replace("@TASKS@", names).replace("@OPTIONS@", options)
    if shell == "zsh":
        described = "\n".join(
            "        '{}:{}'".format(c.name, c.doc.replace("'", "").replace(":", "\\:"))
            for c in commands
        )
        options = "\n".join(
            f"        {c.name}) compadd -- {' '.join(_options(c))} ;;" for c in commands
        )
        return ZSH.replace("@DESCRIBED@", described).replace("@ZOPTIONS@", options)
    raise UsageError(f"completion for {shell!r}: bash or zsh")
