"""What a copy of a log adds that none of its programs printed, taken off before it is read.

Per line: a terminal's colour and cursor sequences (a build run with colours on, a CI log;
also as `cat -v` and some viewers show the escape: `^[[31m`, `␛[31m`), HTML's character
references (a log copied out of a web page's source: `&lt;` for `<`), and the pair of
quotes a writer put around a whole line to quote it (`"Error: ..."`, `` `Error: ...` ``,
“...”), when no other quote of the kind is inside.

Per log, decided on its first lines (so a file still streams), first the line breaks a copy
added, then a prefix every line carries:

- a mail's quoted-printable encoding (a log copied out of a raw mail or a list archive's
  mbox): no line over 76 characters and some broken there with a soft line break (`=` at
  the end, RFC 2045 6.7), so the broken lines are joined and `=3D`, `=20` decoded
  (Python's quopri) before anything else is read;
- a terminal's or a viewer's line breaks at its width (the longest line's, at least two
  lines broken there and going on in the next: not separators or a table's rows), joined
  back;
- a viewer's line numbers (`  12  text`, `12: text`, `12 | text`), counting up by one;
- docker compose's service column (`npu-1  | text`), at one column in every line;
- a shell comment's `# ` before every line of a command's output, the command itself
  first without it (a README showing what `flm validate` printed under the command);
- an indentation common to every line (a paste indented as a code block, a mail).

A prefix only some of the first lines carry is not taken off: it may be the log's own.
"""

from __future__ import annotations

import html
import itertools
import quopri
import re
from collections.abc import Callable, Iterable, Iterator

_ESCAPES_RE = re.compile(
    r"(?:\x1b|\^\[|\u241b)(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])"
)
_ENTITY_RE = re.compile(r"&(?:lt|gt|amp|quot|apos|nbsp|#\d{1,6}|#x[0-9a-fA-F]{1,5});")
_NUMBER_RE = re.compile(r"^[ \t]*(\d{1,7})(?=[ \t:|]|$)")
_BAR_RE = re.compile(r"^[ \t]*[:|] ?")
_SERVICE_RE = re.compile(r"^[\w.@-]+[ \t]*(\|) ?")
_QUOTES = {'"': '"', "`": "`", "\u201c": "\u201d"}  # a line quoted whole: "...", `...`, “...”
# what a reply's quoting or a timestamp puts before each line of a paste: "2025-01-09
# 13:41:14 ", "2025-01-09T13:41:14.1234567Z " (GitHub Actions), "[2025-12-01 10:00:00.123] "
# (spdlog, Lemonade); log_verdict takes them off a line at a time, a soft break is read past
# them
QUOTE_RE = re.compile(r"^(?:> ?)+")
STAMP_RE = re.compile(r"\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]? ")
_QP_WIDTH = 76  # RFC 2045: an encoded line is at most 76 characters, its soft break's "=" too
_QP_BROKEN = 2  # lines broken with a soft break, at that width, before a log is taken for QP
_WRAP_MIN = 60  # a terminal's or a viewer's width: narrower lines are a log's own
_WRAP_BROKEN = 2
_TERMINAL_WIDTHS = frozenset({80, 100, 120, 132})
_SEPARATOR_CHARS = 2  # "-----", "=-=-=": one or two characters repeated
_TABLE_CHARS = "|+\u2502"
_START = 4  # the characters that tell how a log's own lines begin
_KERNEL_TIME_RE = re.compile(r"\[\s*\d+\.\d+\]")
_SNIFF = 40  # first lines that decide a log's prefix
_AT_LEAST = 2  # lines a prefix must be seen on before it is taken for the paste's
_Strip = Callable[[str], str]
_CSV_FIELDS = 2  # commas a CSV line has at least: three fields, no blank among them
_PADDED_LINES = 3  # lines of one width, most ending in blanks, that tell padding from breaks
_RECORD_ENDS = "'\".)]"  # what a complete record of a line ends with
_COMMENT = "# "  # a shell comment's mark before a command's output, pasted under it


def clean(line: str) -> str:
    """A line without a terminal's escape sequences and HTML's character references."""
    if "\x1b" in line or "^[" in line or "\u241b" in line:
        line = _ESCAPES_RE.sub("", line)
    if "&" in line and ";" in line:
        line = _ENTITY_RE.sub(lambda match: html.unescape(match.group(0)), line)
    if line[:1] in _QUOTES:
        return _unquoted(line)
    return line


