"""The message templates the NPU stack can print, drawn from its upstream sources.

Pure: reads data/upstream_messages.json (written by scripts/gen_upstream_messages.py from
the xdna-driver, XRT, in-tree amdxdna, FastFlowLM and Lemonade releases it names; never
regenerated at run time) and tells where a log line comes from: component, file,
function, template, the family the reviewed source table gives it
(`source_families.py`) and the releases that print it.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).resolve().parent / "data" / "upstream_messages.json"
# shim_err() appends it to its format (xdna-driver src/shim/shim_debug.h); a line may print
# the message without it (scripts/message_extract.py makes it optional in the pattern)
SHIM_ERR_SUFFIX = " (err=%d)"
KERNEL_COMPONENT = "amdxdna"  # the driver's messages: the only ones a kernel log line prints
_PREFIX_RE = re.compile(r"\b([A-Za-z_]\w+): ")
_INDEX_WORD_RE = re.compile(r"[a-z][a-z0-9_]{3,}")
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9_ .,'()/-]{5,}")
# a printf conversion ("%d", "%llx", "%pe"): printed as something else, so never a piece
_CONVERSION_RE = re.compile(
    r"%p[A-Za-z]*|%[-+ #0]*[\d*]*(?:\.[\d*]+)?(?:hh|h|ll|l|z|j|t|L)?[a-zA-Z%]"
)


# conversion: one letter, or %p with the kernel's extensions (%pK, %pe, %pad)
SPEC_RE = re.compile(
    r"%(?:%|\d+%|[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t|L)?(?:p[A-Za-z]*|[a-oq-zA-Z]))"
)


def spec_pattern(spec: str) -> str:
    """A printf/boost format specifier -> the regular expression of what it prints."""
    if spec == "%%":
        return "%"
    if re.fullmatch(r"%\d+%", spec):
        return ".*?"
    if spec.startswith("%p"):  # %p, %pK, %pe (an error name), %pad, ...
        return r"\S+"
    letter = spec[-1]
    if letter in "diu":
        return r"-?\d+"
    if letter in "xX":
        return r"(?:0x)?[0-9a-fA-F]+"
    if letter in "fgeE":
        return r"-?[0-9.]+(?:e[-+]?\d+)?"
    if letter == "c":
        return "."
    return ".*?"


@functools.cache
def template_pattern(template: str) -> str:
    """The template with each specifier (and each piece not known here: "\x00") as a regex;
    shim_err's suffix may be missing where a program printed the exception's message its
    own way ("Kernel access failed: No valid DPU kernel found in xclbin")."""
    if template.endswith(SHIM_ERR_SUFFIX):
        return template_pattern(template[: -len(SHIM_ERR_SUFFIX)]) + r"(?: \(err=-?\d+\))?"
    parts = []
    position = 0
    for match in SPEC_RE.finditer(template):
        parts.append(_escape(template[position : match.start()]))
        parts.append(spec_pattern(match.group(0)))
        position = match.end()
    parts.append(_escape(template[position:]))
    return "".join(parts).rstrip()


def _escape(text: str) -> str:
    return ".*?".join(re.escape(piece).replace("\\ ", " ") for piece in text.split("\x00"))


@functools.cache
def regex_of(function: str, template: str, prefixed: bool) -> str:
    """The regex of a message that prints `template` (after the driver's "<function>: "
    prefix when `prefixed`): derived, so the data file keeps only the template."""
    return (re.escape(function) + ": " if prefixed else "") + template_pattern(template)


_ANY = ".*?"  # what a piece computed at run time matches (spec_pattern's "%s")


@functools.cache
def literal_pieces(template: str) -> tuple[str, ...]:
    """The text a template prints whatever its values, lowercased, in order: the pieces
    between its conversions ("%%" prints "%"); shim_err's suffix left out, as the line may
    not print it."""
    text = template.removesuffix(SHIM_ERR_SUFFIX)
    pieces: list[str] = []
    current: list[str] = []
    position = 0
    for match in SPEC_RE.finditer(text):
        current.append(text[position : match.start()])
        if match.group(0) == "%%":
            current.append("%")
        else:
            pieces.append("".join(current))
            current = []
        position = match.end()
    current.append(text[position:])
    pieces.append("".join(current))
    return tuple(piece.lower().strip() for piece in pieces if piece.strip())


@functools.cache
def _compiled(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.IGNORECASE)  # case changes between releases


def expand(seen: str) -> tuple[int, ...]:
    """ "0-2,5" -> (0, 1, 2, 5): the indices of the sources that print a message."""
    found: list[int] = []
    for part in filter(None, seen.split(",")):
        first, _, last = part.partition("-")
        found.extend(range(int(first), int(last or first) + 1))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Message:
    component: str  # amdxdna, shim, example, xrt-smi, xrt, build, flm, lemonade
    level: str  # error, warning
    file: str
    function: str
    template: str
    prefixed: bool  # printed after the driver's "<function>: " prefix (XDNA_ERR)
    # the regex, where the template as shown cannot give it back ("%%s": a literal "%"
    # before a piece computed at run time); "" when `regex_of` derives it
    override: str
    seen: str  # the sources that print it, as index ranges ("0-2,5")
    family: str = ""  # from the reviewed source table (source_families.yaml)
    caller: bool = False  # a caller passing up its callee's failure (source_families.yaml)
    # the catalogue's sources, shared by every message: (commit, "XRT 2.19") per index
    sources: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)

    @property
    def commits(self) -> tuple[str, ...]:
        return tuple(self.sources[i][0] for i in expand(self.seen))

    @property
    def releases(self) -> tuple[str, ...]:
        """Labels of the releases that print it, in the catalogue's order of sources."""
        return tuple(self.sources[i][1] for i in expand(self.seen))

    @property
    def regex(self) -> str:
        return self.override or regex_of(self.function, self.template, self.prefixed)

    @property
    def pattern(self) -> re.Pattern[str]:
        """Compiled on first use: a log touches a few of the 6,000 templates. Searched for,
        so a piece computed at run time first ("%s: mgmt hwctx is not initialized") is left
        to the search: as ".*?", tried from each of a line's characters, it scanned the
        line again from each (quadratic on a hostile line); `leads` says it was there."""
        return _compiled(self.regex.removeprefix(_ANY))

    @property
    def leads(self) -> bool:
        """The line's text begins with a piece computed at run time."""
        return self.regex.startswith(_ANY)

    def in_order(self, lowered: str) -> bool:
        """Whether a lowercased line holds the template's literal pieces in their order:
        what its regex needs first. Linear, where the regex, its pieces computed at run time
        side by side ("Get handle of %s%s failed"), retried every way to share a hostile
        line's text among them (seconds for one 8 KB line)."""
        if self.override:  # "%%s" shown: the template's text does not say its pieces
            return True
        at = 0
        for piece in literal_pieces(self.template):
            at = lowered.find(piece, at)
            if at < 0:
                return False
            at += len(piece)
        return True

    def describe(self) -> str:
        """ "amdxdna aie2_pci.c:aie2_init: Enable PASID failed, ret %d"."""
        where = self.file.rsplit("/", 1)[-1] + (f":{self.function}" if self.function else "")
        return f"{self.component} {where}: {self.template}"

    def source(self) -> str:
        where = f"{self.file} ({self.function or 'file scope'}) @ {self.commits[-1][:12]}"
        return f"{where}, {self.printed_by()}" if self.releases else where

    def printed_by(self) -> str:
        """ "printed by 202410.2.17.319 .. 2.25.0 (12 releases)" or one release."""
        first, last = self.releases[0], self.releases[-1]
        if len(self.releases) == 1:
            return f"printed by {first}"
        return f"printed by {first} .. {last} ({len(self.releases)} releases)"


