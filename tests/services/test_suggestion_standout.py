"""A verdict read from meaning alone stands in a store only where its pair stands out from
the memories' other neighbours: the embedded model puts any two memories about one person
close, so closeness alone says little there. A pair the words decide stands however crowded;
a true paraphrase stands out from its crowd. A duplicate the words read, nothing in them
differing, needs stand out less (STANDOUT_REWORDED) than a verdict the pair model reads."""

from __future__ import annotations

import pytest

from stores.editing.likeness import Kind, Likeness
from stores.models import Agent, Suggestion
from stores.services.embeddings import reembed_sweep
from stores.services.suggestions import standout, suggest_for_memory

# Fine together, but the rule reads one as negating the other by their meaning alone.
LACTOSE = (
    "User is lactose intolerant; oat milk is the default swap for anything dairy.",
    "Takes lactase tablets when he can't avoid dairy, e.g. a pastel de nata.",
)
# The rest of what the agent knows of his diet, as alike to each of the two.
DIET = (
    "Hard aged cheeses like parmesan are fine for him in small amounts.",
    "Allergic to shellfish - prawns, crab, lobster, mussels, clams, the lot.",
    "Carries an EpiPen since a bad reaction to prawns in 2015.",
    "Avoids caffeine after 16:00, otherwise sleeps badly.",
    "Has one espresso after lunch most days.",
    "Eats porridge with banana for breakfast on weekdays.",
    "Doesn't drink alcohol during the week.",
    "Loves bacalhau à brás; orders it whenever it's on the menu.",
    "Cooks a big pot of lentil soup on Sundays for the week.",
)


def test_two_memories_alone_are_read_by_their_meaning(local_model, suggested):
    [suggestion] = suggested(LACTOSE)

    assert suggestion.kind == Suggestion.Kind.CONFLICT
    assert "alike" in suggestion.reason


def test_among_as_alike_neighbours_the_same_pair_is_not_suggested(local_model, suggested):
    assert suggested((*DIET, *LACTOSE)) == []


def test_the_pass_after_a_write_reads_the_crowd_as_the_whole_pass_does(
    local_model, agent: Agent, make
):
    for text in (*DIET, LACTOSE[0]):
        make.memory(agent, content=text)
    written = make.memory(agent, content=LACTOSE[1])
    reembed_sweep()

    suggest_for_memory(written.pk)

    assert not Suggestion.objects.filter(agent=agent).exists()


def test_a_pair_the_words_decide_is_suggested_however_crowded(local_model, suggested):
    [suggestion] = suggested((*DIET, "Lives in Lisbon.", "Lives in Porto."))

    assert suggestion.kind == Suggestion.Kind.CONFLICT
    assert "'Lisbon' → 'Porto'" in suggestion.reason


def test_a_paraphrase_stands_out_from_its_crowd(local_model, suggested):
    paraphrase = (
        "Is learning Portuguese with a tutor twice a week.",
        "Takes Portuguese lessons from a tutor two times weekly.",
    )

    [suggestion] = suggested((*DIET, *paraphrase))

    assert suggestion.kind == Suggestion.Kind.DUPLICATE


@pytest.mark.parametrize(
    ("likeness", "margin"),
    [
        (Likeness(Kind.DUPLICATE, 0.9, "reworded", sure=False), 0.02),
        (Likeness(Kind.DUPLICATE, 0.6, "read by meaning", sure=False, by_model=True), 0.03),
        (Likeness(Kind.CONFLICT, 0.9, "a value reworded", sure=False), 0.03),
    ],
)
def test_a_duplicate_the_words_read_needs_stand_out_less(local_model, likeness, margin):
    assert standout().of(likeness) == margin


def test_without_a_margin_of_its_own_a_reworded_duplicate_stands_out_as_any(settings):
    table = settings.MEMORYADMIN["SUGGEST_SIMILARITY"]
    entry = {key: value for key, value in table["*"].items() if key != "STANDOUT_REWORDED"}
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "SUGGEST_SIMILARITY": {**table, "*": {**entry, "STANDOUT": 0.05}},
    }

    assert standout().of(Likeness(Kind.DUPLICATE, 0.9, "reworded", sure=False)) == 0.05
