from __future__ import annotations

import time

import pytest

from xdnaforge import yamlfile
from xdnaforge.errors import ConfigError
from xdnaforge.yamlfile import format_path, parse


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


def test_an_alias_bomb_is_refused_quickly_with_its_line() -> None:
    text = _laughs(9)  # 432 bytes, 387 million values once expanded
    assert len(text) < 500
    started = time.monotonic()
    with pytest.raises(ConfigError) as caught:
        yamlfile.parse(text, "bomb.yaml")
    assert time.monotonic() - started < 5
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
