"""Read a YAML file into plain data plus the line/column of every key; no schema knowledge.

PyYAML silently keeps the last of two equal keys; we reject them here, with both lines.
Aliases are bounded: PyYAML shares an aliased node, so a 400-byte "billion laughs" of
nested aliases is small to parse but expands into billions of values for whoever walks it
(this walk, then the schema); a document that expands past MAX_VALUES values, nests deeper
than MAX_DEPTH or contains itself through an alias is refused with the anchor's line.
Values are bounded too: a number or date longer than MAX_NUMBER characters is refused before
PyYAML converts it (a 5000-digit integer, a base-60 `1:2:3:...` that took seconds), an
unknown tag before any constructor runs, and a value PyYAML's constructors cannot make (a
`2024-02-30`, `!!int abc`) is a located error, not a traceback.

A message never shows what a refused file says: values are described by type and size
(`describe`), keys are named only when they look like identifiers (`format_path`), PyYAML's
own problems lose their quoted text, and a configuration file with another hard link or a
stranger for its owner is not read at all (a link to a credentials file must not land in
CI logs).
"""

from __future__ import annotations

import datetime
import os
import pwd
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from xdnaforge.errors import ConfigError, Problem

KeyPath = tuple[str | int, ...]
MAX_VALUES = 100_000  # values after alias expansion; the project's largest file has ~2,000
MAX_DEPTH = 100
MAX_NUMBER = 64  # characters of a number or date; checked before PyYAML converts one
MAX_BYTES = 16 * 1024 * 1024  # of a configuration file; the largest shipped one has 20 KB

if TYPE_CHECKING:
    _Base = yaml.SafeLoader
else:  # the C loader is faster and behaves the same for safe loading (pre-commit does this too)
    _Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_TAG = "tag:yaml.org,2002:"
_NUMBERS = {f"{_TAG}int": "an integer", f"{_TAG}float": "a number", f"{_TAG}timestamp": "a date"}
_KINDS = {**_NUMBERS, f"{_TAG}bool": "a boolean", f"{_TAG}binary": "base64 data"}
# the tags SafeLoader makes values of; anything else (`!secret`, `!!python/...`) is refused
_KNOWN_TAGS = frozenset(tag for tag in yaml.SafeLoader.yaml_constructors if tag is not None)
_IDENTIFIER = re.compile(r"[A-Za-z0-9_.+-]{1,64}")
_BOOLEAN = re.compile(r"(?:[Yy]es|YES|[Nn]o|NO|[Tt]rue|TRUE|[Ff]alse|FALSE|[Oo]n|ON|[Oo]ff|OFF)")
_SHAPES = (
    (datetime.datetime, "a date and time"),
    (datetime.date, "a date"),
    (dict, "a mapping"),
    (list, "a list"),
    (set | frozenset, "a set"),
)
# how the pure-Python PyYAML quotes an anchor, tag or handle (none has a space; a token is <..>)
_QUOTED = re.compile(r"'(?!<)[^'\s]{2,}'|\"(?!<)[^\"\s]{2,}\"")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def describe(value: Any, written: str | None = None) -> str:
    """What a value is, never what it says: `a string of 40 characters`, `an integer of 5000
    digits`; `written` is its text in the file (Document.scalars). Only a boolean's word, one
    of YAML's own, is shown: it is what a user has to quote."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean {written}" if written and _BOOLEAN.fullmatch(written) else "a boolean"
    if isinstance(value, int):
        body = (written or "").lstrip("+-").replace("_", "") or str(abs(value))
        return f"an integer of {_count(len(body), 'digit' if body.isdigit() else 'character')}"
    if isinstance(value, float):
        return f"a number of {_count(len(written), 'character')}" if written else "a number"
    if isinstance(value, str):
        return f"a string of {_count(len(value), 'character')}"
    if isinstance(value, bytes):
        return f"binary data of {_count(len(value), 'byte')}"
    return next((text for kind, text in _SHAPES if isinstance(value, kind)), "another value")


def shown_key(key: str) -> str:
    """A key as a message may name it after "key": `'ordr'` when it looks like an
    identifier, else only its size (`of 40 characters`)."""
    return f"'{key}'" if _IDENTIFIER.fullmatch(key) else f"of {_count(len(key), 'character')}"


@dataclass(frozen=True, slots=True)
class Document:
    """Parsed YAML: the data, where each key stands, and the name to show in messages."""

    source: str
    data: Any
    positions: dict[KeyPath, tuple[int, int]] = field(default_factory=dict)
    # the text of every scalar as written, so a message can say `quote it: "2.10"`
    scalars: dict[KeyPath, str] = field(default_factory=dict)
    # duplicate keys: reported with the schema's problems so a user sees everything at once
    problems: tuple[Problem, ...] = ()

    def where(self, path: KeyPath) -> tuple[int, int]:
        """Line and column of the nearest known key on `path` (1-based)."""
        probe = path
        while probe:
            if probe in self.positions:
                return self.positions[probe]
            probe = probe[:-1]
        return self.positions.get((), (1, 1))


def format_path(path: KeyPath) -> str:
    """`("build", "steps", 0, "argv")` -> `build.steps[0].argv`; a key that does not look
    like an identifier is shown by its size (`mirrors.<a key of 30 characters>`)."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            name = part if _IDENTIFIER.fullmatch(part) else f"<a key {shown_key(part)}>"
            text += f".{name}" if text else name
    return text


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Unmade(Exception):
    """A scalar PyYAML's constructor for its tag could not make a value of."""

    def __init__(self, node: yaml.Node) -> None:
        super().__init__()
        self.node = node


