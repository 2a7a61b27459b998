from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from stores.editing import (
    MAX_BATCH_EDITS,
    Ambiguous,
    InvalidEdit,
    NoChange,
    NoMatch,
    PhraseEdit,
    Status,
    TooLong,
    apply_edit,
    apply_edits,
)
from stores.editing.limits import MAX_BATCH_WORK


def test_unique_phrase_is_replaced():
    applied = apply_edit("The user lives in Paris.\nThey like tea.", "Paris", "Lyon")
    assert applied.text == "The user lives in Lyon.\nThey like tea."
    assert applied.replacements == 1
    assert applied.lines == (1,)


def test_absent_phrase_is_no_match_with_the_closest_line():
    with pytest.raises(NoMatch) as refused:
        apply_edit("alpha\nThe user lives in Paris.\nomega", "The user lives in Pariss", "x")
    assert refused.value.status is Status.NO_MATCH
    assert refused.value.near_miss.line == 2
    assert "Paris" in refused.value.near_miss.text


@pytest.mark.parametrize(
    ("document", "old_string", "explained"),
    [
        ("price:\u00a010 euros", "price: 10 euros", "non-breaking space"),
        ("it\u2019s \u201cfine\u201d", 'it\'s "fine"', "quotes"),
        ("key\tvalue", "key value", "tabs and spaces"),
        ("first line   \nsecond", "first line\nsecond", "trailing whitespace"),
        ("Call Mom on Sunday", "call mom on sunday", "letter case"),
    ],
)
def test_invisible_differences_are_explained(document, old_string, explained):
    with pytest.raises(NoMatch) as refused:
        apply_edit(document, old_string, "replacement")
    assert explained in refused.value.near_miss.explanation
    assert explained in refused.value.message


def test_repeated_phrase_is_ambiguous_with_count_and_lines():
    with pytest.raises(Ambiguous) as refused:
        apply_edit("tea\ncoffee\ntea and tea", "tea", "water")
    assert refused.value.count == 3
    assert refused.value.lines == (1, 3)


def test_an_ambiguous_refusal_names_the_first_hundred_lines_and_counts_them_all():
    text = "\n".join(f"entry {n}: tea" for n in range(5000))
    with pytest.raises(Ambiguous) as refused:
        apply_edit(text, "tea", "water")
    assert refused.value.count == 5000
    assert refused.value.lines == tuple(range(1, 101))
    assert len(refused.value.occurrences) == 5


def test_replace_all_replaces_every_occurrence():
    applied = apply_edit("tea\ncoffee\ntea and tea", "tea", "water", replace_all=True)
    assert applied.text == "water\ncoffee\nwater and water"
    assert applied.replacements == 3


def test_identical_strings_are_no_change():
    with pytest.raises(NoChange):
        apply_edit("text", "text", "text")


def test_empty_old_string_only_inserts_into_empty_text():
    assert apply_edit("", "", "first words").text == "first words"
    with pytest.raises(InvalidEdit) as refused:
        apply_edit("something", "", "more")
    assert refused.value.status == Status.INVALID


def test_lf_phrase_matches_crlf_document_which_keeps_crlf():
    document = "line one\r\nline two\r\nline three\r\n"
    applied = apply_edit(document, "line one\nline two", "first\nsecond")
    assert applied.text == "first\r\nsecond\r\nline three\r\n"


def test_crlf_phrase_matches_lf_document_which_keeps_lf():
    applied = apply_edit("a\nb\nc\n", "a\r\nb", "x\r\ny")
    assert applied.text == "x\ny\nc\n"


def test_mixed_line_endings_outside_the_edit_are_untouched():
    document = "keep\r\nthis\nmixed\r\n"
    assert apply_edit(document, "this", "that").text == "keep\r\nthat\nmixed\r\n"


def test_batch_applies_all_or_nothing():
    assert apply_edits("a b c", [PhraseEdit("a", "x"), PhraseEdit("c", "z")]).text == "x b z"
    with pytest.raises(NoMatch):
        apply_edits("a b c", [PhraseEdit("a", "x"), PhraseEdit("missing", "z")])


def test_near_miss_in_a_huge_single_line_stays_fast():
    document = "lorem ipsum dolor " * 60_000 + "needle in the haystack"
    with pytest.raises(NoMatch) as refused:
        apply_edit(document, "needle in a haystack", "x")
    assert refused.value.near_miss is not None


def test_replace_all_over_the_limit_is_refused_from_the_match_count_before_building():
    text = "a" * 100_000
    with pytest.raises(TooLong) as refused:
        apply_edit(text, "a", "b" * 2000, replace_all=True, max_length=100_000)
    assert refused.value.status is Status.INVALID
    assert (refused.value.limit, refused.value.length) == (100_000, 200_000_000)
    assert "100000 occurrences" in refused.value.message
    assert "at most 100000" in refused.value.message


