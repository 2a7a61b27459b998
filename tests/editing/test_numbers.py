"""Which JSON values count as numbers: a flag never does, though Python calls True an int."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stores.editing.numbers import is_number, is_whole_number


@pytest.mark.parametrize(
    ("value", "whole", "number"),
    [
        (0, True, True),
        (-3, True, True),
        (10**20, True, True),
        (2.0, False, True),
        (0.5, False, True),
        (True, False, False),
        (False, False, False),
        ("1", False, False),
        (None, False, False),
        ([1], False, False),
    ],
)
def test_whole_numbers_and_numbers(value, whole, number):
    assert is_whole_number(value) is whole
    assert is_number(value) is number


@given(st.integers())
def test_every_integer_is_a_whole_number(value):
    assert is_whole_number(value) and is_number(value)


@given(st.recursive(st.none() | st.booleans() | st.text(), st.lists, max_leaves=5))
def test_no_flag_text_or_list_is_a_number(value):
    assert not is_whole_number(value) and not is_number(value)