class _Loader(_Base):
    """SafeLoader whose scalar constructors fail with the node, so the failure is located."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError, IndexError, KeyError, AttributeError, TypeError):
            # 2024-02-30 (ValueError), !!int '' (IndexError), !!bool maybe (KeyError),
            # !!timestamp nope (AttributeError): the value is wrong, not the program
            if not isinstance(node, yaml.ScalarNode):
                raise
            raise _Unmade(node) from None


class _Bound:
    """What the walk has seen: values so far, the nodes on the current path, and the key
    path each node was first seen at (to locate a value its constructor cannot make)."""

    __slots__ = ("nodes", "on_path", "values")

    def __init__(self) -> None:
        self.values = 0
        self.on_path: set[int] = set()
        self.nodes: dict[int, KeyPath] = {}


def _error(
    source: str, where: tuple[int, int], message: str, hint: str | None = None, path: KeyPath = ()
) -> ConfigError:
    line, column = where
    return ConfigError(
        [
            Problem(
                source=source,
                line=line,
                column=column,
                key_path=format_path(path),
                message=message,
                hint=hint,
            )
        ]
    )


def _refuse(node: yaml.Node, source: str, path: KeyPath, message: str, hint: str) -> ConfigError:
    return _error(source, _mark(node), message, hint, path)


def _check_node(node: yaml.Node, source: str, path: KeyPath, *, key: bool = False) -> None:
    """Refuse what no constructor should see: an unknown tag, a number or date too long to
    convert in bounded time (Python's int() of 5000 digits raises, a base-60 one is
    quadratic)."""
    tag = node.tag
    if tag == f"{_TAG}merge" and key:
        return  # `<<:` merges mappings; PyYAML checks what it is given
    if tag not in _KNOWN_TAGS:
        unquoted = {f"{_TAG}value": "=", f"{_TAG}merge": "<<"}.get(tag)
        raise _refuse(
            node,
            source,
            path,
            f"an unquoted {unquoted} is YAML syntax, not a value"
            if unquoted
            else "a value with a tag this loader does not know",
            "quote it" if unquoted else "configuration files use plain values: remove the tag",
        )
    kind = _NUMBERS.get(tag)
    if kind is not None and isinstance(node.value, str) and len(node.value) > MAX_NUMBER:
        raise _refuse(
            node,
            source,
            path,
            f"YAML reads this as {kind} of {len(node.value)} characters, longer than "
            f"the {MAX_NUMBER} any setting needs",
            "quote it if it is text"
            + (
                " (YAML 1.1 reads digits joined by ':' as one base-60 number)"
                if ":" in node.value
                else ""
            ),
        )


def _walk(
    node: yaml.Node,
    path: KeyPath,
    positions: dict[KeyPath, tuple[int, int]],
    scalars: dict[KeyPath, str],
    problems: list[Problem],
    source: str,
    bound: _Bound,
) -> None:
    bound.values += 1
    if bound.values > MAX_VALUES:
        raise _refuse(
            node,
            source,
            path,
            f"aliases expand this document past {MAX_VALUES} values",
            "an alias (*name) repeats its anchor's value; write the values out, or use fewer",
        )
    if len(path) > MAX_DEPTH:
        raise _refuse(node, source, path, f"nested deeper than {MAX_DEPTH} levels", "flatten it")
    if id(node) in bound.on_path:
        raise _refuse(
            node,
            source,
            path,
            "an alias refers to a value that contains it (a recursive alias)",
            "an alias must not point at its own enclosing anchor",
        )
    bound.nodes.setdefault(id(node), path)
    _check_node(node, source, path)
    if isinstance(node, yaml.ScalarNode):
        scalars[path] = str(node.value)
    elif isinstance(node, yaml.MappingNode):
        seen: dict[str, tuple[int, int]] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):  # its str() would expand its aliases
                raise _refuse(key_node, source, path, "a key must be plain text", "use text")
            key = str(key_node.value)
            here = _mark(key_node)
            child = (*path, key)
            bound.nodes.setdefault(id(key_node), child)
            _check_node(key_node, source, child, key=True)
            if key in seen:
                problems.append(
                    Problem(
                        source=source,
                        line=here[0],
                        column=here[1],
                        key_path=format_path(child),
                        message=f"duplicate key {shown_key(key)} (first defined on line "
                        f"{seen[key][0]})",
                        hint="YAML would silently keep only the last one; delete or merge one",
                    )
                )
                continue
            seen[key] = here
            positions[child] = here
            bound.on_path.add(id(node))
            _walk(value_node, child, positions, scalars, problems, source, bound)
            bound.on_path.discard(id(node))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            child = (*path, index)
            positions[child] = _mark(item)
            bound.on_path.add(id(node))
            _walk(item, child, positions, scalars, problems, source, bound)
            bound.on_path.discard(id(node))


def _scrub(text: str) -> str:
    """PyYAML's problem without the text it quotes from the file (an anchor, a tag)."""
    return _QUOTED.sub(lambda match: f"({_count(len(match.group()) - 2, 'character')})", text)