@dataclass(frozen=True, slots=True)
class Catalogue:
    sources: tuple[dict[str, str], ...]
    messages: tuple[Message, ...]
    # (longest literal piece of the template, lowercased, message): a line prints the piece
    # of every message it could be, so a message's regex runs only on lines with it
    by_function: dict[str, tuple[tuple[str, Message], ...]]
    # the other messages by the longest word of their piece: a line looks up its own words
    by_word: dict[str, tuple[tuple[str, Message], ...]]

    def locate(self, line: str, kernel: bool = False) -> Message | None:
        """The upstream message `line` prints, errors before warnings; None if none. A line
        of the kernel's log (`kernel`: dmesg's or the journal's kernel prefix) prints only a
        driver's message: no userspace program writes there."""
        lowered = line.lower()
        candidates: list[tuple[str, Message]] = []
        for name in _PREFIX_RE.findall(line):
            candidates.extend(self.by_function.get(name, ()))
        found = _printed(candidates, line, lowered)
        if not found:
            anchored = [
                item
                for word in set(_INDEX_WORD_RE.findall(lowered))
                for item in self.by_word.get(word, ())
            ]
            found = _printed(anchored, line, lowered)
        if kernel:
            found = [m for m in found if m.component == KERNEL_COMPONENT]
        if not found:
            return None
        # the most specific: the longest template, errors first
        return max(found, key=lambda m: (m.level == "error", len(m.template)))

    def files(self) -> set[str]:
        return {m.file for m in self.messages}


def _printed(candidates: list[tuple[str, Message]], line: str, lowered: str) -> list[Message]:
    """The candidates the line prints: their longest piece in it, then all their pieces in
    order (linear), then their regex."""
    return [
        m
        for piece, m in candidates
        if piece in lowered and m.in_order(lowered) and m.pattern.search(line)
    ]


def _specific(template: str) -> bool:
    """Enough literal text to say where a line comes from without the function's name:
    three words or more ("Error code:" or "Supported models:" could be anyone's)."""
    return len(re.findall(r"[A-Za-z0-9]+", _CONVERSION_RE.sub(" ", template))) >= 3


