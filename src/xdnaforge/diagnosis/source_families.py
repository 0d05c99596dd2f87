"""The family of an upstream message from where it is thrown: the reviewed table
data/source_families.yaml (repository, path glob, optional function and template patterns
-> family), read once. Pure.

scripts/gen_upstream_messages.py stamps each catalogue template with `family_of(...)` (and
`caller` where the rule says the message is a caller passing up its callee's failure), so a
log line that prints a template gets that family without any log having shown it; a test
holds the data file to the table. The first rule that matches decides.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

TABLE = Path(__file__).resolve().parent / "data" / "source_families.yaml"


@dataclass(frozen=True, slots=True)
class Rule:
    repo: str  # owner/name, or "*"
    path: str  # fnmatch glob on the repository path
    family: str
    function: re.Pattern[str] | None = None
    template: re.Pattern[str] | None = None
    why: str = ""
    caller: bool = False  # a caller reporting its callee's failure: ranks after the callee

    def matches(self, repo: str, path: str, function: str, template: str) -> bool:
        return (
            (self.repo in ("*", repo))
            and fnmatch.fnmatchcase(path, self.path)
            and (self.function is None or bool(self.function.search(function)))
            and (self.template is None or bool(self.template.search(template)))
        )


def parse_rules(text: str) -> tuple[Rule, ...]:
    data = yaml.safe_load(text)
    rules = []
    for item in data["rules"]:
        rules.append(
            Rule(
                repo=item.get("repo", "*"),
                path=item.get("path", "*"),
                family=item["family"],
                function=re.compile(item["function"]) if "function" in item else None,
                template=re.compile(item["template"], re.I) if "template" in item else None,
                why=item.get("why", ""),
                caller=bool(item.get("caller", False)),
            )
        )
    return tuple(rules)


@functools.cache
def rules() -> tuple[Rule, ...]:
    return parse_rules(TABLE.read_text("utf-8"))


def rule_for(repo: str, path: str, function: str, template: str) -> Rule | None:
    """The first rule that matches a message thrown at repo:path in `function`."""
    return next((r for r in rules() if r.matches(repo, path, function, template)), None)


def family_of(repo: str, path: str, function: str, template: str) -> str:
    """The family of a message thrown at repo:path in `function`; "" when no rule says."""
    rule = rule_for(repo, path, function, template)
    return rule.family if rule else ""