def _syntax_error(source: str, where: tuple[int, int], reason: str) -> ConfigError:
    return _error(
        source,
        where,
        f"YAML syntax error: {reason}",
        "check indentation and quoting around this line",
    )


def _unmade(node: yaml.Node, path: KeyPath, source: str) -> ConfigError:
    kind = _KINDS.get(node.tag, "a value of its tag")
    if node.tag == f"{_TAG}timestamp":
        message = "YAML reads this as a date or time, and no such date or time exists"
        hint = "correct it, or quote it if it is text"
    else:
        message = f"YAML reads this as {kind}, but it is not one"
        hint = "quote it if it is text, or remove the tag"
    return _refuse(node, source, path, message, hint)


def parse(text: str, source: str) -> Document:
    """Parse YAML text; raise ConfigError for syntax errors, record duplicate keys."""
    loader = _Loader(text)
    bound = _Bound()
    try:
        node = loader.get_single_node()
        if node is None:
            return Document(source=source, data=None, positions={(): (1, 1)})
        positions: dict[KeyPath, tuple[int, int]] = {(): _mark(node)}
        scalars: dict[KeyPath, str] = {}
        problems: list[Problem] = []
        _walk(node, (), positions, scalars, problems, source, bound)
        data = loader.construct_document(node)
    except _Unmade as unmade:
        raise _unmade(unmade.node, bound.nodes.get(id(unmade.node), ()), source) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        # problem and mark only: str(error) would add a snippet of the offending line
        reason = error.problem or error.context or "invalid YAML"
        if error.problem and error.context:
            reason += f" ({error.context})"
        raise _syntax_error(source, where, _scrub(reason)) from None
    except yaml.reader.ReaderError as error:
        before = text[: error.position]
        where = (before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1)
        reason = f"character #x{error.character:04x}: {error.reason}"
        raise _syntax_error(source, where, reason) from None
    except yaml.YAMLError as error:
        raise _error(source, (1, 1), f"YAML error ({type(error).__name__})") from None
    finally:
        loader.dispose()
    return Document(
        source=source, data=data, positions=positions, scalars=scalars, problems=tuple(problems)
    )


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _user(uid: int) -> str:
    name = _name(uid)
    return f"uid {uid}" if name == str(uid) else f"{name} (uid {uid})"