def test_a_batch_stops_at_the_first_edit_that_crosses_the_limit():
    edits = [PhraseEdit("a", "aa", replace_all=True)] * 10
    with pytest.raises(TooLong) as refused:
        apply_edits("a" * 100_000, edits, max_length=100_000)
    assert refused.value.length == 200_000
    assert refused.value.message.startswith("Edit 1 of 10:")
    # Steps that stay within the limit apply; the one that crosses it is named.
    with pytest.raises(TooLong) as refused:
        apply_edits("a" * 1000, edits, max_length=5000)
    assert refused.value.message.startswith("Edit 3 of 10:")
    assert refused.value.length == 8000


def test_a_batch_of_more_edits_than_a_batch_takes_is_refused_naming_the_bound():
    # The first edit matches nothing: refused as too many, no step ran.
    edits = [PhraseEdit("missing", "x")] + [PhraseEdit("word", "WORD")] * MAX_BATCH_EDITS
    with pytest.raises(InvalidEdit) as refused:
        apply_edits("word " * 100, edits)
    assert refused.value.details == {
        "field": "edits",
        "limit": MAX_BATCH_EDITS,
        "count": MAX_BATCH_EDITS + 1,
    }
    assert f"at most {MAX_BATCH_EDITS}" in refused.value.message


def test_a_batch_that_would_read_too_much_text_is_refused_before_its_first_step():
    text = "x" * 499_000 + " tail"
    edits = [PhraseEdit("tail", "end"), PhraseEdit("end", "tail")] * 30
    with pytest.raises(InvalidEdit) as refused:
        apply_edits(text, [PhraseEdit("missing", "x"), *edits[1:]])
    assert refused.value.details == {
        "field": "edits",
        "limit": MAX_BATCH_WORK,
        "work": 60 * len(text),
        "count": 60,
    }
    assert "send about 40 edits a batch" in refused.value.message
    # Within the bound, the same edits apply.
    assert apply_edits(text, edits[:40]).text == text


def test_a_batch_whose_steps_grow_the_text_stops_before_reading_past_the_bound():
    grow = PhraseEdit("seed", "seed" + "y" * 400_000)
    renames = [PhraseEdit(f"w{number} ", f"v{number} ") for number in range(40)]
    text = "seed " + "".join(f"w{number} " for number in range(40)) + "z" * 100_000
    # 41 steps on a 100,245-character text read 4.1 million characters; after the first step
    # grows it to 500,245, the 40 left would read 20 million more.
    with pytest.raises(InvalidEdit) as refused:
        apply_edits(text, [grow, *renames])
    assert refused.value.details["limit"] == MAX_BATCH_WORK
    assert refused.value.details["work"] > MAX_BATCH_WORK


@pytest.mark.parametrize(
    ("document", "old", "new"),
    [
        ("one\r\ntwo\r\none\r\n", "one\n", "uno\ny\n"),  # CRLF spans take CRLF
        ("one two\r\none\r\n", "one", "x\ny"),  # a span without a break: the dominant one
        ("mixed\r\nend\nmixed\n", "mixed\n", "m\r\n\r\n"),  # each span its own ending
        ("a\r\r\nb", "\r\n", "\n\n"),  # a CR before a CRLF stays a CR
    ],
)
def test_the_length_checked_is_the_length_built(document, old, new):
    built = apply_edit(document, old, new, replace_all=True).text
    assert apply_edit(document, old, new, replace_all=True, max_length=len(built)).text == built
    with pytest.raises(TooLong) as refused:
        apply_edit(document, old, new, replace_all=True, max_length=len(built) - 1)
    assert refused.value.length == len(built)


def test_inserting_into_an_empty_text_is_checked_too():
    with pytest.raises(TooLong):
        apply_edit("", "", "x" * 11, max_length=10)


# --- properties -------------------------------------------------------------------------

line_text = st.text(
    alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=30
)
documents = st.lists(line_text, min_size=1, max_size=8)
endings = st.sampled_from(["\n", "\r\n"])


@given(documents, endings, st.data())
def test_an_edit_then_its_inverse_restores_the_text(lines, ending, data):
    document = ending.join(lines)
    normalized = document.replace("\r\n", "\n")
    start = data.draw(st.integers(0, max(0, len(normalized) - 1)))
    end = data.draw(st.integers(start + 1, max(start + 1, len(normalized))))
    old = normalized[start:end]
    assume(old and normalized.count(old) == 1)
    new = data.draw(st.text(alphabet="XYZ\n", min_size=1, max_size=8))
    assume(new != old)
    edited = apply_edit(document, old, new).text
    folded = edited.replace("\r\n", "\n")
    assume(folded.count(new) == 1 and folded.find(new) == folded.rfind(new))
    # The restored line breaks take the document's style, which needs a line break left to show it.
    assume("\n" not in old or "\n" in edited.replace(new, ""))
    assert apply_edit(edited, new, old).text == document


