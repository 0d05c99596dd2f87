"""What installing packages into a throw-away root did (dpkg's status, each module tool run,
everything left in the root), read from the listing the observing script prints
(tools/observe_root.py), and which of what was left lies outside the admitted paths; pure.

An Observation is "observed" or "not run", never "passed": "not run" carries the reason
(bubblewrap missing, no user namespaces, an overlay refused, a timeout before the listing)
and no changes, so a caller cannot mistake it for a clean one. A dpkg that was stopped at
its time limit is "observed", with `dpkg_status` None, the note at the end of `dpkg_tail`,
and what it had done by then.

The changes are everything the install left in the root, as package paths (no leading
"/"), minus the intact stand-ins of the module tools (a stand-in a script overwrote is a
change) and minus what dpkg and its own helpers keep for every package, whatever the
package is (EXCLUDED, each with why). A "removed" change is a host file or directory the
install deleted (an overlay whiteout, or a lower entry hidden by a replaced directory).
A directory of the host appears only when its owner or mode changed, not because files
were added below it. A listing cut at its size limit ends in the change TRUNCATED, which
`outside` always reports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

# Left out of the changes: dpkg's bookkeeping for any package, not what a package did.
EXCLUDED: tuple[tuple[str, str], ...] = (
    # the database: status, available, info/<package>.{list,md5sums,postinst,...}, triggers,
    # locks, the update journal, status-old, alternatives (the throw-away root's own copy)
    ("var/lib/dpkg/**", "dpkg's database, written by every install"),
    ("var/log/dpkg.log", "dpkg's log of every action"),
    # its links in etc/alternatives are the package's doing and stay in the changes
    ("var/log/alternatives.log", "update-alternatives' (dpkg's) log"),
    # config.dat, templates.dat (and -old copies): a postinst that asks debconf writes them
    ("var/cache/debconf/**", "debconf's database, written by any script that uses it"),
    # ldconfig runs from debhelper's postinst snippet and from libc-bin's ldconfig trigger
    ("etc/ld.so.cache", "the dynamic linker's cache, rebuilt by ldconfig"),
    ("var/cache/ldconfig/**", "ldconfig's aux-cache"),
    ("var/cache/man/**", "man-db's index, rebuilt by its trigger when manual pages arrive"),
)
# The change that ends a listing cut at its size limit: what follows was not seen.
TRUNCATED = "(the listing was cut at its size limit: more was left than it holds)"
KINDS = {"f": "file", "d": "dir", "l": "symlink", "c": "device", "b": "device"}
NOT_RUN = {
    "setup": "the throw-away root could not be made",
    "overlay": (
        "the kernel refused an overlay inside a user namespace (needs Linux 5.11 or newer "
        "with unprivileged overlayfs)"
    ),
    "copy-up": (
        "needs root: a user namespace maps only the caller's uid, so the overlay cannot "
        "change the host's files (dpkg's database is root's)"
    ),
    "layout": "the host has no dpkg database (/var/lib/dpkg/status)",
    "proc": "the kernel refused a /proc for the inner sandbox to mount its own",
    "inner": (
        "the inner sandbox (a user namespace inside the first, with --disable-userns: "
        "bubblewrap 0.8.0 or newer) did not start"
    ),
    "listing": "the changes could not be listed",
}


@dataclass(frozen=True, slots=True)
class Change:
    path: str  # package-style path, no leading "/"
    kind: str  # file, dir, symlink, removed, device, other


@dataclass(frozen=True, slots=True)
class Observation:
    status: str  # "observed" or "not run"
    reason: str  # why not run, or ""
    dpkg_status: int | None  # None: not run, or dpkg stopped at its time limit
    dpkg_tail: str  # the last lines of dpkg's output (bounded)
    tool_calls: tuple[str, ...]  # each stand-in call, "modprobe -r amdxdna"
    changes: tuple[Change, ...]  # sorted by path


def not_run(reason: str) -> Observation:
    return Observation(
        status="not run", reason=reason, dpkg_status=None, dpkg_tail="", tool_calls=(), changes=()
    )


def excluded(path: str) -> str | None:
    """Why `path` is left out of the changes, or None."""
    for pattern, why in EXCLUDED:
        if pattern.endswith("/**"):
            tree = pattern[:-3]
            if path == tree or path.startswith(tree + "/"):
                return why
        elif path == pattern:
            return why
    return None


def records(manifest: str) -> Iterator[tuple[str, str]]:
    """The `TAG\\0VALUE\\0` pairs of the listing. A pair cut by the size limit can shift the
    ones after it: a token that is no tag is skipped until one is."""
    tokens = manifest.split("\0")
    index = 0
    while index + 1 < len(tokens):
        tag = tokens[index]
        if _is_tag(tag):
            yield tag, tokens[index + 1]
            index += 2
        else:
            index += 1


_TAGS = frozenset({"not-run", "detail", "status", "tail", "standin", "-", "truncated", "end"})


def _is_tag(token: str) -> bool:
    return token in _TAGS or (len(token) >= 2 and token[0] in "+<>")


def _kind(letter: str) -> str:
    return KINDS.get(letter, "other")


def parse(manifest: str, calls: str, *, dpkg_seconds: float | None = None) -> Observation:
    """The Observation from the script's stdout (`manifest`) and its call log (`calls`).

    A listing without its `end` record (the sandbox died, or never started) is "not run";
    `dpkg_seconds` only words the note of a dpkg stopped at its limit."""
    fields: dict[str, str] = {}
    before: dict[str, str] = {}
    after: dict[str, str] = {}
    standins: set[str] = set()
    found: dict[str, Change] = {}
    ended = False
    for tag, value in records(manifest):
        if tag in ("not-run", "detail", "status", "tail", "truncated"):
            fields.setdefault(tag, value)
        elif tag == "end":
            ended = True
            break
        elif tag == "standin":
            standins.add(value)
        elif tag[0] == "<":
            before[value] = tag[1:]
        elif tag[0] == ">":
            after[value] = tag[1:]
        elif tag == "-":
            found.setdefault(value, Change(value, "removed"))
        elif tag[0] == "+":
            found.setdefault(value, Change(value, _kind(tag[1])))
    if "not-run" in fields:
        code = fields["not-run"]
        reason = NOT_RUN.get(code, f"the observation stopped ({code})")
        detail = " ".join(fields.get("detail", "").split())
        return not_run(f"{reason}: {detail}" if detail else reason)
    if not ended or "status" not in fields:
        return not_run("the sandbox stopped before its listing was complete")
    for path, meta in after.items():
        if before.get(path) != meta:
            found.setdefault(path, Change(path, _kind(meta[:1])))
    for path in before.keys() - after.keys():
        found.setdefault(path, Change(path, "removed"))
    changes = [
        change
        for path, change in sorted(found.items())
        if path and path not in standins and excluded(path) is None
    ]
    if "truncated" in fields:
        changes.append(Change(TRUNCATED, "other"))
    tail = fields.get("tail", "")
    status: int | None
    if fields["status"] == "timeout":
        status = None
        limit = f" after {dpkg_seconds:g} s" if dpkg_seconds is not None else " at its time limit"
        tail = f"{tail}\n(dpkg did not finish and was stopped{limit})".lstrip("\n")
    else:
        status = int(fields["status"]) if fields["status"].isdigit() else None
    return Observation(
        status="observed",
        reason="",
        dpkg_status=status,
        dpkg_tail=tail,
        tool_calls=tuple(line.rstrip() for line in calls.splitlines() if line.strip()),
        changes=tuple(changes),
    )


def _ancestors(path: str) -> Iterator[str]:
    parts = path.split("/")
    for end in range(1, len(parts)):
        yield "/".join(parts[:end])


def outside(observation: Observation, admitted: Callable[[str], bool]) -> tuple[Change, ...]:
    """The changes whose path is not admitted. A directory counts only when nothing admitted
    is below it (a parent of admitted files is fine); a removal of a host file, and the cut
    of a listing, always count."""
    verdict = {
        change.path: admitted(change.path)
        for change in observation.changes
        if change.kind != "removed" and change.path != TRUNCATED
    }
    parents = {parent for path, ok in verdict.items() if ok for parent in _ancestors(path)}
    return tuple(
        change
        for change in observation.changes
        if change.kind == "removed"
        or change.path == TRUNCATED
        or not (verdict[change.path] or (change.kind == "dir" and change.path in parents))
    )


def describe(observation: Observation) -> str:
    """One line for a record or a message: what was observed, or why not."""
    if observation.status != "observed":
        return f"not run: {observation.reason}"
    if observation.dpkg_status is None:
        dpkg = "dpkg stopped at its time limit"
    else:
        dpkg = f"dpkg exit status {observation.dpkg_status}"
    calls = len(observation.tool_calls)
    changes = len(observation.changes)
    return (
        f"observed: {dpkg}, {calls} module tool call{'s' * (calls != 1)}, "
        f"{changes} change{'s' * (changes != 1)} left in the root"
    )
