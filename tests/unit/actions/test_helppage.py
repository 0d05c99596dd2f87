"""A command's help page is made from its own options; examples and exit codes are its own."""

from __future__ import annotations

from xdnaforge.actions import helppage

PARAMS = [
    {"name": "target", "long": "target", "short": "t", "type": str, "default": "", "help": "T"},
    {"name": "yes", "long": "yes", "type": bool, "default": False, "help": "run it"},
    {"name": "deb", "long": "deb", "type": list, "default": [], "help": "a .deb"},
    {"name": "help", "long": "help", "type": bool, "default": False, "help": "this"},
]


def test_the_page_lists_the_options_given_with_their_values_and_help_once() -> None:
    page = helppage.render("install", "Install it.", PARAMS)
    options = page.split("options:\n")[1].split("\n\n")[0]
    assert "  -t, --target VALUE\n      T" in options
    assert "  --yes\n      run it" in options  # a flag takes no value
    assert "  --deb VALUE ...\n      a .deb (repeatable)" in options
    assert options.count("--help") == 1


def test_examples_under_sudo_keep_the_caller_s_environment() -> None:
    page = helppage.render("install", "Install it.", PARAMS, "doit")
    assert "  sudo -E .venv/bin/doit install --target ubuntu26-compat --yes" in page
    assert "  sudo -E xdnaforge install" in helppage.render("install", "", PARAMS, "xdnaforge")


def test_every_known_task_has_two_distinct_examples_and_a_0_and_a_3() -> None:
    for task, usage in helppage.USAGE.items():
        assert len(set(usage.examples)) == 2, task
        codes = [code for code, _ in usage.codes]
        assert 0 in codes, task
        assert 3 in codes, task
        assert codes == sorted(codes), task


def test_a_preview_is_exit_0_for_every_command_that_changes_the_system() -> None:
    for task in ("install", "rollback", "env", "deps", "memlock", "pyxrt", "kernel-hook"):
        assert helppage.PREVIEW in helppage.USAGE[task].codes, task


def test_news_exits_1_in_matrix_and_fleet_report_alike() -> None:
    for task in ("matrix", "fleet-report"):
        meaning = dict(helppage.USAGE[task].codes)[1]
        assert meaning.startswith("NEWS"), task
