"""Which options a build script accepts, read from its case arms."""

from __future__ import annotations

from xdnaforge.planning.buildscript import parse_options, unknown_options

ONE_PER_LINE = """while [ $# -gt 0 ]; do
  case "$1" in
    -npu|-opt) ;;
    "-nokmod") nokmod=1 ;;
    ( -j ) shift; jobs=$1 ;;
    *) echo "unknown option $1"; exit 1 ;;
  esac
  shift
done
"""

SEVERAL_PER_LINE = """while [ $# -gt 0 ]; do
  case "$1" in -release) release=1;; -nokmod) nokmod=1;; -j) shift; jobs=$1;;
    -debug|-dbg) release=0;& -verbose) verbose=1;;& -help) usage;;
    *) echo "unknown option"; exit 1;;
  esac
  shift
done
"""


def test_arms_that_start_a_line() -> None:
    assert parse_options(ONE_PER_LINE) == {"-npu", "-opt", "-nokmod", "-j"}


def test_several_arms_on_one_line_as_bash_reads_them() -> None:
    assert parse_options(SEVERAL_PER_LINE) == {
        "-release",
        "-nokmod",
        "-j",
        "-debug",
        "-dbg",
        "-verbose",
        "-help",
    }


def test_unknown_options_skip_the_values_of_value_options() -> None:
    accepted = parse_options(SEVERAL_PER_LINE)
    assert unknown_options(["./build.sh", "-release", "-j", "8", "-npu"], accepted) == ["-npu"]
