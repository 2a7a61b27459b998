"""Undoing one change: the inverse of an old change applied to today's text.

Properties: undoing the last change gives back the text before it, for any two texts; an undo
past later edits elsewhere keeps those edits (the result is the old text with only the later
edits); undoing the undo gives back today's text; later edits on the same lines are a conflict
whose region leads back to the change that made it.
"""

from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stores.editing import (
    NoChange,
    Status,
    TooLong,
    UndoConflict,
    touched_by,
    undo_change,
)
from stores.editing import diff as diff_engine
from stores.editing.work import metered

# --- examples ---------------------------------------------------------------------------


def test_undoing_a_middle_append_keeps_the_appends_after_it():
    first = "Notes:\n"
    second = first + "- likes tea\n"
    third = second + "- lives in Lyon\n"
    assert undo_change(first, second, third) == "Notes:\n- lives in Lyon\n"


def test_an_edit_on_other_lines_stays_and_the_old_line_comes_back():
    before = "a\nb\nc\nd\ne\n"
    changed = "a\nB\nc\nd\ne\n"
    today = "a\nB\nc\nd\nE\n"
    assert undo_change(before, changed, today) == "a\nb\nc\nd\nE\n"


def test_a_later_edit_of_the_same_line_is_a_conflict_naming_todays_lines():
    before = "a\nb\nc\n"
    changed = "a\nB\nc\n"
    today = "zero\na\nBB\nc\n"
    with pytest.raises(UndoConflict) as refused:
        undo_change(before, changed, today)
    assert refused.value.status is Status.CONFLICT
    assert refused.value.lines == ((3, 3),)
    assert "today's line 3" in refused.value.message
    # The region is in the changed text's lines: the one line both touched.
    assert refused.value.regions == ((1, 2),)


def test_two_insertions_at_one_place_are_a_conflict():
    # R deleted "b"; since, "x" was written where it stood: which goes first is a guess.
    with pytest.raises(UndoConflict):
        undo_change("a\nb\nc\n", "a\nc\n", "a\nx\nc\n")


def test_a_line_written_just_beside_the_undone_lines_is_kept():
    # R added "b"; since, "x" was written just above it, touching no line R wrote.
    assert undo_change("a\nc\n", "a\nb\nc\n", "a\nx\nb\nc\n") == "a\nx\nc\n"
    assert undo_change("a\nc\n", "a\nb\nc\n", "a\nb\nx\nc\n") == "a\nx\nc\n"


def test_a_change_already_taken_back_by_hand_is_no_change():
    with pytest.raises(NoChange):
        undo_change("a\nb\n", "a\nB\n", "a\nb\n")


def test_a_change_taken_back_by_hand_beside_other_edits_leaves_them_alone():
    with pytest.raises(NoChange):
        undo_change("a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nc\nD\n")


def test_a_change_of_no_line_has_nothing_to_undo():
    with pytest.raises(NoChange):
        undo_change("same\n", "same\n", "same\n")


def test_crlf_and_a_missing_final_line_ending_are_restored_exactly():
    before = "one\r\ntwo\r\nthree"
    changed = "one\r\nTWO\r\nthree\r\nfour"
    today = "zero\r\none\r\nTWO\r\nthree\r\nfour"
    assert undo_change(before, changed, today) == "zero\r\none\r\ntwo\r\nthree"


def test_an_undo_past_the_limit_is_refused_with_the_length_it_would_have():
    before = "a\n" + "x" * 50 + "\n"
    changed = "a\nshort\n"
    today = "z\na\nshort\n"
    expected = "z\n" + before
    with pytest.raises(TooLong) as refused:
        undo_change(before, changed, today, max_length=len(expected) - 1)
    assert refused.value.length == len(expected)
    assert undo_change(before, changed, today, max_length=len(expected)) == expected


def test_touched_by_follows_the_region_through_later_changes():
    changed = "a\nB\nc\nd\n"
    step1 = "new\na\nB\nc\nd\n"  # above: moves the region down a line
    step2 = "new\na\nB\nc\nD\n"  # elsewhere
    step3 = "new\na\nBB\nc\nD\n"  # the region itself
    assert touched_by([(1, 2)], [(changed, step1), (step1, step2), (step2, step3)]) == [2]


# --- properties -------------------------------------------------------------------------

any_text = st.text(alphabet="ab \r\n", max_size=40)


@given(any_text, any_text)
def test_undoing_the_last_change_gives_back_the_text_before_it(before, after):
    if before == after:
        with pytest.raises(NoChange):
            undo_change(before, after, after)
    else:
        assert undo_change(before, after, after) == before


Replacement = tuple[int, int, list[str]]


