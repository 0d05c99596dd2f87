"""Modules imported at their first use, so that a doit command imports only what it runs.

Every doit command loads dodo.py, whose tasks name every action: importing every stage
module for that (GitPython, Jinja2, the gates ...) was most of each command's start-up,
paid before doit ran anything. Imports only; no other behaviour.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def module(name: str) -> ModuleType:
    """`name`, executed when one of its attributes is first read (importlib's LazyLoader).

    Declare the real import under `if TYPE_CHECKING:` beside it, so that mypy checks the uses.
    The first use must not race with another thread's (LazyLoader is not thread-safe there
    before Python 3.12); doit runs actions on its main thread.
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no module named {name!r}", name=name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    return loaded