def _unquoted(line: str) -> str:
    text = line.rstrip("\r\n")
    opening, closing = text[0], _QUOTES[text[0]]
    inside = text[1:-1]
    if len(text) > 2 and text.endswith(closing) and opening not in inside and closing not in inside:
        return inside + line[len(text) :]
    return line


def unpasted(numbered: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """The lines as their programs printed them (module doc); numbers unchanged (a line a
    soft break joined has the number of its first part)."""
    lines: Iterator[tuple[int, str]] = iter(numbered)
    first = list(itertools.islice(lines, _SNIFF))
    if _quoted_printable([text.rstrip("\r\n") for _, text in first]):
        lines = _soft_joined(itertools.chain(first, lines))
        first = list(itertools.islice(lines, _SNIFF))
    cleaned: Iterator[tuple[int, str]] = (
        (number, clean(text)) for number, text in itertools.chain(first, lines)
    )
    head = list(itertools.islice(cleaned, _SNIFF))
    wrapped = _wrap_width([text.rstrip("\r\n") for _, text in head])
    if wrapped:
        cleaned = _rejoined(itertools.chain(head, cleaned), *wrapped)
        head = list(itertools.islice(cleaned, _SNIFF))
    strip = _prefix([text.rstrip("\r\n") for _, text in head])
    for number, text in head:
        yield number, strip(text)
    for number, text in cleaned:
        yield number, strip(text)


def _lead(text: str) -> int:
    """Where a line's text starts after a CI's stamp and a reply's quoting."""
    stamp = STAMP_RE.match(text)
    end = stamp.end() if stamp else 0
    quote = QUOTE_RE.match(text, end)
    return quote.end() if quote else end


def _wrap_width(head: list[str]) -> tuple[int, frozenset[str]] | None:
    """The width a terminal or a viewer broke the lines at, and how the log's own lines
    begin: the longest line's width, when at least two lines are of exactly that width and
    each goes on in the next (not a separator, a table's row or border, or a line before
    one that begins as the log's lines begin)."""
    texts = [text[_lead(text) :] for text in head]
    width = max((len(text) for text in texts), default=0)
    if width < _WRAP_MIN:
        return None
    at_width = [text for text in texts if len(text) == width]
    padded = sum(text.endswith((" ", "\t")) for text in at_width)
    if len(at_width) >= _PADDED_LINES and padded * 3 >= len(at_width) * 2:
        # most lines of that width end in blanks: a program padded its lines to one width
        # (rocminfo's agents), where a terminal breaks a line wherever the width falls
        return None
    starts = frozenset(
        text[:_START]
        for at, text in enumerate(texts)
        if text and (at == 0 or len(texts[at - 1]) != width)
    )
    broken = sum(
        1
        for text, after in itertools.pairwise(texts)
        if len(text) == width and _goes_on(text, after, starts)
    )
    # two lines broken at one width; one is enough at a terminal's usual width
    enough = broken >= _WRAP_BROKEN or (broken == 1 and width in _TERMINAL_WIDTHS)
    return (width, starts) if enough else None


def _goes_on(text: str, after: str, starts: frozenset[str]) -> bool:
    if not after.strip():
        return False  # nothing to go on with
    chars = set(text.strip())
    if len(chars) <= _SEPARATOR_CHARS:  # a separator ("-----"): its rest is of its characters
        return set(after.strip()) <= chars
    indent = len(text) - len(text.lstrip())
    if text[indent : indent + 1] in _TABLE_CHARS and after.startswith(text[: indent + 1]):
        return False  # a table's next row, at the row's own indentation
    commas = text.count(",")
    if commas >= _CSV_FIELDS and after.count(",") == commas and " " not in text.strip():
        return False  # a CSV table's next row, as many fields as its header
    if text.rstrip()[-1:] in _RECORD_ENDS and after[:1] in "[(":
        # a record closed and the next one opened ("... country.'" then "[NPU bf16 encoder]"):
        # two lines a program padded to one width, not one line a terminal broke
        return False
    return after[:_START] not in starts and not _KERNEL_TIME_RE.match(after)


def _rejoined(
    lines: Iterator[tuple[int, str]], width: int, starts: frozenset[str]
) -> Iterator[tuple[int, str]]:
    number, parts, body = -1, list[str](), ""
    for at, text in lines:
        text = text.rstrip("\r\n")
        after = text[_lead(text) :]
        if parts and _goes_on(body, after, starts) and len(parts) < _SNIFF:
            parts.append(after)  # the rest of a broken line, without what a paste put first
            body = after
            if len(after) == width:
                continue
            yield number, "".join(parts)
            parts = []
            continue
        if parts:
            yield number, "".join(parts)
            parts = []
        if len(after) == width:
            number, parts, body = at, [text], after
            continue
        yield at, text
    if parts:
        yield number, "".join(parts)


def _quoted_printable(head: list[str]) -> bool:
    texts = [text[_lead(text) :] for text in head]
    if any(len(text) > _QP_WIDTH for text in texts):
        return False
    broken = sum(1 for text in texts if text.endswith("=") and len(text) >= _QP_WIDTH - 3)
    return broken >= _QP_BROKEN


def _soft_joined(lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    number, parts = -1, list[str]()
    for at, text in lines:
        text = text.rstrip("\r\n")
        if not parts:
            number = at
        else:  # the rest of a line a soft break cut: what a paste put before it goes
            text = text[_lead(text) :]
        if text.endswith("=") and len(parts) < _SNIFF:  # a soft break: the line goes on
            parts.append(text[:-1])
            continue
        parts.append(text)
        yield number, _decoded("".join(parts))
        parts = []
    if parts:
        yield number, _decoded("".join(parts))


def _decoded(text: str) -> str:
    if "=" not in text:
        return text
    return quopri.decodestring(text.encode("utf-8", "surrogateescape")).decode("utf-8", "replace")


def _same(text: str) -> str:
    return text


def _prefix(head: list[str]) -> _Strip:
    """How to take the paste's prefix off a line, read from the log's first lines."""
    filled = [text for text in head if text.strip()]
    if len(filled) < _AT_LEAST:
        return _same
    numbered = _numbered(filled)
    if numbered is not None:
        return numbered
    services = [_SERVICE_RE.match(text) for text in filled]
    if all(services) and len({match.start(1) for match in services if match}) == 1:
        return _cut(_SERVICE_RE)
    indent = _common_indent(filled)
    if indent:
        return lambda text: text[len(indent) :] if text.startswith(indent) else text
    # past a reply's quoting or a CI's stamps, and not counting a code fence's lines
    bodies = [text[_lead(text) :] for text in filled]
    bodies = [text for text in bodies if not text.startswith(("```", "~~~"))]
    if (
        len(bodies) > _AT_LEAST
        and not bodies[0].startswith("#")
        and all(text.startswith(_COMMENT) for text in bodies[1:])
    ):
        return _uncommented
    return _same


def _uncommented(text: str) -> str:
    lead = _lead(text)
    if text.startswith(_COMMENT, lead):
        return text[:lead] + text[lead + len(_COMMENT) :]
    return text


def _numbered(filled: list[str]) -> _Strip | None:
    """A viewer's line numbers: right-aligned or not, then a bar, a colon or spaces (as
    many as the fewest after any number: the rest is the log's own indentation)."""
    values: list[int] = []
    gaps: list[int] = []
    bars = True
    for text in filled:
        match = _NUMBER_RE.match(text)
        if match is None:
            return None
        values.append(int(match.group(1)))
        rest = text[match.end() :]
        bars = bars and _BAR_RE.match(rest) is not None
        if rest.strip():
            gaps.append(len(rest) - len(rest.lstrip(" \t")))
    steps = [b - a for a, b in itertools.pairwise(values)]
    # a blank line of the log may have lost its number in the copy: a larger step now and
    # then, never a step back
    if not all(step > 0 for step in steps) or steps.count(1) < 0.8 * len(steps):
        return None
    if bars:
        return lambda text: _after_number(text, lambda rest: _BAR_RE.sub("", rest, count=1))
    width = min(gaps, default=0)
    if not width:
        return None

    def spaces(rest: str) -> str:
        return rest[width:] if rest[:width].isspace() else rest

    return lambda text: _after_number(text, spaces)


def _after_number(text: str, separator: _Strip) -> str:
    match = _NUMBER_RE.match(text)
    return separator(text[match.end() :]) if match else text


def _cut(pattern: re.Pattern[str]) -> _Strip:
    return lambda text: pattern.sub("", text, count=1)


def _common_indent(lines: list[str]) -> str:
    first = lines[0]
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    for text in lines[1:]:
        while indent and not text.startswith(indent):
            indent = indent[:-1]
    return indent
