"""The duplicate / conflict rule on pairs of texts, one case per clause of the rule."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from stores.editing.likeness import MAX_COMPARED_CHARS, Kind, compare, may_be_alike, read

PAIRS = Path(__file__).parent.parent / "fixtures" / "suggestions" / "pairs.json"

DUPLICATES = [
    ("The user lives in Berlin.", "the user lives in BERLIN"),
    ("On Fridays the user works from home.", "The user works from home on Fridays."),
    ("The user resides in Oslo.", "The user lives in Oslo."),
    ("The user ran a marathon.", "The user runs marathons."),
    ("The user has a cat.", "The user has a cat named Tom."),
]
CONFLICTS = [
    ("The user lives in Paris.", "The user lives in Lyon.", "'Paris' → 'Lyon'"),
    ("Standup is at 9:30.", "Standup is at 10:15.", "'9:30' → '10:15'"),
    ("The user is 30 years old.", "The user is 31 years old.", "'30' → '31'"),
    ("The user eats fish.", "The user doesn't eat fish.", "negates"),
    ("The user likes jazz.", "The user dislikes jazz.", "negates"),
    ("The user works as a pilot.", "The user works as a chef.", "'pilot' → 'chef'"),
]
FINE = [
    ("The user's aunt lives in Dublin.", "The user's uncle lives in Dublin."),
    ("Alice lives in Madrid.", "Bob lives in Madrid."),
    ("The user likes tea.", "The user likes coffee."),
    ("Project Atlas uses Django.", "Project Hermes uses Django."),
    ("The user drinks tea in the morning.", "The user drinks wine in the evening."),
    ("The user's car is red.", "The user's car is a Volvo."),
    ("The user works at a hospital.", "The user works as a nurse."),
    ("The user lives in Berlin.", "The user's grandmother lives in Berlin."),
    ("The user reads before bed.", "The user goes to bed at 23:00."),
]


@pytest.mark.parametrize(("first", "second"), DUPLICATES)
def test_duplicates(first, second):
    found = compare(first, second)
    assert found is not None and found.kind is Kind.DUPLICATE
    assert compare(second, first) is not None


@pytest.mark.parametrize(("first", "second", "said"), CONFLICTS)
def test_conflicts_say_what_differs(first, second, said):
    found = compare(first, second)
    assert found is not None and found.kind is Kind.CONFLICT
    assert said in found.reason


@pytest.mark.parametrize(("first", "second"), FINE)
def test_alike_but_compatible(first, second):
    assert compare(first, second) is None
    assert compare(second, first) is None


def test_the_same_text_is_a_duplicate_of_score_one():
    found = compare("Tea, no sugar.", "Tea, no sugar.")
    assert found is not None and found.score == 1.0 and found.reason == "the same text"


def test_a_paraphrase_scores_its_similarity():
    found = compare("The user resides in Oslo.", "The user lives in Oslo.", 0.912)
    assert found is not None and found.score == 0.91 and "0.91 alike" in found.reason


def test_only_the_start_of_a_long_text_is_read():
    tail = " filler" * MAX_COMPARED_CHARS
    assert compare("The user lives in Paris." + tail, "The user lives in Paris." + tail + " x")


def test_the_cheap_test_lets_through_every_pair_the_rule_finds():
    labelled = json.loads(PAIRS.read_text("utf-8"))["pairs"]
    texts = {text for pair in labelled for text in (pair["first"], pair["second"])}
    texts |= {text for case in (*DUPLICATES, *CONFLICTS, *FINE) for text in case[:2]}
    found = 0
    for first, second in itertools.permutations(sorted(texts), 2):
        if compare(first, second) is not None:
            found += 1
            assert may_be_alike(read(first), read(second)), (first, second)
    assert found >= len(labelled)


def test_the_cheap_test_turns_away_texts_with_nothing_in_common():
    first, second = "The user lives in Paris.", "Quarterly invoices are due on Mondays."
    assert not may_be_alike(read(first), read(second))
    assert compare(first, second) is None
    assert not may_be_alike(read("The the."), read("A a."))
    # They share a word, and each says five the other does not: more than one place differs.
    first, second = (
        "The user keeps bees, goats, hens and ducks.",
        "The user rides a red bike to work daily.",
    )
    assert not may_be_alike(read(first), read(second))
    assert compare(first, second) is None


def test_words_shared_only_through_an_opposite_still_reach_the_rule():
    # The rule reads "dislikes" as a negated "likes" and "disables" as a negated "enables":
    # these two share no word as written, and the rule still finds them alike.
    first, second = "Dislikes; disables.", "Likes; enables."
    assert read(first).canon.isdisjoint(read(second).canon)
    assert compare(first, second) is not None
    assert may_be_alike(read(first), read(second))
