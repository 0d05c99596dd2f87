"""The audit that admits packages to dpkg, run again by the installing process on the exact
private copies it hands to dpkg, with the recipe's policy (audit.json, which whoever builds
can write, admits nothing); a set with maintainer scripts is also installed into a
throw-away root first (install/observe.py), and what its scripts did there is judged as the
audit judges it (OBSERVE-*), before dpkg runs them as root.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from xdnaforge.config.recipe import Recipe
from xdnaforge.debs.judge import judge_all, observed, read_all
from xdnaforge.debs.policy import from_recipe
from xdnaforge.debs.verdicts import format_verdicts, shown
from xdnaforge.errors import StageFailed
from xdnaforge.install.observe import observe

OBSERVE_TIMEOUT = 300.0


def admit(recipe: Recipe, target: str, copies: Sequence[Path], scratch: Path) -> None:
    """Refuse (one line, the blocks shown above it) unless every copy passes the audit and,
    when the set has maintainer scripts, what they did in a throw-away root. Where that
    root cannot be made (no bubblewrap, no user namespaces) it is said, and the audit alone
    admits the scripts (SCRIPT-004: a known generator's output, or one the recipe waives by
    its sha256)."""
    policy = from_recipe(recipe)
    debs, errors = read_all(copies)
    verdicts = judge_all(debs, policy)
    scripted = [shown(d.package) for d in debs if d.scripts]
    if scripted and not errors and all(v.verdict == "pass" for v in verdicts):
        observation = observe(copies, scratch=scratch, timeout=OBSERVE_TIMEOUT)
        verdicts = observed(verdicts, debs, observation, policy)
        if observation.status != "observed":
            print(
                f"note: the maintainer scripts of {', '.join(scripted)} were not observed "
                f"({shown(observation.reason)}); the audit alone admitted them"
            )
    blocked = [shown(v.package) for v in verdicts if v.verdict != "pass"]
    if errors or blocked:
        print(format_verdicts(verdicts, errors))
        what = ", ".join(blocked + [Path(file).name for file, _ in errors])
        raise StageFailed(
            f"not installing: the copies dpkg would install fail the audit ({what}), "
            "whatever audit.json says",
            hint="audit.json is written by whoever can write artifacts/ and admits nothing; "
            f"rebuild, read `doit audit --target {target}`, and keep artifacts/ "
            "writable only by you",
        )
    print(f"audit of the copies to install: {len(verdicts)} package(s), no kernel payload")