# schema 5 writes the messages of one file under its component and path, each message one
# row of these fields, in this order, on a line of its own (so that a diff shows a message).
# Keys repeated 4,000 times made schema 2 over 1 MiB; schema 3 had every message's regex
# ("pattern", 40 % of the file), which schema 4 keeps only where the template cannot give
# it back (`regex_of`); schema 4 repeated the component and path on every row (a quarter
# of the file), which schema 5 writes once per file
FIELDS = (
    "level",
    "function",
    "template",
    "prefixed",
    "pattern",
    "seen",
    "family",
)
CALLER = "caller"  # a last column, true only for a caller passing up its callee's failure


def rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages as mappings, from schema 5's files, schema 3 and 4's rows or schema 2's
    objects."""
    schema = data.get("schema", 2)
    if schema < 3:
        return list(data["messages"])
    fields = (*data["fields"], CALLER)
    if schema < 5:
        return [dict(zip(fields, row, strict=False)) for row in data["messages"]]
    return [
        {"component": component, "file": path, **dict(zip(fields, row, strict=False))}
        for component, path, messages in data["messages"]
        for row in messages
    ]


def _regex_fields(item: dict[str, Any]) -> tuple[bool, str]:
    """(prefixed, override) of a row: schema 4 says them; before it, the whole regex was
    stored, and stands as the override."""
    if "prefixed" in item:
        return bool(item["prefixed"]), item.get("pattern") or ""
    return False, item["pattern"]


def parse_catalogue(text: str) -> Catalogue:
    data = json.loads(text)
    sources = data["sources"]
    # one pair per source, shared by the messages that name it (memory: 4,000 messages)
    shared = tuple((s["commit"], f"{s['repo'].split('/')[-1]} {s['label']}") for s in sources)
    if data.get("schema") == 5:
        messages = _schema5_messages(data, shared)
    else:  # older files (the generator's carry-over, tests): a mapping per message
        messages = [_message_of(item, shared) for item in rows(data)]
    by_function: dict[str, list[tuple[str, Message]]] = {}
    by_word: dict[str, list[tuple[str, Message]]] = {}
    for message in messages:
        text = message.template.removesuffix(SHIM_ERR_SUFFIX)  # the line may not print it
        pieces = _WORD_RE.findall(_CONVERSION_RE.sub("\x00", text))
        piece = max(pieces, key=len).strip().lower() if pieces else ""
        prefixed = message.prefixed or bool(
            message.override and message.override.startswith(re.escape(message.function) + ": ")
        )
        if message.function and prefixed:
            by_function.setdefault(message.function, []).append((piece, message))
        elif piece and _specific(message.template):
            words = _INDEX_WORD_RE.findall(piece)
            if words:
                by_word.setdefault(max(words, key=len), []).append((piece, message))
    return Catalogue(
        sources=tuple(sources),
        messages=tuple(messages),
        by_function={name: tuple(found) for name, found in by_function.items()},
        by_word={word: tuple(found) for word, found in by_word.items()},
    )


def _message_of(item: dict[str, Any], shared: tuple[tuple[str, str], ...]) -> Message:
    prefixed, override = _regex_fields(item)
    return Message(
        component=sys.intern(item["component"]),
        level=sys.intern(item["level"]),
        file=sys.intern(item["file"]),
        function=sys.intern(item["function"]),
        template=item["template"],
        prefixed=prefixed,
        override=override,
        seen=item["seen"],
        family=sys.intern(item.get("family", "")),
        caller=bool(item.get("caller", False)),
        sources=shared,
    )


def _schema5_messages(data: dict[str, Any], shared: tuple[tuple[str, str], ...]) -> list[Message]:
    """Schema 5's rows read straight into messages: a file's component and path once for
    its rows (the doctor's start-up reads 6,000 of them)."""
    index = {name: at for at, name in enumerate(data["fields"])}
    level, function, template = index["level"], index["function"], index["template"]
    prefixed, pattern, seen, family = (
        index["prefixed"],
        index["pattern"],
        index["seen"],
        index["family"],
    )
    caller = len(data["fields"])
    intern = sys.intern
    messages = []
    for component, path, rows_of_file in data["messages"]:
        component, path = intern(component), intern(path)
        for row in rows_of_file:
            messages.append(
                Message(
                    component=component,
                    level=intern(row[level]),
                    file=path,
                    function=intern(row[function]),
                    template=row[template],
                    prefixed=bool(row[prefixed]),
                    override=row[pattern] or "",
                    seen=row[seen],
                    family=intern(row[family]),
                    caller=len(row) > caller and bool(row[caller]),
                    sources=shared,
                )
            )
    return messages


@functools.cache
def catalogue() -> Catalogue:
    return parse_catalogue(DATA_FILE.read_text("utf-8"))
