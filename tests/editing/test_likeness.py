"""The duplicate / conflict rule on pairs of texts, one case per clause of the rule."""

from __future__ import annotations

import pytest

from stores.editing.likeness import MAX_COMPARED_CHARS, Kind, compare

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
