from __future__ import annotations

import os
from pathlib import Path

import pytest

from xdnaforge import yamlfile
from xdnaforge.errors import ConfigError, Problem
from xdnaforge.yamlfile import describe, format_path, parse, shown_key


def test_positions_point_at_each_key() -> None:
    document = parse("a:\n  b: 1\n  c:\n    - x\n    - y\n", "f.yaml")
    assert document.where(("a", "b")) == (2, 3)
    assert document.where(("a", "c", 1)) == (5, 7)


def test_where_falls_back_to_the_nearest_known_parent() -> None:
    document = parse("a:\n  b: 1\n", "f.yaml")
    assert document.where(("a", "missing", 3)) == (1, 1)
    assert document.where(("a", "b", "deeper")) == (2, 3)


def test_duplicate_key_is_a_problem_with_both_lines() -> None:
    document = parse("name: x\nother: 1\nname: y\n", "f.yaml")
    assert len(document.problems) == 1
    problem = document.problems[0]
    assert (problem.line, problem.column) == (3, 1)
    assert "duplicate key 'name' (first defined on line 1)" in problem.message


def test_nested_duplicate_keys_are_found() -> None:
    document = parse("a:\n  - k: 1\n    k: 2\n", "f.yaml")
    assert [p.key_path for p in document.problems] == ["a[0].k"]


def test_scalar_text_is_kept_as_written() -> None:
    document = parse("v: 2.10\n", "f.yaml")
    assert document.data == {"v": 2.1}
    assert document.scalars[("v",)] == "2.10"


def test_syntax_error_has_line_and_column() -> None:
    with pytest.raises(ConfigError) as caught:
        parse("a: [1, 2\nb: 3\n", "bad.yaml")
    text = str(caught.value)
    assert text.startswith("bad.yaml:")
    assert "YAML syntax error" in text


def test_empty_document_is_none() -> None:
    assert parse("", "f.yaml").data is None


def test_format_path() -> None:
    assert format_path(("build", "steps", 0, "argv")) == "build.steps[0].argv"
    assert format_path(()) == ""


def _laughs(levels: int) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [" + ",".join([f"*a{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_with_its_line() -> None:
    text = _laughs(9)  # 432 bytes, 387 million values once expanded: unbounded, minutes
    assert len(text) < 500
    with pytest.raises(ConfigError) as caught:
        yamlfile.parse(text, "bomb.yaml")
    problem = caught.value.problems[0]
    assert problem.message == "aliases expand this document past 100000 values"
    assert problem.source == "bomb.yaml"
    assert problem.line == 1


def test_a_recursive_alias_is_a_located_error_not_a_recursion_error() -> None:
    with pytest.raises(ConfigError) as caught:
        yamlfile.parse("steps:\n  - &loop [1, *loop]\n", "loop.yaml")
    problem = caught.value.problems[0]
    assert (problem.line, problem.message) == (
        2,
        "an alias refers to a value that contains it (a recursive alias)",
    )


def test_a_few_aliases_still_work() -> None:
    document = yamlfile.parse("base: &b {a: 1}\nother: *b\n", "ok.yaml")
    assert document.data == {"base": {"a": 1}, "other": {"a": 1}}


SUMMARY = "1 problem in the configuration; nothing was run."


def _refused(text: str, source: str = "f.yaml") -> Problem:
    with pytest.raises(ConfigError) as caught:
        parse(text, source)
    assert len(caught.value.problems) == 1
    return caught.value.problems[0]


def test_an_impossible_date_is_a_located_error_not_a_traceback() -> None:
    problem = _refused("name: x\nreleased: 2024-02-30\n")
    assert (problem.line, problem.column, problem.key_path) == (2, 11, "released")
    assert problem.message == ("YAML reads this as a date or time, and no such date or time exists")
    assert problem.hint == "correct it, or quote it if it is text"


def test_an_impossible_date_as_a_key_is_located_at_the_key() -> None:
    problem = _refused("a:\n  2024-13-01: x\n")
    assert (problem.line, problem.column, problem.key_path) == (2, 3, "a.2024-13-01")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("v: !!int ''\n", "an integer"),  # IndexError inside PyYAML
        ("v: !!int abc\n", "an integer"),  # ValueError
        ("v: !!float abc\n", "a number"),
        ("v: !!bool maybe\n", "a boolean"),  # KeyError
    ],
)
def test_a_tagged_value_its_constructor_cannot_make_is_located(text: str, kind: str) -> None:
    problem = _refused(text)
    assert (problem.line, problem.column, problem.key_path) == (1, 4, "v")
    assert problem.message == f"YAML reads this as {kind}, but it is not one"


def test_a_tagged_timestamp_that_is_no_date_is_located() -> None:
    problem = _refused("steps:\n  - !!timestamp nope\n")  # AttributeError inside PyYAML
    assert (problem.line, problem.key_path) == (2, "steps[0]")
    assert "no such date or time exists" in problem.message


