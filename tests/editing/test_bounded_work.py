"""The near-miss search costs little for any text within the size limits (issue 12, item 1).
Work is counted in operations: the engine's meter, and Python lines run."""

from __future__ import annotations

import pytest
from django.conf import settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from stores.editing import NoMatch, apply_edit, nearmiss
from stores.editing.nearmiss import find_near_miss
from stores.editing.work import metered
from tests.work import python_lines, random_words

LARGEST_TEXT = max(settings.MEMORYADMIN["MAX_TEXT_LENGTH"].values())
# Generous for the bounded engine (which runs some tens of thousands of lines here), far below
# what a quadratic search runs on these inputs.
LINE_LIMIT = 300_000


# --- the cases ------------------------------------------------------------------


@pytest.mark.parametrize("span", [50, 100])
def test_a_long_needle_with_one_letter_changed_in_4900_lines_is_found_cheaply(span):
    lines = [f"line {i % 50} lorem ipsum" for i in range(4900)]
    needle = "\n".join(lines[100 : 100 + span]).replace("ipsum", "ipsun", 1)
    with python_lines(LINE_LIMIT), metered() as work, pytest.raises(NoMatch) as refused:
        apply_edit("\n".join(lines), needle, "replacement")
    hint = refused.value.near_miss
    # The text repeats every 50 lines: the first window that lines up is line 1.
    assert hint.line == 1 and hint.similarity >= 0.99
    assert hint.text.startswith("line 0 lorem ipsum\nline 1 lorem ipsum")
    assert work["nearmiss.cells"] <= nearmiss.CELL_BUDGET
    assert work["nearmiss.candidates"] <= nearmiss.CANDIDATES


def test_trailing_whitespace_check_is_linear_in_a_long_run_of_spaces():
    # `[ \t]+$` retried from each of the 100,000 spaces: minutes of regular-expression work.
    text = " " * 100_000 + "x \n"
    with metered() as work:
        hint = find_near_miss(text, "x\n")
    assert hint is not None and "trailing whitespace" in hint.explanation
    assert work["nearmiss.scanned"] <= 20 * len(text)


# --- the hint stays as good --------------------------------------------------------------


def test_a_needle_inside_a_long_line_is_quoted_in_whole_words():
    line = "lorem ipsum dolor " * 500 + "the user prefers green tea in the morning " * 2
    hint = find_near_miss(line, "user prefers gren tea")
    assert hint is not None and hint.similarity > 0.9
    assert hint.text.split()[0] in ("the", "user") and "green tea" in hint.text
    assert set(hint.text.split()) <= set(line.split())


def test_a_needle_longer_than_what_is_scored_exactly_is_still_placed():
    text = random_words(100_000, seed=3, per_line=10)
    lines = text.split("\n")
    needle = "\n".join(lines[500:2500]).replace("a", "A", 1)
    assert len(needle) > nearmiss.EXACT_CHARS
    with metered() as work:
        hint = find_near_miss(text, needle)
    assert hint is not None and hint.line == 501
    assert work["nearmiss.cells"] <= nearmiss.CELL_BUDGET


def test_a_needle_longer_than_the_text_points_at_the_text():
    text = "The user lives in Paris.\nThey like tea."
    hint = find_near_miss(text, text.replace("Paris", "Lyon") + "\nThey like coffee too.")
    assert hint is not None and hint.line == 1


# --- properties: random texts and needles up to the size limits ---------------------------

_PIECES = st.text(alphabet=st.sampled_from("ab cdé\n\t.,'\u00a0\u2019A"), max_size=60)


@st.composite
def large_texts(draw, max_size: int = LARGEST_TEXT) -> str:
    """Up to `max_size` characters built from a few drawn pieces, so size costs little to draw."""
    pieces = [piece for piece in draw(st.lists(_PIECES, min_size=1, max_size=8)) if piece]
    size = draw(st.one_of(st.integers(0, 5_000), st.integers(0, max_size), st.just(max_size)))
    rng = draw(st.randoms(use_true_random=False))
    shape = draw(st.sampled_from(["mixed", "one line", "one piece", "words"]))
    if shape == "words":
        return random_words(size, seed=rng.randint(0, 1000), per_line=rng.choice([0, 9]))
    out: list[str] = []
    length = 0
    while length < size and pieces:
        piece = pieces[0] if shape == "one piece" else rng.choice(pieces)
        if shape == "one line":
            piece = piece.replace("\n", " ")
        out.append(piece)
        length += len(piece)
    return "".join(out)[:size]


@st.composite
def edited(draw, text: str) -> str:
    """A stretch of `text` (or all of it), with a few characters changed, inserted or removed."""
    rng = draw(st.randoms(use_true_random=False))
    start = rng.randint(0, len(text))
    end = rng.choice([start + rng.randint(0, 3000), len(text), rng.randint(start, len(text))])
    chars = list(text[start:end])
    for _ in range(draw(st.integers(0, 6))):
        at = rng.randint(0, len(chars))
        change = rng.choice(["insert", "delete", "replace"])
        if change == "insert" or not chars:
            chars.insert(at, rng.choice("xyz \n"))
        elif change == "delete":
            del chars[min(at, len(chars) - 1)]
        else:
            chars[min(at, len(chars) - 1)] = rng.choice("XYZ")
    return "".join(chars)


_SLOW = hypothesis_settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@_SLOW
@given(st.data())
def test_near_miss_work_is_bounded_for_any_text_and_needle(data):
    text = data.draw(large_texts())
    needle = data.draw(st.one_of(edited(text), large_texts(), _PIECES))
    with metered() as work:
        hint = find_near_miss(text, needle)
    if hint is not None:
        assert 1 <= hint.line <= text.count("\n") + 1
        assert nearmiss.SIMILARITY_FLOOR <= hint.similarity <= 1
        assert len(hint.text) <= 201
    assert work["nearmiss.cells"] <= nearmiss.CELL_BUDGET
    # Six whole-text transforms (casefold may triple a character) and one pass per anchor.
    passes = 6 * 4 + 2 * nearmiss.ANCHORS
    assert work["nearmiss.scanned"] <= passes * (len(text) + len(needle) + 1)
    assert work["nearmiss.votes"] <= nearmiss.ANCHORS * nearmiss.ANCHOR_HITS
