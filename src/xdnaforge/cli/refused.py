"""doit's verbs that do not apply to xdnaforge's tasks, each with what to use instead: the one
line `xdnaforge VERB` and `doit VERB` (cli/verbs.py) refuse with. Pure."""

from __future__ import annotations

# doit's verbs with no use here, and what to use instead (one line each)
REFUSED = {
    "dumpdb": "build/.doit.db is JSON (read it directly); the records are in artifacts/<target>/",
    "info": "`{program} TASK --help` shows a task's options; `{program} plan` its stages",
    "strace": "build steps run in a sandbox; their output is in build/<target>/logs/",
    "forget": "a stage reruns when its inputs change (`{program} plan` says which)",
    "ignore": "a stage reruns when its inputs change (`{program} plan` says which)",
    "reset-dep": "a stage's record holds its fingerprint: `{program} plan` shows it",
    "clean": "delete build/<target> (and artifacts/<target>) to start a target afresh",
    "tabcompletion": "`{program} completion bash|zsh` prints the completion script",
    "auto": "rerun the command: only what a change reaches is rebuilt",
}


def refusal(verb: str, program: str) -> str | None:
    """The line refusing `verb`, or None when the verb is not refused."""
    if verb not in REFUSED:
        return None
    return f"{program} {verb}: not used by xdnaforge; {REFUSED[verb].format(program=program)}"
