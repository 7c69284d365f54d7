"""The run launcher's number fields refuse what would silently mean "no limit" or "stop at once"."""

from __future__ import annotations

import pytest

from tui.screens.runs.data import optional_number


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "-1", "0"])
def test_budget_fields_refuse_non_finite_and_non_positive_numbers(text: str) -> None:
    with pytest.raises(ValueError, match=f"max seconds must be a finite number above 0, got '{text}'"):
        optional_number(text, "max seconds", float)


def test_budget_fields_take_plain_numbers_and_blank() -> None:
    assert optional_number(" 2.5 ", "max seconds", float) == 2.5
    assert optional_number("", "limit") is None
    assert optional_number("3", "limit") == 3
