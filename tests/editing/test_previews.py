"""The truncation guard: a full replacement that looks made from a preview of the text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stores.editing import PREVIEW_LENGTH, cut_preview, looks_truncated
from stores.editing.previews import common_subsequence_length

SENTENCES = [
    "The user keeps a balcony garden in Lisbon and waters it before work.",
    "Tomatoes need water every evening in July; basil only every other day.",
    "The neighbour, Ana, looks after the plants when the user travels.",
    "Seeds are ordered from a shop in Porto each February.",
    "The user dislikes plastic pots and prefers terracotta.",
    "Compost goes in the green bin on Thursdays.",
]
# 2,000 characters, each sentence numbered so none repeats.
LONG = " ".join(SENTENCES[i % len(SENTENCES)] + f" ({i})" for i in range(32))[:2000]


def edited_preview(text: str, addition: str = " Also water the ferns.") -> str:
    """What an agent sends when it takes a recall preview for the text: cut, '…' dropped."""
    return cut_preview(text).removesuffix("…") + addition


@pytest.mark.parametrize(
    ("current", "replacement", "truncated"),
    [
        ("The whole memory text.", "The whole mem", True),
        ("The whole memory text.", "The whole mem…", True),
        ("The whole memory text.", "The whole mem...", True),
        ("The whole memory text.", "The whole memory text, corrected.", False),
        ("The whole memory text.", "A new text", False),
        ("Short", "Short and longer", False),
    ],
)
def test_cut_texts_are_recognised(current, replacement, truncated):
    assert looks_truncated(current, replacement) is truncated


def test_a_preview_with_its_ellipsis_dropped_and_a_sentence_added_is_truncation():
    assert len(LONG) == 2000
    replacement = edited_preview(LONG)
    assert len(replacement) == PREVIEW_LENGTH - 1 + len(" Also water the ferns.")
    assert looks_truncated(LONG, replacement)


def test_a_preview_edited_inside_before_the_addition_is_still_truncation():
    replacement = edited_preview(LONG).replace("balcony garden", "rooftop garden", 1)
    replacement = replacement.replace("every evening", "each evening", 1)
    assert looks_truncated(LONG, replacement)
    kept_ellipsis = cut_preview(LONG).replace("Lisbon", "Lisboa") + " Also the ferns."
    assert looks_truncated(LONG, kept_ellipsis)


def test_a_full_read_edited_in_the_middle_keeps_the_ending_and_passes():
    middle = LONG.index("(12)")
    shortened = LONG[:middle] + LONG[middle + 200 :]
    assert looks_truncated(LONG, shortened) is False
    retyped = LONG.replace("terracotta", "clay", 1)
    assert looks_truncated(LONG, retyped) is False


def test_a_long_text_rewritten_from_its_start_is_not_taken_for_a_preview():
    assert looks_truncated(LONG, "The user gave up gardening and moved to Berlin.") is False
    assert looks_truncated(LONG, LONG[:300] + " And that is all.") is False


def test_short_texts_rewritten_or_shortened_in_place_pass():
    current = "Likes tea and coffee. Lives in Paris with two cats and a very old dog."
    assert looks_truncated(current, "Likes tea. Lives in Paris with two cats and a dog.") is False
    assert looks_truncated(current, "Drinks only water now.") is False
    assert looks_truncated(current, "Likes tea and coffee. Lives in Lyon.") is False


def test_dropping_the_tail_of_a_long_text_needs_saying_so():
    # A full read that removes the last sentence looks exactly like a preview with an
    # addition; the service's allow_shorter flag is how a caller says it means that.
    assert looks_truncated(LONG, LONG[: LONG.rindex("Compost")].rstrip())


@given(st.text(max_size=40), st.text(max_size=40))
def test_common_subsequence_length_matches_the_textbook_table(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = (
                table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
            )
    assert common_subsequence_length(a, b) == table[-1][-1]
