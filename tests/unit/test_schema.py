"""schema.Reader: its messages describe a refused value, never repeat it."""

from __future__ import annotations

import pytest

from xdnaforge.schema import Reader, did_you_mean, not_hex
from xdnaforge.yamlfile import parse

SECRET = "hunter2-s3cret"


def _reader(text: str) -> Reader:
    return Reader(parse(text, "f.yaml"))


def _messages(reader: Reader) -> list[str]:
    return [p.render() for p in reader.problems]


def test_an_unknown_key_is_named_when_it_looks_like_an_identifier() -> None:
    reader = _reader("ordr: [a]\n")
    reader.mapping(reader.document.data, (), optional=("order",))
    assert _messages(reader) == ["f.yaml:1:1: ordr: unknown key 'ordr' (did you mean 'order'?)"]


def test_an_unknown_key_that_is_no_identifier_is_shown_by_its_size() -> None:
    reader = _reader(f"'token={SECRET}': 1\n")
    reader.mapping(reader.document.data, (), optional=("order",))
    assert _messages(reader) == [
        "f.yaml:1:1: <a key of 20 characters>: unknown key of 20 characters\n"
        "    hint: known keys here: order"
    ]


def test_a_wrong_choice_is_described_and_only_the_known_choice_named() -> None:
    reader = _reader("distro: ubunut\nother: " + SECRET + "\n")
    data = reader.document.data
    assert reader.choice(data, "distro", (), ("ubuntu", "debian")) is None
    assert reader.choice(data, "other", (), ("ubuntu", "debian")) is None
    assert _messages(reader) == [
        "f.yaml:1:1: distro: expected one of ubuntu, debian, got a string of 6 characters "
        "(did you mean 'ubuntu'?)",
        "f.yaml:2:1: other: expected one of ubuntu, debian, got a string of 14 characters",
    ]


def test_a_number_or_bool_where_text_belongs_asks_for_quotes_without_repeating_it() -> None:
    reader = _reader("ref: 1.6\nbranch: no\nversion: 2024-01-31\ncount: 12345\n")
    data = reader.document.data
    for key in ("ref", "branch", "version", "count"):
        assert reader.string(data, key, ()) is None
    assert _messages(reader) == [
        "f.yaml:1:1: ref: expected a string, got a number of 3 characters\n"
        "    hint: YAML read the unquoted text as a number; quote it",
        "f.yaml:2:1: branch: expected a string, got the boolean no\n"
        "    hint: YAML read the unquoted text as a boolean; quote it",
        "f.yaml:3:1: version: expected a string, got a date\n"
        "    hint: YAML read the unquoted text as a date; quote it",
        "f.yaml:4:1: count: expected a string, got an integer of 5 digits\n"
        "    hint: YAML read the unquoted text as an integer; quote it",
    ]


def test_type_mistakes_are_described() -> None:
    reader = _reader(f"n: {SECRET}\nf: {SECRET}\nb: {SECRET}\nl: {SECRET}\nm: [1]\n")
    data = reader.document.data
    reader.integer(data, "n", ())
    reader.number(data, "f", ())
    reader.boolean(data, "b", (), default=False)
    reader.sequence(data, "l", ())
    reader.mapping(data["m"], ("m",))
    assert _messages(reader) == [
        "f.yaml:1:1: n: expected an integer, got a string of 14 characters",
        "f.yaml:2:1: f: expected a number, got a string of 14 characters",
        "f.yaml:3:1: b: expected true or false, got a string of 14 characters",
        "f.yaml:4:1: l: expected a list, got a string of 14 characters",
        "f.yaml:5:1: m: expected a mapping, got a list",
    ]


def test_commit_and_sha256_mistakes_say_what_is_wrong_without_the_value() -> None:
    upper = "F0B7BD5FBC9D45892D050CB55701541350390B99"
    reader = _reader(f"a: f0b7bd5\nb: {upper}\nc: {'ab' * 31}\nd: unpinned\ne: unpinned\n")
    data = reader.document.data
    assert reader.commit(data, "a", ()) is None
    assert reader.commit(data, "b", ()) is None
    assert reader.sha256(data, "c", ()) is None
    assert reader.sha256(data, "d", (), unpinned="unpinned") == "unpinned"
    assert reader.sha256(data, "e", (), hint="pin it") is None
    text = "\n".join(_messages(reader))
    assert "f0b7bd5" not in text
    assert upper not in text
    assert _messages(reader) == [
        "f.yaml:1:1: a: expected a full commit id (40 lowercase hex), got a string of 7 "
        "characters\n    hint: a branch, tag or short hash can move or collide; pin the full "
        "id, e.g. from `git rev-parse <ref>`",
        "f.yaml:2:1: b: expected a full commit id (40 lowercase hex), got a string of 40 "
        "characters, not all of them 0-9 or a-f\n    hint: a branch, tag or short hash can "
        "move or collide; pin the full id, e.g. from `git rev-parse <ref>`",
        "f.yaml:3:1: c: expected a sha256 (64 lowercase hex), got a string of 62 characters",
        "f.yaml:5:1: e: expected a sha256 (64 lowercase hex), got a string of 8 characters\n"
        "    hint: pin it",
    ]


def test_an_integer_below_its_minimum_is_refused_without_repeating_it() -> None:
    reader = _reader("jobs: -7321\nok: 3\n")
    data = reader.document.data
    assert reader.integer(data, "jobs", (), minimum=1) is None
    assert reader.integer(data, "ok", (), minimum=1) == 3
    assert _messages(reader) == ["f.yaml:1:1: jobs: must be at least 1"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("ubunut", " (did you mean 'ubuntu'?)"), (SECRET, "")],
)
def test_did_you_mean_names_only_a_close_known_choice(value: str, expected: str) -> None:
    assert did_you_mean(value, ("ubuntu", "debian")) == expected


def test_not_hex_says_why_without_the_value() -> None:
    assert not_hex("abc", 40) == "a string of 3 characters"
    assert not_hex("g" * 40, 40) == "a string of 40 characters, not all of them 0-9 or a-f"
