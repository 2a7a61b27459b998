"""JSON nesting measured on the raw text before any parser reads it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stores.engine.validation import nesting_depth
from stores.services import bounded_json

LIMIT = 5

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab\n'),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet='[]{}"\\ab'), inner, max_size=3)
    ),
    max_leaves=30,
)


def refused(text: str | bytes) -> bool:
    try:
        bounded_json.check_nesting(text, limit=LIMIT)
    except bounded_json.JsonTooDeep:
        return True
    return False


@given(json_values)
def test_a_value_is_refused_exactly_when_it_nests_past_the_limit(value: Any) -> None:
    text = json.dumps(value)
    expected = nesting_depth(value, LIMIT) > LIMIT
    assert refused(text) is expected
    assert refused(text.encode()) is expected


def test_brackets_inside_strings_escaped_quotes_included_do_not_count() -> None:
    assert not refused(json.dumps({"a": '[[[[[[[[\\"[[[[[[[[', "b": ["]]]]]]"]}))


@pytest.mark.parametrize("opener", ["[", '{"k":'])
def test_the_depth_past_the_limit_is_refused_at_the_limit_not_before(opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    assert not refused(opener * LIMIT + "1" + closer * LIMIT)
    assert refused(opener * (LIMIT + 1) + "1" + closer * (LIMIT + 1))


def test_the_hostile_pam_upload_is_refused_before_it_is_parsed() -> None:
    hostile = b'{"owner":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(bounded_json.JsonTooDeep) as refusal:
        bounded_json.check_nesting(hostile, "memory-store.json", limit=32)
    assert refusal.value.message == (
        "memory-store.json nests objects and arrays more than 32 levels deep; the limit is 32."
    )


def test_text_that_is_not_json_is_left_to_its_parser() -> None:
    for text in ('"unterminated [[[[[[[[', "]]]]]]]]", "[1] [[[[[[[[", ""):
        assert not refused(text)
    with pytest.raises(json.JSONDecodeError):
        bounded_json.loads("]]]]")


def test_a_file_is_measured_without_being_read_into_memory(tmp_path) -> None:
    shallow, deep, empty = tmp_path / "shallow.json", tmp_path / "deep.json", tmp_path / "e"
    shallow.write_text('{"memories": [[1]]}')
    deep.write_text("[" * 40 + "]" * 40)
    empty.write_text("")
    bounded_json.check_file(shallow)
    bounded_json.check_file(empty)
    with pytest.raises(bounded_json.JsonTooDeep, match=r"deep\.json nests"):
        bounded_json.check_file(deep)