def _numbers_are_never_converted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every number and date constructor fail the test if it is ever called."""

    def converted(*_: object) -> None:
        raise AssertionError("a constructor ran on a value that should have been refused")

    for tag in ("int", "float", "timestamp"):
        monkeypatch.setitem(
            yamlfile._Loader.yaml_constructors, f"tag:yaml.org,2002:{tag}", converted
        )


def test_a_5000_digit_integer_is_refused_by_its_length_before_any_conversion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _numbers_are_never_converted(monkeypatch)
    problem = _refused("jobs: " + "7" * 5000 + "\n")
    assert (problem.line, problem.column, problem.key_path) == (1, 7, "jobs")
    assert problem.message == (
        "YAML reads this as an integer of 5000 characters, longer than the 64 any setting needs"
    )
    assert problem.hint == "quote it if it is text"
    assert "7777" not in str(ConfigError([problem]))


def test_a_long_base_60_number_is_refused_before_any_conversion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # YAML 1.1 reads 1:2:3 as 3723; PyYAML's loop over 20,000 parts multiplies ever larger
    # integers: 4,000 parts took 22 s, these would take minutes if they were converted
    _numbers_are_never_converted(monkeypatch)
    text = "v: " + ":".join(["1", *["2"] * 20_000]) + "\n"
    problem = _refused(text)
    assert problem.key_path == "v"
    assert problem.message.startswith("YAML reads this as an integer of 40001 characters")
    assert problem.hint == (
        "quote it if it is text (YAML 1.1 reads digits joined by ':' as one base-60 number)"
    )


def test_the_same_long_base_60_number_is_refused_when_it_converts_normally() -> None:
    # without the guard above: PyYAML's own constructors never see it either
    problem = _refused("v: " + ":".join(["1", *["2"] * 20_000]) + ".5\n")
    assert problem.message.startswith("YAML reads this as a number of 40003 characters")


@pytest.mark.parametrize(
    "value",
    [
        "1" * 65 + ".5",  # a float
        "2024-01-01 10:00:00." + "1" * 60,  # a timestamp with a long fraction
        "0x" + "f" * 100,
    ],
)
def test_numbers_and_dates_longer_than_64_characters_are_refused(value: str) -> None:
    problem = _refused(f"v: {value}\n")
    assert "longer than the 64 any setting needs" in problem.message


def test_numbers_up_to_the_limit_still_load() -> None:
    document = parse(
        "a: 1e99999\nb: !!float 1e99999\nc: 1:2:3\nd: " + "9" * 64 + "\ne: 2024-02-29\n",
        "f.yaml",
    )
    assert document.data["a"] == "1e99999"  # YAML 1.1 needs a sign after e: a string
    assert document.data["b"] == float("inf")
    assert document.data["c"] == 3723
    assert document.data["d"] == int("9" * 64)
    assert str(document.data["e"]) == "2024-02-29"


def test_an_unknown_tag_is_refused_without_naming_it() -> None:
    problem = _refused("token: !hunter2secret value\n")
    assert (problem.line, problem.key_path) == (1, "token")
    assert problem.message == "a value with a tag this loader does not know"
    assert "hunter2" not in str(ConfigError([problem]))


def test_python_object_tags_are_refused() -> None:
    problem = _refused("x: !!python/object/apply:os.system [echo]\n")
    assert problem.message == "a value with a tag this loader does not know"


@pytest.mark.parametrize(("text", "shown"), [("a: =\n", "="), ("a: <<\n", "<<")])
def test_yaml_syntax_that_is_not_a_value_asks_for_quotes(text: str, shown: str) -> None:
    problem = _refused(text)
    assert problem.message == f"an unquoted {shown} is YAML syntax, not a value"
    assert problem.hint == "quote it"


def test_merge_keys_still_merge() -> None:
    document = parse("b: &b {x: 1}\na: {<<: *b, y: 2}\n", "f.yaml")
    assert document.data["a"] == {"x": 1, "y": 2}


def test_a_key_that_is_a_list_is_refused_before_its_aliases_expand() -> None:
    # the whole bomb inside one key: str() of its node would expand all nine levels
    levels = ["&a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]"]
    levels += [f"&a{n} [" + ",".join([f"*a{n - 1}"] * 9) + "]" for n in range(1, 10)]
    problem = _refused("? [" + ", ".join(levels) + "]\n: 1\n")
    assert (problem.line, problem.column) == (1, 3)
    assert problem.message == "a key must be plain text"


def test_alias_and_anchor_names_are_not_echoed() -> None:
    for text in ("a: *hunter2secret\n", "a: &hunter2secret 1\nb: &hunter2secret 2\n"):
        problem = _refused(text)
        assert problem.message.startswith("YAML syntax error: ")
        assert "hunter2" not in str(ConfigError([problem]))


def test_pyyaml_problems_lose_the_text_they_quote_from_the_file() -> None:
    # the pure-Python loader quotes anchors and tags (found undefined alias 'x')
    assert yamlfile._scrub("found undefined alias 'hunter2'") == (
        "found undefined alias (7 characters)"
    )
    assert yamlfile._scrub("expected ',' or ']'") == "expected ',' or ']'"


def test_a_control_character_is_located() -> None:
    problem = _refused("a: b\nc: x\x01\n")
    assert (problem.line, problem.column) == (2, 5)
    assert problem.message == (
        "YAML syntax error: character #x0001: control characters are not allowed"
    )


def test_keys_that_do_not_look_like_identifiers_are_shown_by_their_size() -> None:
    assert format_path(("mirrors", "https://x.example/a b")) == ("mirrors.<a key of 21 characters>")
    assert format_path(("depends", "ubuntu-26.04", 0)) == "depends.ubuntu-26.04[0]"
    assert shown_key("order") == "'order'"
    assert shown_key("AWS_SECRET_ACCESS_KEY=abc") == "of 25 characters"


def test_a_duplicate_secret_key_is_reported_without_it() -> None:
    document = parse("'pass word 1': a\n'pass word 1': b\n", "f.yaml")
    (problem,) = document.problems
    assert problem.key_path == "<a key of 11 characters>"
    assert problem.message == "duplicate key of 11 characters (first defined on line 1)"


@pytest.mark.parametrize(
    ("value", "written", "described"),
    [
        ("hunter2", None, "a string of 7 characters"),
        ("", None, "a string of 0 characters"),
        ("x", None, "a string of 1 character"),
        (int("7" * 60), "7" * 60, "an integer of 60 digits"),
        (3, "3", "an integer of 1 digit"),
        (255, "0xff", "an integer of 4 characters"),
        (1.6, "1.6", "a number of 3 characters"),
        (False, "no", "the boolean no"),
        (True, None, "a boolean"),
        (None, None, "nothing (null)"),
        (b"abc", None, "binary data of 3 bytes"),
        ({"a": 1}, None, "a mapping"),
        ([1], None, "a list"),
    ],
)
def test_describe_says_what_a_value_is_never_what_it_says(
    value: object, written: str | None, described: str
) -> None:
    assert describe(value, written) == described


def _config_file(tmp_path: Path, text: str = "a: 1\n") -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    return path


def test_a_hard_linked_configuration_file_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "credentials"
    secret.write_text("token: hunter2secret\n")
    linked = tmp_path / "recipe.yaml"
    os.link(secret, linked)
    with pytest.raises(ConfigError) as caught:
        yamlfile.load(linked, "recipes/x.yaml", owner=os.getuid())
    assert str(caught.value).splitlines() == [
        "recipes/x.yaml:1:1: has 2 hard links, so it may be another file's content: "
        "not read; copy it instead of linking it",
        "1 problem in the configuration; nothing was run.",
    ]
    # without an owner (not a project file) the link count is not judged
    assert yamlfile.load(linked, "x.yaml").data == {"token": "hunter2secret"}


def test_a_symbolic_link_to_a_single_file_is_read(tmp_path: Path) -> None:
    target = _config_file(tmp_path)
    link = tmp_path / "site.yaml"
    link.symlink_to(target)
    assert yamlfile.load(link, "site.yaml", owner=os.getuid()).data == {"a": 1}


def test_a_symbolic_link_to_a_hard_linked_file_is_judged_by_the_file(tmp_path: Path) -> None:
    target = _config_file(tmp_path)
    os.link(target, tmp_path / "second")
    link = tmp_path / "site.yaml"
    link.symlink_to(target)
    with pytest.raises(ConfigError, match="has 2 hard links"):
        yamlfile.load(link, "site.yaml", owner=os.getuid())


def test_a_file_of_another_owner_is_not_read(tmp_path: Path) -> None:
    path = _config_file(tmp_path, "token: hunter2secret\n")
    if os.getuid() == 0:  # root's own files are always accepted: give it to a stranger
        os.chown(path, 54321, -1)
        owner, stranger = 0, 54321
    else:
        owner, stranger = os.getuid() + 1, os.getuid()
    with pytest.raises(ConfigError) as caught:
        yamlfile.load(path, "site.yaml", owner=owner)
    text = str(caught.value)
    assert text.startswith(f"site.yaml:1:1: is owned by {yamlfile._user(stranger)}, not by ")
    assert text.endswith(f"not read; chown it to {yamlfile._name(owner)}\n" + SUMMARY)
    assert "hunter2" not in text


def test_a_file_owned_by_root_or_the_owner_is_read(tmp_path: Path) -> None:
    path = _config_file(tmp_path)
    assert yamlfile.load(path, "f.yaml", owner=path.stat().st_uid).data == {"a": 1}


def test_a_file_larger_than_the_limit_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as handle:  # sparse: no 16 MiB written
        handle.truncate(yamlfile.MAX_BYTES + 1)
    with pytest.raises(ConfigError, match=r"big\.yaml:1:1: is larger than 16 MiB: not read"):
        yamlfile.load(path, "big.yaml")


def test_a_directory_or_a_fifo_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)  # opening it must not block, reading it must not happen
    for path in (tmp_path, fifo):
        with pytest.raises(ConfigError, match=r"x\.yaml:1:1: not a regular file"):
            yamlfile.load(path, "x.yaml", owner=os.getuid())