def two_runs(draw: st.DrawFn, size: int, prefix: str) -> tuple[Replacement, Replacement]:
    """Two changes R and L of `size` items: runs [c0, c1) and [c2, c3), either possibly empty
    (an insertion), with at least one untouched item between them; R is either one. Their new
    items are named "r<n>" and "l<n>" after `prefix`."""
    c1 = draw(st.integers(0, size - 1))
    c0 = draw(st.integers(0, c1))
    c2 = draw(st.integers(c1 + 1, size))
    c3 = draw(st.integers(c2, size))
    runs = [(c0, c1), (c2, c3)]
    if draw(st.booleans()):
        runs.reverse()
    (r1, r2), (l1, l2) = runs
    r_new = [f"r{prefix}{n}" for n in range(draw(st.integers(0 if r2 > r1 else 1, 3)))]
    l_new = [f"l{prefix}{n}" for n in range(draw(st.integers(0 if l2 > l1 else 1, 3)))]
    return (r1, r2, r_new), (l1, l2, l_new)


def spliced(items: list[str], replacing: list[Replacement]) -> list[str]:
    out: list[str] = []
    for index in range(len(items) + 1):
        for start, _, new in replacing:
            if index == start:
                out += new
        skipped = any(start <= index < end for start, end, _ in replacing)
        if index < len(items) and not skipped:
            out.append(items[index])
    return out


@st.composite
def histories(draw: st.DrawFn) -> dict[str, object]:
    """A text of distinct lines, a change R of one run of it, and a later change L of another
    run at least one untouched line away: the texts before R, after R, after L, and with L
    alone."""
    size = draw(st.integers(2, 12))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    lines = [f"line {n}" for n in range(size)]
    r, later = two_runs(draw, size, " ")
    final = draw(st.booleans())

    def text(replacing: list[Replacement]) -> str:
        out = spliced(lines, replacing)
        joined = ending.join(out)
        return joined + ending if final and out else joined

    return {
        "before": text([]),
        "changed": text([r]),
        "today": text([r, later]),
        "only_later": text([later]),
    }


@given(histories())
def test_an_undo_past_later_edits_elsewhere_keeps_only_those_edits(history):
    result = undo_change(history["before"], history["changed"], history["today"])
    assert result == history["only_later"]


@given(histories())
def test_undoing_the_undo_gives_back_todays_text(history):
    today = history["today"]
    undone = undo_change(history["before"], history["changed"], today)
    assert undo_change(today, undone, undone) == today


@given(histories())
def test_undo_then_redo_past_a_later_edit_keeps_it(history):
    """Undo R past L, then undo L: the text before either; redo R (undo the undo): L's text."""
    before, changed, today = history["before"], history["changed"], history["today"]
    undone = undo_change(before, changed, today)  # only L is left
    assert undo_change(changed, today, undone) == before  # L taken back too
    redone = undo_change(today, undone, undone)
    assert redone == today


@st.composite
def overlapping(draw: st.DrawFn) -> tuple[str, str, str]:
    """Below two lines left alone, a change of some lines and a later change of one of them."""
    size = draw(st.integers(2, 10))
    lines = ["top", "spacer"] + [f"line {n}" for n in range(size)]
    start = draw(st.integers(2, len(lines) - 1))
    end = draw(st.integers(start + 1, len(lines)))
    changed_lines = lines[:start] + [f"R {n}" for n in range(start, end)] + lines[end:]
    hit = draw(st.integers(start, end - 1))
    today_lines = list(changed_lines)
    today_lines[hit] = "later"
    join = "\n".join
    return join(lines) + "\n", join(changed_lines) + "\n", join(today_lines) + "\n"


@given(overlapping())
def test_a_later_edit_of_an_undone_line_is_a_conflict_traced_to_it(texts):
    before, changed, today = texts
    with pytest.raises(UndoConflict) as refused:
        undo_change(before, changed, today)
    elsewhere = changed.replace("top\n", "TOP\n", 1)  # a line away from every undone line
    assert touched_by(refused.value.regions, [(changed, today)]) == [0]
    assert touched_by(refused.value.regions, [(changed, elsewhere)]) == []
    assert touched_by(refused.value.regions, [(changed, elsewhere), (elsewhere, today)]) == [1]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**16), st.sampled_from([1, 40]))
def test_an_undo_of_large_texts_stays_within_one_diff_budget(seed, width):
    rng = random.Random(seed)
    lines = [f"{rng.randrange(10**6):0{width}d}" for _ in range(30_000)]
    before = "\n".join(lines)
    changed_lines = list(lines)
    for _ in range(200):
        changed_lines[rng.randrange(len(lines))] = "changed"
    today_lines = ["first", *changed_lines, "last"]
    with metered() as work, contextlib.suppress(UndoConflict, NoChange):
        undo_change(before, "\n".join(changed_lines), "\n".join(today_lines))
    assert work["diff.cells"] <= diff_engine.CELLS_PER_DIFF
    assert work["diff.chars"] <= diff_engine.CHARS_PER_DIFF


