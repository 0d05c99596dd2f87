"""doit's verbs that do not apply refuse in one line naming what to use instead."""

from __future__ import annotations

from xdnaforge.cli.refused import REFUSED, refusal


def test_each_refusal_is_one_line_under_the_program_s_name() -> None:
    for verb in REFUSED:
        for program in ("doit", "xdnaforge"):
            line = refusal(verb, program)
            assert line is not None
            assert line.startswith(f"{program} {verb}: not used by xdnaforge; ")
            assert "\n" not in line
            assert "{program}" not in line


def test_the_verbs_that_apply_are_not_refused() -> None:
    for verb in ("run", "list", "help", "build"):
        assert refusal(verb, "doit") is None
