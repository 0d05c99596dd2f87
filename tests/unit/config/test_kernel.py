from __future__ import annotations

import pytest

from xdnaforge.config.kernel import parse_range, parse_release


def test_parse_release_reads_ubuntu_abi_number() -> None:
    assert parse_release("7.0.0-27-generic") == (7, 0, 0, 27)
    assert parse_release("6.18.9") == (6, 18, 9, 0)
    assert parse_release("6.14.0-rc3") == (6, 14, 0, 0)
    assert parse_release("not a kernel") is None


@pytest.mark.parametrize(
    ("release", "inside"),
    [
        ("7.0.0-27-generic", True),
        ("7.0.5-1-generic", True),
        ("7.1.0-1-generic", False),
        ("6.19.3", False),
        ("garbage", False),
    ],
)
def test_range_contains(release: str, inside: bool) -> None:
    assert parse_range(">=7.0, <7.1").contains(release) is inside


def test_exact_bound_compares_the_components_it_names() -> None:
    assert parse_range("==6.18.9").contains("6.18.9-zimaos")
    assert not parse_range("==6.18.9").contains("6.18.10")


def test_bad_constraint_names_which_part_without_repeating_it() -> None:
    with pytest.raises(ValueError, match=r"^part 2 is not a constraint like '>=7\.0'") as caught:
        parse_range(">=6.0, ~7.0")
    assert "~7.0" not in str(caught.value)
