"""A signature's required text: a line without it is passed without running the regex, so
the text must be in every match (on the shipped knowledge and every real log line)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO
from xdnaforge.diagnosis.classify import Classifier
from xdnaforge.diagnosis.evaluate import load_corpus
from xdnaforge.diagnosis.knowledge import (
    DATA_DIR,
    FAILURE_RE,
    SHIPPED,
    load_knowledge,
    looks_failed,
    parse_base,
)
from xdnaforge.diagnosis.signature import (
    alternation,
    branches,
    compile_signature,
    contains,
    plain_text,
    required_literal,
)


@pytest.mark.parametrize(
    ("regex", "literal"),
    [
        (
            r"Incompatible firmware protocol major \d+ minor \d+",
            "Incompatible firmware protocol major ",
        ),
        (r"mmap\(.*\) failed \(err=-11\): Resource", ") failed (err=-11): Resource"),
        (r"No archive (found|provided), skipping test", ", skipping test"),  # group skipped
        (r"^\s*0 devices found", "0 devices found"),
        (r"[Pp]ermission denied", "ermission denied"),  # the class is not plain text
        (r"Command bo size 0x[0-9a-f]+ too large", "Command bo size 0x"),
        (r"colour? of", "colou"),  # the "r" may be missing: "colou" and " of" are the runs
        (r"x{2,3}yz", "yz"),
        (r"ab+c", "ab"),  # "b" at least once: "ab" is always there, "c" may follow many b
        (r"abc|abd", ""),  # alternation at the top: no text is in every match
        (r"(?i)invalid mbox magic", ""),  # inline flags: the case may differ
        (r"err(?i:or) here", ""),
        (r"(?P<header>[\w/]+\.h): No such file", ": No such file"),
        (r"a[]b]cdef", "cdef"),  # a class whose first member is "]"
        (r"\bfoo\b bar", " bar"),
        # a group in every match gives its own text; not one that may be absent
        (r"\b(?P<what>general protection fault)", "general protection fault"),
        (r"(?:skipping )?invalid relocation", "invalid relocation"),
        (r"ab(cdefgh)+", "cdefgh"),
        (r"x(abc|abd)yz", "yz"),  # an alternation inside: no text of the group's own
        (r"(?=lookahead)ab", "ab"),
        (r"ab(?P=name)cd", "ab"),
    ],
)
def test_the_required_text_is_the_longest_plain_run(regex: str, literal: str) -> None:
    assert required_literal(regex) == literal


@pytest.mark.parametrize(
    ("regex", "text"),
    [
        (r"(?i)\biommu\b.*\bpage fault\b", ("page fault", True)),
        (r"(?i:\btimed? ?out\b)", ("time", True)),  # FAILURE_RE's scoped branch
        (r"(?i:a)b(?i:c)", ("", False)),  # two scoped groups: not one around the whole
        (r"Invalid mbox magic", ("Invalid mbox magic", False)),
    ],
)
def test_a_case_insensitive_regex_has_its_text_lowered(regex: str, text: tuple[str, bool]) -> None:
    assert plain_text(regex) == text


def test_a_folded_text_is_looked_for_in_the_lowered_line_where_it_is_ascii() -> None:
    found = compile_signature(r"(?i)\bunexpected command state\b")
    assert found.search("amdxdna: Unexpected Command State 3") is not None
    assert found.search("amdxdna: command state 3") is None
    # U+0130 lowers to two characters; the regex's own case rules decide there
    assert contains("\u0130 unexpected command state", "nope", folded=True)


def test_a_line_without_the_text_is_passed_and_one_with_it_is_searched() -> None:
    found = compile_signature(r"Invalid mbox magic 0x[0-9a-f]+")
    assert found.search("amdxdna: Invalid mbox magic 0xdead") is not None
    assert found.search("amdxdna: Invalid mbox") is None


def test_the_shipped_regexes_compile_though_doctor_compiles_them_as_it_needs_them() -> None:
    # load_knowledge leaves each regex to the first line with its text; checked here
    text = (DATA_DIR / "knowledge.yaml").read_text(encoding="utf-8")
    entries, _ = parse_base(text, SHIPPED, check_regexes=True)
    assert [e.code for e in entries] == [e.code for e in load_knowledge()]
    with pytest.raises(re.error):
        compile_signature("(", check=True)
    assert compile_signature("(", check=False).literal == ""  # the error waits for its use


def _real_lines() -> list[str]:
    lines = [
        line
        for path in sorted((REPO / "tests/fixtures/field").glob("*/input.txt"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    lines += [
        line
        for case in load_corpus(REPO / "tests/fixtures/corpus")
        for line in case.text.splitlines()
    ]
    return lines


def test_every_shipped_signature_keeps_every_real_match() -> None:
    lines = _real_lines()
    with_text = 0
    for entry in load_knowledge():
        for found in entry.signatures:
            with_text += bool(found.literal)
            for line in lines:
                if found.pattern.search(line):
                    assert contains(line, found.literal, found.folded), (entry.code, line)
                    assert found.search(line) is not None
    assert with_text >= 100  # most signatures are passed by a substring test


def test_branches_are_split_at_the_top_level_only() -> None:
    assert branches(r"a|b(c|d)|[|]e|\|f") == ["a", "b(c|d)", "[|]e", "\\|f"]
    assert branches("abc") == ["abc"]


def test_an_alternation_answers_as_its_regex_on_every_real_line() -> None:
    lines = [
        *_real_lines(),
        "amdxdna 0000:c5:00.1: aie2_init: Enable PASID failed, ret -95",
        "Build FAILED.",  # only the case-insensitive branch says it
        "ok: nothing to see",
        "WARNING: CPU: 3 PID: 1 at drivers/accel/amdxdna/aie2_pci.c:1 x+0x1/0x2",
        "  what():  DRM_IOCTL_AMDXDNA_EXEC_CMD IOCTL failed (err=5)",
    ]
    split = alternation(FAILURE_RE)
    assert len(split.guarded) >= 30  # most branches are passed by a substring test
    failing = 0
    for line in lines:
        expected = FAILURE_RE.search(line) is not None
        assert split.found(line) == looks_failed(line) == expected, line
        failing += expected
    assert 200 < failing < len(lines)
    # flags on the whole regex: no split, the regex itself
    assert alternation(re.compile("a|b", re.IGNORECASE)).guarded == ()


@pytest.mark.parametrize(
    "line",
    [
        "AMD-Vi: IOMMU Page Fault at 0x1f000 for amdxdna",  # ASCII: the lowered line
        "AMD-Vi: IOMMU Page Fault at 0x1f000 (d\u00e9j\u00e0)",  # not: the regex alone
    ],
)
def test_the_classifier_finds_a_case_insensitive_signature_in_any_case(line: str) -> None:
    found = Classifier(load_knowledge()).classify(line)
    assert "iommu-page-fault" in [entry.code for entry in found.specific]


def test_a_regex_that_begins_with_its_text_then_anything_is_tried_from_its_first_place() -> None:
    """The same match as the search's, tried once: from the text's first place in the line."""
    from xdnaforge.diagnosis.signature import compile_signature

    signature = compile_signature("(?i)version.*(incompatible|too old)")
    line = "x version 1 version 2: too old"
    found = signature.search(line)
    assert found is not None
    assert (found.start(), found.group(1)) == (2, "too old")
    assert signature.search("version " * 900) is None  # its words repeated, never its end
    assert signature.search("too old, then the version") is None  # not in its order
    # a case-insensitive one on a line with other characters than ASCII: the plain search
    assert signature.search("Version \u00e9: incompatible") is not None


def test_a_head_of_words_before_its_dot_star_is_searched_once() -> None:
    from xdnaforge.diagnosis.signature import _head

    found = compile_signature(r"(?i)(?<![/.\\])\b(npu|xdna)\b(?![/\\]).*\b(not found)\b")
    assert _head(found.regex) is not None
    assert found.search("the NPU device was not found") is not None
    assert found.search("~/.npu/cache not found, npu is not found")  # a later head matches
    assert found.search("npu/x not found") is None
    # what its head's first place gives is what the regex's own search gives
    line = "npu " * 2000 + "not found"
    assert found.search(line).span() == re.search(found.regex, line).span()  # type: ignore[union-attr]
    # a later head inside the first one's span, ending before it, is tried too
    nested = compile_signature(r"(abc|b).*c")
    assert nested.search("abc") is not None
    assert nested.search("abc").span() == (1, 3)  # type: ignore[union-attr]
    # a head that repeats something, or none before the ".*", is searched as before
    assert _head(r"(?i)\bcmake\d+\b.*required") is None
    assert _head(r"a|b.*c") is None
    assert _head(r"(?i)\bnpu\b.*?not found") is None
    assert _head(r".*failed") is None
