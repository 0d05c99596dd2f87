"""doit's parse errors said without Python reprs."""

from __future__ import annotations

from xdnaforge.cli.parse_errors import plain

UNKNOWN = (
    "Error parsing Task: option --tagret not recognized (parsing options: "
    "[CmdOption({'name':'target', 'short':'t','long':'target' }), "
    "CmdOption({'name':'help', 'short':'','long':'help' })]). Got: ['--tagret', 'x']"
)


def test_an_unknown_option_names_the_task_s_options() -> None:
    assert plain(UNKNOWN, "build", "doit") == (
        "doit build: unknown option --tagret; its options: --target, --help "
        "(`doit build --help` lists them)"
    )


def test_a_missing_value_and_a_wrong_type_are_one_line() -> None:
    missing = "Error parsing Task: option --target requires argument (parsing options: [])"
    assert plain(missing, "plan", "xdnaforge") == (
        "xdnaforge plan: option --target needs a value (`xdnaforge plan --help` lists them)"
    )
    typed = (
        "Error parsing parameter 'timeout' <class 'int'>.\n"
        "invalid literal for int() with base 10: 'abc'\n"
    )
    assert plain(typed, "prove", "doit") == "option --timeout takes a whole number, got 'abc'"


def test_anything_else_is_left_as_it_is() -> None:
    assert plain("something else", "build", "doit") == "something else"
