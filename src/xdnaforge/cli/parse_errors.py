"""doit's command-line parse errors in one plain line: doit says `option --tagret not
recognized (parsing options: [CmdOption({...}), ...]). Got: [...]` and `Error parsing parameter
'timeout' <class 'int'>`, Python reprs a user should never see. Pure: doit's text in, ours out.
"""

from __future__ import annotations

import re

KINDS = {"int": "a whole number", "float": "a number", "bool": "yes or no", "str": "a text"}


def plain(message: str, task: str | None, program: str) -> str:
    """The error said for a person; the text unchanged when it is not one of doit's reprs."""
    more = f" (`{program} {task} --help` lists them)" if task else ""
    unknown = re.search(r"option (-{1,2}[\w-]+) (not recognized|not a unique prefix)", message)
    if unknown:
        known = re.findall(r"'long':'([\w-]+)'", message)
        listed = ", ".join(f"--{name}" for name in known)
        what = f"{program} {task}" if task else program
        return f"{what}: unknown option {unknown.group(1)}; its options: {listed}{more}"
    needs = re.search(r"option (-{1,2}[\w-]+) requires argument", message)
    if needs:
        return f"{program} {task or ''}: option {needs.group(1)} needs a value{more}".replace(
            "  ", " "
        )
    typed = re.search(r"Error parsing parameter '([\w-]+)' <class '(\w+)'>\.\n(.*)", message)
    if typed:
        name, kind, why = typed.group(1).replace("_", "-"), typed.group(2), typed.group(3)
        value = re.search(r"'([^']*)'\s*$", why)
        got = f", got {value.group(1)!r}" if value else ""
        return f"option --{name} takes {KINDS.get(kind, kind)}{got}"
    return message
