"""Line inserts, prepend and numbered views.

The view's format and the insert's cases are the facts of the Anthropic SDK's memory tool
(its filesystem reference implementation and that implementation's tests): six-place
right-aligned numbers and a tab, a range that is 1-based and inclusive, `insert_line` 0 before
the first line and out of range naming [0, lines], and a result that ends with a line ending.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stores.editing import (
    InvalidEdit,
    NoMatch,
    TooLong,
    insert_lines,
    line_count,
    prepend,
    view_lines,
)

# Lines without any character Python's splitlines() would also break on.
line_text = st.text(alphabet="ab é#-\t", max_size=12)
endings = st.sampled_from(["\n", "\r\n"])


@st.composite
def texts(draw: st.DrawFn) -> str:
    """A text of whole lines in LF or CRLF (sometimes mixed), with or without a final ending."""
    lines = draw(st.lists(line_text, max_size=8))
    ending = draw(endings)
    mixed = draw(st.booleans())
    pieces = [line + (draw(endings) if mixed else ending) for line in lines]
    text = "".join(pieces)
    if pieces and draw(st.booleans()):
        text = text.removesuffix(pieces[-1]) + lines[-1]  # no final line ending
    return text


# --- insert -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (1, "Line 1\nInserted Line\nLine 2\n"),
        (0, "Inserted Line\nLine 1\nLine 2\n"),
        (2, "Line 1\nLine 2\nInserted Line\n"),
    ],
)
def test_insert_at_a_line_as_the_sdk_does(line, expected):
    assert insert_lines("Line 1\nLine 2", line, "Inserted Line") == expected


@pytest.mark.parametrize("line", [-1, 3, 10])
def test_an_insert_line_out_of_range_is_a_miss_naming_the_range(line):
    with pytest.raises(NoMatch) as refused:
        insert_lines("Line 1\nLine 2", line, "text")
    assert f"insert_line {line} is outside the text" in refused.value.message
    assert "[0, 2]" in refused.value.message


@pytest.mark.parametrize("line", [True, 1.0, "1", None])
def test_an_insert_line_must_be_a_whole_number(line):
    with pytest.raises(InvalidEdit):
        insert_lines("a\nb\n", line, "x")


def test_a_crlf_document_gets_its_inserted_lines_in_crlf():
    document = "line1\r\nline2\r\nline3\r\n"
    assert insert_lines(document, 1, "one\ntwo\n") == "line1\r\none\r\ntwo\r\nline2\r\nline3\r\n"


def test_an_empty_text_takes_its_first_line():
    assert line_count("") == 0
    assert insert_lines("", 0, "first") == "first\n"
    with pytest.raises(NoMatch) as refused:
        insert_lines("", 1, "first")
    assert "[0, 0]" in refused.value.message


def test_an_insert_past_the_limit_is_refused_with_the_length_it_would_have():
    with pytest.raises(TooLong) as refused:
        insert_lines("a\nb", 1, "xyz", max_length=7)
    assert refused.value.length == len("a\nxyz\nb\n") == 8


@given(texts(), st.lists(line_text, min_size=1, max_size=3), st.data())
def test_an_insert_adds_exactly_its_lines_and_keeps_every_other_byte(text, new, data):
    lines = line_count(text)
    at = data.draw(st.integers(0, lines))
    ending = "\r\n" if text.count("\r\n") and 2 * text.count("\r\n") >= text.count("\n") else "\n"
    # One final line ending is optional; a last line that is empty needs it to be seen.
    final = "\n" if new[-1] == "" else data.draw(st.sampled_from(["", "\n"]))
    result = insert_lines(text, at, "\n".join(new) + final)
    assert result.splitlines() == text.splitlines()[:at] + new + text.splitlines()[at:]
    assert result.endswith("\n")
    assert line_count(result) == lines + len(new)
    # Each line the text had keeps its own line ending (a last line without one gets the
    # dominant one); the new lines take the dominant one.
    kept = text.splitlines(keepends=True)
    if kept and not kept[-1].endswith("\n"):
        kept[-1] += ending
    expected = kept[:at] + [line + ending for line in new] + kept[at:]
    assert result.splitlines(keepends=True) == expected


@given(texts(), st.lists(line_text, min_size=1, max_size=3))
def test_prepend_is_an_insert_before_the_first_line(text, new):
    content = "\n".join(new)
    if not content.strip():
        with pytest.raises(InvalidEdit):
            prepend(text, content)
    else:
        assert prepend(text, content) == insert_lines(text, 0, content)


# --- view -------------------------------------------------------------------------------


def test_a_view_numbers_lines_as_the_sdk_does():
    view = view_lines("Line 1\nLine 2\nLine 3")
    assert view.text == "     1\tLine 1\n     2\tLine 2\n     3\tLine 3"
    assert (view.first, view.last, view.total) == (1, 3, 3)


def test_a_view_range_is_one_based_and_inclusive():
    view = view_lines("Line 1\nLine 2\nLine 3\nLine 4\nLine 5", 2, 4)
    assert view.text == "     2\tLine 2\n     3\tLine 3\n     4\tLine 4"


def test_a_final_line_ending_is_followed_by_an_empty_numbered_line_and_crlf_shows_as_lf():
    view = view_lines("line1\r\nline2\r\nline3\r\n")
    assert view.text == "     1\tline1\n     2\tline2\n     3\tline3\n     4\t"


def test_an_end_of_minus_one_or_past_the_text_reads_to_the_last_line():
    text = "a\nb\nc"
    assert view_lines(text, 2, -1).text == view_lines(text, 2, 99).text == "     2\tb\n     3\tc"
    assert view_lines(text, 2, 99).last == 3


@pytest.mark.parametrize(
    ("start", "end", "says"),
    [(0, 2, "[1, 3]"), (4, None, "[1, 3]"), (3, 2, "at least 3"), ("1", None, "whole number")],
)
def test_a_view_outside_the_text_is_a_miss_naming_its_range(start, end, says):
    with pytest.raises(InvalidEdit if says == "whole number" else NoMatch) as refused:
        view_lines("a\nb\nc", start, end)
    assert says in refused.value.message


def test_numbers_widen_past_six_places_without_breaking_the_tab():
    view = view_lines("x\n" * 1_000_000, 1_000_000, 1_000_000)
    assert view.text == "1000000\tx"


@given(texts(), st.data())
def test_a_view_shows_each_line_of_its_range_once_in_order(text, data):
    total = text.count("\n") + 1
    start = data.draw(st.integers(1, total))
    end = data.draw(st.one_of(st.none(), st.just(-1), st.integers(start, total + 3)))
    view = view_lines(text, start, end)
    last = total if end in (None, -1) else min(end, total)
    rows = view.text.split("\n")
    assert [int(row.split("\t", 1)[0]) for row in rows] == list(range(start, last + 1))
    assert all(re.fullmatch(r" *\d{1,6}\t.*", row) and len(row.split("\t")[0]) == 6 for row in rows)
    shown = [row.split("\t", 1)[1] for row in rows]
    assert shown == text.replace("\r\n", "\n").split("\n")[start - 1 : last]
    assert (view.first, view.last, view.total) == (start, last, total)
