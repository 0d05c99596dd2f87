"""What a recipe tells the audit: rule waivers, extra admitted paths, waived scripts.

The audit's verdict is built from the stack's layout (debs/admit.py) and the generators it
knows (debs/generators.py); a recipe may add to both, each addition reviewed and justified:
`audit.waivers` (a rule for one package), `audit.admit` (a payload path pattern) and
`audit.scripts` (one maintainer script by its sha256). A Policy is those three plus the
names of the stack's packages (the recipe's install order and the packages it downloads),
which are the only names a package may replace, break, conflict with or provide.
Pure: a Recipe in, a Policy out.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdnaforge.config.recipe import Recipe
from xdnaforge.debs.admit import Entry


@dataclass(frozen=True, slots=True)
class Waiver:
    rule: str
    package: str
    justification: str


@dataclass(frozen=True, slots=True)
class ScriptWaiver:
    package: str
    script: str
    sha256: str
    justification: str


@dataclass(frozen=True, slots=True)
class Policy:
    waivers: tuple[Waiver, ...] = ()
    admitted: tuple[Entry, ...] = ()
    scripts: tuple[ScriptWaiver, ...] = ()
    stack: tuple[str, ...] = ()  # the recipe's own package names

    def waiver(self, rule: str, package: str) -> Waiver | None:
        return next((w for w in self.waivers if w.rule == rule and w.package == package), None)

    def script_waiver(self, package: str, script: str, sha256: str) -> ScriptWaiver | None:
        return next(
            (
                w
                for w in self.scripts
                if (w.package, w.script, w.sha256) == (package, script, sha256)
            ),
            None,
        )


def from_recipe(recipe: Recipe) -> Policy:
    """The recipe's audit section as the audit reads it."""
    stack = [*recipe.install_order]
    if recipe.distro is not None:
        stack += [p.package for p in recipe.distro.packages]
    return Policy(
        waivers=tuple(
            Waiver(rule=w.name, package=w.package or "", justification=w.justification)
            for w in recipe.waivers
        ),
        admitted=tuple(Entry(a.path, "recipe", a.reason, a.package) for a in recipe.admit),
        scripts=tuple(
            ScriptWaiver(w.package, w.script, w.sha256, w.justification)
            for w in recipe.script_waivers
        ),
        stack=tuple(dict.fromkeys(stack)),
    )
