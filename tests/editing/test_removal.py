"""Taking texts out of a JSON value: exactly each occurrence goes, the rest of every string
stays.

Properties: for any string without the marker, the result split on the marker gives the
string split on the text (so nothing else changed, and every occurrence went) and the count
is the number of occurrences; a JSON value keeps its shape and every value that is not a
string.
"""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from stores.editing.removal import replace_within

MARKER = "[redacted]"

# --- examples ---------------------------------------------------------------------------


def test_a_path_holding_the_text_keeps_its_folders():
    assert replace_within("/memories/zebra/notes.md", ["zebra"], MARKER) == (
        f"/memories/{MARKER}/notes.md",
        1,
    )


def test_every_string_of_a_json_value_and_its_keys_lose_the_text():
    value = {"tags": ["zebra", "tea"], "zebra key": {"n": 3, "note": "a zebra, a zebra"}}
    assert replace_within(value, ["zebra"], MARKER) == (
        {"tags": [MARKER, "tea"], f"{MARKER} key": {"n": 3, "note": f"a {MARKER}, a {MARKER}"}},
        4,
    )


def test_the_longer_text_goes_first_and_an_empty_one_is_never_looked_for():
    assert replace_within("zebra-quartz", ["zebra", "", "zebra-quartz"], MARKER) == (MARKER, 1)
    assert replace_within("abc", [""], MARKER) == ("abc", 0)


def test_a_value_without_the_text_is_as_it_was():
    value = [1, 2.5, None, True, {"a": "b"}]
    assert replace_within(value, ["zebra"], MARKER) == (value, 0)


# --- properties -------------------------------------------------------------------------

alphabet = st.sampled_from("ab[]/ -redact")
texts = st.text(alphabet, max_size=40)
needles = st.text(alphabet, min_size=1, max_size=5)


@given(texts, needles)
def test_exactly_every_occurrence_is_replaced_and_nothing_else(value, text):
    assume(MARKER not in value)
    replaced, found = replace_within(value, [text], MARKER)
    assert replaced.split(MARKER) == value.split(text)
    assert found == value.count(text)


# Keys of letters no text has: two keys never become one (the examples cover keys).
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text("xyz", max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


def without_texts(value):
    """The value with every string reduced to a placeholder: its shape and other values."""
    if isinstance(value, list):
        return [without_texts(item) for item in value]
    if isinstance(value, dict):
        return {key: without_texts(item) for key, item in value.items()}
    return "text" if isinstance(value, str) else value


def strings_of(value):
    if isinstance(value, list | dict):
        items = value.values() if isinstance(value, dict) else value
        return [string for item in items for string in strings_of(item)]
    return [value] if isinstance(value, str) else []


@given(json_values, needles)
def test_a_json_value_keeps_its_shape_and_each_string_loses_exactly_the_text(value, text):
    assume(MARKER not in repr(value))
    replaced, found = replace_within(value, [text], MARKER)
    assert without_texts(replaced) == without_texts(value)
    pairs = list(zip(strings_of(replaced), strings_of(value), strict=True))
    assert all(new.split(MARKER) == old.split(text) for new, old in pairs)
    assert found == sum(old.count(text) for _, old in pairs)
