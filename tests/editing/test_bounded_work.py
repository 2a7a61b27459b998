"""The near-miss search and the diffs cost little for any text within the size limits.
Work is counted in operations: the engine's meter, and Python lines run."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from stores.editing import (
    DiffBudget,
    NoMatch,
    apply_edit,
    delete_section,
    nearmiss,
    remove_rule,
    unified_diff,
    word_diff,
)
from stores.editing import diff as diff_engine
from stores.editing.nearmiss import find_near_miss
from stores.editing.work import metered
from tests.work import python_lines, random_words

LARGEST_TEXT = max(settings.MEMORYADMIN["MAX_TEXT_LENGTH"].values())
# Generous for the bounded engine (which runs a few thousand lines here), far below what a
# quadratic search or difflib runs on these inputs.
LINE_LIMIT = 300_000


def _spelled(diff) -> tuple[str, str]:
    old = "".join(chunk.text for chunk in diff.chunks if chunk.kind != "insert")
    new = "".join(chunk.text for chunk in diff.chunks if chunk.kind != "delete")
    return old, new


def _apply_unified(before: str, patch: str) -> str:
    """`before` with a unified diff applied, to check a diff says what changed."""
    source = re.findall(r"[^\n]*\n|[^\n]+", before)
    lines = patch.splitlines(keepends=True)[2:]
    result: list[str] = []
    position = 0
    index = 0
    while index < len(lines):
        old_range = lines[index].split()[1][1:].split(",")
        start = int(old_range[0]) - (1 if len(old_range) == 1 or old_range[1] != "0" else 0)
        result += source[position:start]
        position = start
        index += 1
        while index < len(lines) and not lines[index].startswith("@@"):
            sign, body = lines[index][0], lines[index][1:]
            if index + 1 < len(lines) and lines[index + 1].startswith("\\ No newline"):
                body = body[:-1]
                index += 1
            if sign != "+":
                position += 1
            if sign != "-":
                result.append(body)
            index += 1
    return "".join(result + source[position:])


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


@pytest.mark.parametrize("per_line", [0, 12])
def test_word_diff_of_two_random_74_kb_texts_is_cheap(per_line):
    before = random_words(74_000, seed=1, per_line=per_line)
    after = random_words(74_000, seed=2, per_line=per_line)
    with python_lines(LINE_LIMIT), metered() as work:
        diff = word_diff(before, after)
    assert _spelled(diff) == (before, after)
    assert work["diff.cells"] <= diff_engine.CELLS_PER_DIFF
    assert work["diff.chars"] <= diff_engine.CHARS_PER_DIFF


def test_unified_diff_of_lines_drawn_from_a_small_set_is_cheap():
    # Each line is frequent enough to defeat difflib's junk heuristic and rare enough to count.
    pool = [random_words(40, seed=n) for n in range(150)]
    before = "\n".join(pool[(n * 7) % 150] for n in range(3000))
    after = "\n".join(pool[(n * 11) % 150] for n in range(3000))
    with python_lines(LINE_LIMIT), metered() as work:
        patch = unified_diff(before, after)
    assert _apply_unified(before, patch) == after
    assert work["diff.cells"] <= diff_engine.CELLS_PER_DIFF


def test_the_closest_rule_and_heading_are_found_cheaply_among_thousands():
    rules = "\n".join(f"- {random_words(90, seed=n)}" for n in range(4000))
    headed = "\n".join(f"## {random_words(40, seed=n)}\nbody {n}\n" for n in range(4000))
    rule = random_words(90, seed=1234)
    heading = random_words(40, seed=2345)
    # Parsing thousands of rules or headings runs some 500,000 lines; difflib's
    # get_close_matches over them ran millions more.
    with python_lines(1_500_000), metered() as work, pytest.raises(NoMatch) as refused:
        remove_rule(rules, rule[:30] + "x" + rule[31:])
    assert refused.value.near_miss.line == 1235 and refused.value.near_miss.similarity > 0.9
    with python_lines(1_500_000), pytest.raises(NoMatch) as refused:
        delete_section(headed, heading.replace(" ", "  ", 1) + "s")
    assert refused.value.near_miss.text == heading
    assert work["nearmiss.cells"] <= nearmiss.CELL_BUDGET


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


def test_texts_too_large_to_compare_are_flagged_and_still_spell_both_texts():
    pool = [random_words(40, seed=n) for n in range(150)]
    before = "\n".join(pool[(n * 7) % 150] for n in range(12000))
    after = "\n".join(pool[(n * 11) % 150] for n in range(12000))
    diff = word_diff(before, after)
    assert diff.too_large
    assert _spelled(diff) == (before, after)
    assert _apply_unified(before, unified_diff(before, after)) == after


def test_a_small_change_in_a_long_paragraph_is_shown_word_by_word():
    before = random_words(20_000, seed=4)
    after = before[:5000] + "inserted words" + before[5000:15000] + before[15010:]
    chunks = word_diff(before, after).chunks
    assert [chunk.kind for chunk in chunks].count("equal") >= 3
    assert any(chunk.kind == "insert" and "inserted words" in chunk.text for chunk in chunks)
    assert sum(len(chunk.text) for chunk in chunks if chunk.kind != "equal") < 200


def test_a_shared_budget_bounds_several_diffs_together():
    budget = DiffBudget(cells=diff_engine.CELLS_PER_DIFF, chars=300_000)
    pairs = [
        (random_words(30_000, seed=n, per_line=8), random_words(30_000, seed=n + 50, per_line=8))
        for n in range(8)
    ]
    with metered() as work:
        diffs = [word_diff(before, after, budget=budget) for before, after in pairs]
    assert work["diff.chars"] <= 300_000
    assert any(diff.too_large for diff in diffs)
    assert all(_spelled(diff) == pair for diff, pair in zip(diffs, pairs, strict=True))


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


@_SLOW
@given(st.data())
def test_diff_work_is_bounded_and_the_diff_is_right_for_any_two_texts(data):
    before = data.draw(large_texts())
    after = data.draw(st.one_of(large_texts(), st.just(before)))
    if after == before and before:
        cut = data.draw(st.integers(0, len(before)))
        after = before[:cut] + data.draw(edited(before)) + before[cut:]
    with metered() as work:
        diff = word_diff(before, after)
    assert _spelled(diff) == (before, after)
    assert work["diff.cells"] <= diff_engine.CELLS_PER_DIFF
    assert work["diff.chars"] <= diff_engine.CHARS_PER_DIFF
    with metered() as work:
        patch = unified_diff(before, after)
    assert _apply_unified(before, patch) == after
    assert work["diff.cells"] <= diff_engine.CELLS_PER_DIFF
    assert work["diff.chars"] <= diff_engine.CHARS_PER_DIFF