@given(line_text, line_text, line_text, st.text(max_size=20))
def test_a_unique_match_replaces_exactly_one_occurrence(prefix, phrase, suffix, replacement):
    assume(phrase and phrase != replacement)
    document = f"{prefix}{phrase}{suffix}"
    assume(document.count(phrase) == 1)
    edited = apply_edit(document, phrase, replacement).text
    # A line break in the replacement takes the document's style (LF when it has none yet).
    assert edited.replace("\r\n", "\n") == f"{prefix}{replacement}{suffix}".replace("\r\n", "\n")


@given(documents, endings, st.data())
def test_line_endings_are_preserved(lines, ending, data):
    document = ending.join(lines) + ending
    index = data.draw(st.integers(0, len(lines) - 1))
    assume(lines[index] and document.count(lines[index]) == 1)
    new_lines = data.draw(st.lists(line_text, min_size=1, max_size=3))
    assume("\n".join(new_lines) != lines[index])
    edited = apply_edit(document, lines[index], "\n".join(new_lines)).text
    if ending == "\r\n":
        assert "\n" not in edited.replace("\r\n", "")
    else:
        assert "\r" not in edited


@given(st.text(max_size=200), st.text(max_size=20), st.text(max_size=20))
def test_every_outcome_is_a_result_or_a_refusal(document, old, new):
    try:
        applied = apply_edit(document, old, new)
    except (NoMatch, Ambiguous, NoChange, InvalidEdit) as refused:
        assert refused.status in Status
    else:
        assert isinstance(applied.text, str)


# --- expected_replacements -------------------------------------------


def test_expected_replacements_replaces_all_when_the_count_matches():
    applied = apply_edit("tea\ncoffee\ntea and tea", "tea", "water", expected_replacements=3)
    assert applied.text == "water\ncoffee\nwater and water"
    assert applied.replacements == 3


@pytest.mark.parametrize(
    ("expected", "replace_all"), [(2, False), (2, True), (4, True), (1, False)]
)
def test_a_different_count_is_ambiguous_naming_the_real_one(expected, replace_all):
    with pytest.raises(Ambiguous) as refused:
        apply_edit(
            "tea\ncoffee\ntea and tea",
            "tea",
            "water",
            replace_all=replace_all,
            expected_replacements=expected,
        )
    assert refused.value.count == 3 and refused.value.lines == (1, 3)
    assert "occurs 3 times" in refused.value.message
    assert f"not {expected} as expected_replacements says" in refused.value.message


def test_an_empty_text_filled_more_than_once_is_ambiguous_not_a_crash():
    # The type checker found this refusal built without its occurrences: a TypeError, a 500.
    with pytest.raises(Ambiguous) as refused:
        apply_edit("", "", "tea", expected_replacements=2)
    assert refused.value.count == 1 and refused.value.lines == (1,)
    assert refused.value.details["occurrences"] == []
    assert "fills an empty text once, not 2 times" in refused.value.message


def test_one_expected_replacement_of_a_unique_phrase_is_a_plain_edit():
    applied = apply_edit("tea\ncoffee", "coffee", "mate", expected_replacements=1)
    assert applied.text == "tea\nmate" and applied.replacements == 1


def test_an_absent_phrase_stays_no_match_whatever_is_expected():
    with pytest.raises(NoMatch):
        apply_edit("tea\ncoffee", "cocoa", "mate", expected_replacements=2)


@pytest.mark.parametrize("expected", [0, -1, True, 1.5, "2"])
def test_expected_replacements_must_be_a_positive_whole_number(expected):
    with pytest.raises(InvalidEdit) as refused:
        apply_edit("tea tea", "tea", "mate", expected_replacements=expected)
    assert "at least 1" in refused.value.message


def test_a_batch_carries_each_edits_expected_count():
    applied = apply_edits(
        "a a b",
        [PhraseEdit("a", "c", expected_replacements=2), PhraseEdit("b", "d", False, 1)],
    )
    assert applied.text == "c c d" and applied.replacements == 3
    with pytest.raises(Ambiguous):
        apply_edits("a a b", [PhraseEdit("a", "c", expected_replacements=3)])


@given(line_text, st.integers(1, 6), st.integers(1, 6))
def test_expected_replacements_holds_exactly_the_real_count(phrase, real, expected):
    assume(phrase and "|" not in phrase)
    document = "|".join([phrase] * real)
    assume(document.count(phrase) == real)
    if expected == real:
        applied = apply_edit(document, phrase, "|", expected_replacements=expected)
        assert applied.replacements == real and phrase not in applied.text
    else:
        with pytest.raises(Ambiguous) as refused:
            apply_edit(document, phrase, "|", expected_replacements=expected)
        assert refused.value.count == real