def read_config_bytes(
    path: Path, source: str, root: Path | None = None, *, owner: int | None = None
) -> bytes:
    """A configuration file's bytes, or a ConfigError that says why not without showing
    them: a link that leaves `root` (a credentials file would land in CI logs), something
    that is not a regular file (a directory, a FIFO), more than MAX_BYTES. With `owner`
    (the project directory's owner) the file read must also have no other hard link and
    belong to that owner or root: a hard link to a secret passes every path check, and a
    stranger's file is not the project's. The file judged is the one opened (fstat of the
    descriptor read from), so nothing changes between the check and the read; a symbolic
    link to a file that passes is fine."""

    def refuse(message: str, hint: str | None = None) -> ConfigError:
        return _error(source, (1, 1), message, hint)

    if root is not None:
        resolved = path.resolve()
        if not resolved.is_relative_to(root.resolve()):
            raise refuse(
                f"is a link to {resolved}, outside the project: not read",
                "configuration files live in the project; copy the file in instead of linking",
            )
    try:
        # O_NONBLOCK: a FIFO must not block the read; then only a regular file is read
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise refuse(f"cannot read: {error.strerror}") from None
    try:  # the descriptor is judged before anything is read from it
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise refuse("not a regular file", "a configuration file is a plain text file")
        if owner is not None and status.st_nlink > 1:
            raise refuse(
                f"has {status.st_nlink} hard links, so it may be another file's content: "
                "not read; copy it instead of linking it"
            )
        if owner is not None and status.st_uid not in (owner, 0):
            owners = "root" if owner == 0 else f"the project's owner {_user(owner)} or root"
            raise refuse(
                f"is owned by {_user(status.st_uid)}, not by {owners}: not read; "
                f"chown it to {_name(owner)}"
            )
        os.set_blocking(descriptor, True)
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = handle.read(MAX_BYTES + 1)
    finally:
        os.close(descriptor)
    if len(data) > MAX_BYTES:
        raise refuse(
            f"is larger than {MAX_BYTES // (1024 * 1024)} MiB: not read",
            "a configuration file is a short text file",
        )
    return data


def read_config_text(
    path: Path, source: str, root: Path | None = None, *, owner: int | None = None
) -> str:
    """A configuration file's text (read_config_bytes), or a ConfigError for bytes that are
    not UTF-8."""
    data = read_config_bytes(path, source, root, owner=owner)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        where = (
            data[: error.start].count(b"\n") + 1,
            error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1,
        )
        message = f"not UTF-8 text (byte 0x{data[error.start]:02x})"
        raise _error(source, where, message, "save the file as UTF-8") from None


def load(
    path: Path, source: str | None = None, root: Path | None = None, *, owner: int | None = None
) -> Document:
    """Read and parse a YAML file; `source` is the name shown in messages; a link that
    leaves `root` is refused, and with `owner` a hard-linked or a stranger's file
    (read_config_bytes)."""
    name = source or str(path)
    return parse(read_config_text(path, name, root, owner=owner), name)
