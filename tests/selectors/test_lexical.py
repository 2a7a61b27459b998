"""The lexical side's candidates: the best `depth` of one ranking, whichever terms it ranks."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stores.selectors.filters import MemoryFilters, filtered_memories
from stores.selectors.lexical import _strong_terms, lexical_candidates, term_weight

# Words as often as a store's are: the first in most memories, the last in a few.
WORDS = ["harbour", "violin", "orchard", "lantern", "meadow", "copper", "thistle", "glacier"]
SHARES = [0.8, 0.45, 0.3, 0.2, 0.12, 0.06, 0.03, 0.01]


@pytest.fixture
def corpus(agent, make):
    chance = random.Random(11)
    for number in range(160):
        held = [word for word, share in zip(WORDS, SHARES, strict=True) if chance.random() < share]
        make.memory(agent, f"Note {number}: {' '.join(held) or 'nothing to say'}.")
    return filtered_memories(agent=agent, filters=MemoryFilters())


QUERIES = [
    ["harbour", "glacier"],
    ["harbour", "violin", "thistle"],
    ["harbour", "violin", "orchard", "lantern"],
    ["meadow", "harbour"],
    ["harbour", "copper", "nowhere"],
    ["violin", "orchard"],
]


@pytest.mark.parametrize("terms", QUERIES, ids=" ".join)
@pytest.mark.parametrize("depth", [1, 5, 20, 60])
def test_the_best_few_are_the_first_of_the_whole_ranking(agent, corpus, terms, depth):
    whole = lexical_candidates(corpus, terms, 1000, agent_id=agent.pk)
    assert lexical_candidates(corpus, terms, depth, agent_id=agent.pk) == whole[:depth]


def test_weak_words_held_together_outrank_a_stronger_word_held_alone(agent, make):
    """Each of "alpha" and "beta" weighs less than "gamma", both together more: the memories
    holding both are the best, though the memories holding "gamma" would fill the page."""
    for text in ["alpha beta"] * 10 + ["alpha"] * 30 + ["beta"] * 30 + ["gamma"] * 25:
        make.memory(agent, f"A note on {text}.")
    memories = filtered_memories(agent=agent, filters=MemoryFilters())
    best = lexical_candidates(memories, ["alpha", "beta", "gamma"], 10, agent_id=agent.pk)
    assert {memories.get(pk=pk).content for pk, _share in best} == {"A note on alpha beta."}


def test_common_words_leave_the_ranking_when_the_rarer_ones_fill_it(agent, corpus):
    total = corpus.count()
    holding = [sum(word in memory.content for memory in corpus) for word in ("harbour", "violin")]
    weights = [term_weight(total, count) for count in holding]
    # "violin" outweighs "harbour" and fills the first five: only its holders are ranked.
    assert _strong_terms(weights, holding, 5) == [1]
    best = lexical_candidates(corpus, ["harbour", "violin"], 5, agent_id=agent.pk)
    assert all("violin" in corpus.get(pk=pk).content for pk, _share in best)


def test_every_term_is_ranked_when_no_lighter_set_weighs_less_than_the_next():
    assert _strong_terms([1.0, 1.0], [50, 50], 5) == []
    assert _strong_terms([1.0, 3.0], [50, 2], 5) == []  # the stronger term fills too few
    assert _strong_terms([1.0, 1.5, 4.0], [90, 40, 30], 10) == [2]
    assert _strong_terms([1.0, 1.5, 4.0], [90, 40, 3], 10) == [1, 2]  # "4.0" fills too few


@given(
    st.lists(st.tuples(st.floats(0.01, 12.0), st.integers(0, 200)), min_size=1, max_size=8),
    st.integers(1, 120),
)
def test_a_memory_holding_only_left_out_terms_never_outranks_one_holding_a_kept_term(terms, depth):
    weights = [weight for weight, _holding in terms]
    holding = [count for _weight, count in terms]
    kept = _strong_terms(weights, holding, depth)
    if kept:
        left_out = sum(weight for index, weight in enumerate(weights) if index not in kept)
        assert left_out < min(weights[index] for index in kept)
        assert max(holding[index] for index in kept) >= depth