# --- word by word, where lines meet -------------------------------------------------------


def test_undoing_a_change_of_one_word_keeps_a_later_change_of_another_on_its_line():
    before = "Notes.\nThe client is Acme, based in Paris.\nEnd.\n"
    changed = "Notes.\nThe client is EvilCorp, based in Paris.\nEnd.\n"
    today = "Notes.\nThe client is EvilCorp, based in Lyon.\nEnd.\n"
    assert undo_change(before, changed, today) == "Notes.\nThe client is Acme, based in Lyon.\n" + (
        "End.\n"
    )


def test_a_later_change_of_the_same_word_is_a_conflict_naming_its_line():
    before = "Notes.\nThe client is Acme, based in Paris.\n"
    changed = "Notes.\nThe client is EvilCorp, based in Paris.\n"
    today = "Notes.\nThe client is EvilCorp Ltd, based in Lyon.\n".replace("EvilCorp Ltd", "Evil")
    with pytest.raises(UndoConflict) as refused:
        undo_change(before, changed, today)
    assert refused.value.lines == ((2, 2),)
    assert refused.value.regions == ((1, 2),)


def test_words_written_since_in_the_middle_of_an_undone_run_are_a_conflict():
    # The change replaced three words; since, a word was written between two of them.
    before = "keep a b c keep\n"
    changed = "keep x y z keep\n"
    today = "keep x y NEW z keep\n"
    with pytest.raises(UndoConflict):
        undo_change(before, changed, today)


def test_a_word_taken_back_by_hand_where_another_changed_is_no_change():
    with pytest.raises(NoChange):
        undo_change("a Acme b Paris\n", "a EvilCorp b Paris\n", "a Acme b Lyon\n")


@st.composite
def word_histories(draw: st.DrawFn) -> dict[str, str]:
    """A line of distinct words among other lines, a change R of one run of its words and a
    later change L of another run at least one untouched word away: the texts before R, after
    R, after L, and with L alone."""
    size = draw(st.integers(2, 10))
    words = [f"w{n}" for n in range(size)]
    r, later = two_runs(draw, size, "")
    above = draw(st.sampled_from(["", "Above.\n"]))
    below = draw(st.sampled_from(["", "\n", "\nBelow.\n"]))

    def text(replacing: list[Replacement]) -> str:
        return above + " ".join(spliced(words, replacing)) + below

    return {
        "before": text([]),
        "changed": text([r]),
        "today": text([r, later]),
        "only_later": text([later]),
    }


@given(word_histories())
def test_an_undo_past_a_later_change_of_other_words_on_its_line_keeps_only_that(history):
    result = undo_change(history["before"], history["changed"], history["today"])
    assert result == history["only_later"]


@given(word_histories())
def test_undoing_a_word_undo_gives_back_todays_text(history):
    today = history["today"]
    undone = undo_change(history["before"], history["changed"], today)
    assert undo_change(today, undone, undone) == today


@given(word_histories(), st.sampled_from(["again", ""]))
def test_a_later_change_of_the_words_undone_is_a_conflict(history, new):
    changed = history["changed"]
    ours = [word for word in changed.split() if word.startswith("r")]
    if not ours:
        return  # R only removed words: nothing of it is left to change again
    today = changed.replace(ours[0], new, 1) if new else changed.replace(ours[0] + " ", "", 1)
    if today == changed or history["before"] == today:
        return
    with pytest.raises(UndoConflict):
        undo_change(history["before"], changed, today)


@given(any_text, any_text, any_text)
def test_any_three_texts_are_merged_or_refused_never_failing_otherwise(before, after, today):
    try:
        result = undo_change(before, after, today)
    except (UndoConflict, NoChange):
        return
    if before == after:
        raise AssertionError("a change of nothing was undone")
    assert isinstance(result, str)
    if today == after:
        assert result == before


@pytest.mark.parametrize(
    "today",
    ["Likes yerba mate.\n", "Likes mate tea.\n", "Likes Mate.\n"],
    ids=["a word written before", "a word written after", "the word changed again"],
)
def test_a_word_written_beside_an_undone_word_is_one_phrase_with_it_a_conflict(today):
    with pytest.raises(UndoConflict):
        undo_change("Likes tea.\n", "Likes mate.\n", today)


def test_words_apart_by_a_space_only_are_one_phrase_a_conflict():
    with pytest.raises(UndoConflict):
        undo_change("Acme Paris\n", "EvilCorp Paris\n", "EvilCorp Lyon\n")
