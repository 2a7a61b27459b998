"""A small store ranks by meaning: the labelled small stores of
tests/fixtures/recall/small_stores.json, each an agent of its own, with the real local model.

The small-store rule (stores/selectors/vectors.py) was chosen on the even-numbered answered
queries and the even-numbered queries nothing answers; the odd-numbered ones are held out.
Each half must keep what bench/recall_quality.py measured on it, less one query of slack.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from stores.selectors.filters import MemoryFilters
from stores.selectors.search import recall
from stores.services.embeddings import reembed_sweep
from tests.factories import AgentFactory

SMALL_STORES = Path(__file__).parent.parent / "fixtures" / "recall" / "small_stores.json"


@dataclass
class Half:
    answered: int = 0
    first: int = 0
    strays: int = 0
    unanswerable: int = 0
    listed_for_nothing: int = 0
    misses: list[str] = field(default_factory=list)


@pytest.fixture
def halves(local_model, make) -> dict[str, Half]:
    halves = {"tuning": Half(), "held out": Half()}
    answered = nothing = 0
    stores = json.loads(SMALL_STORES.read_text("utf-8"))["stores"]
    agents = []
    for number, store in enumerate(stores):
        agent = AgentFactory(name=f"small-{number}")
        agents.append((agent, [make.memory(agent, text).pk for text in store["memories"]]))
    reembed_sweep()
    for store, (agent, ids) in zip(stores, agents, strict=True):
        for query in store["queries"]:
            half = halves["tuning" if answered % 2 == 0 else "held out"]
            answered += 1
            wanted = {ids[index] for index in query["expected"]}
            page = recall(agent=agent, filters=MemoryFilters(query=query["query"]))
            listed = [hit.memory.pk for hit in page.hits]
            half.answered += 1
            if listed[:1] and listed[0] in wanted:
                half.first += 1
            else:
                half.misses.append(query["query"])
            half.strays += len(set(listed) - wanted)
        for query in store["unanswerable"]:
            half = halves["tuning" if nothing % 2 == 0 else "held out"]
            nothing += 1
            half.unanswerable += 1
            half.listed_for_nothing += recall(agent=agent, filters=MemoryFilters(query=query)).total
    return halves


def test_both_halves_of_the_small_stores_rank_an_answer_first(halves):
    """Regression: with habit margins and a floor of 0.02, "hot drink preference" found
    nothing in four memories, and strays were listed beside answers (8 and 5 in the halves)."""
    tuning, held_out = halves["tuning"], halves["held out"]

    assert (tuning.answered, held_out.answered) == (21, 21)
    assert tuning.first >= 16, tuning.misses  # measured 17
    assert held_out.first >= 19, held_out.misses  # measured 20
    assert tuning.strays <= 6 and held_out.strays <= 2  # measured 5 and 1
    assert tuning.listed_for_nothing <= 2 and held_out.listed_for_nothing <= 3  # 1 and 2


@pytest.fixture
def four(local_model, agent, make):
    memories = [
        make.memory(agent, text)
        for text in (
            "She takes her tea without sugar.",
            "The Wi-Fi password is on the fridge.",
            "Her brother lives in Porto.",
            "The car is due for its MOT in March.",
        )
    ]
    reembed_sweep()
    return memories


def test_a_hot_drink_preference_finds_the_tea_among_four(agent, four):
    """Regression: the tea stood 0.016 above its habit, under the floor: nothing was listed."""
    page = recall(agent=agent, filters=MemoryFilters(query="hot drink preference"))

    assert [hit.memory.pk for hit in page.hits][:1] == [four[0].pk]


def test_which_food_makes_them_ill_lists_the_allergy_alone_among_a_dozen(local_model, agent, make):
    """Regression: the allergy came first, with two strays beside it."""
    stores = json.loads(SMALL_STORES.read_text("utf-8"))["stores"]
    dozen = [make.memory(agent, text) for text in stores[0]["memories"]]
    reembed_sweep()

    page = recall(agent=agent, filters=MemoryFilters(query="which food makes them ill"))

    assert [hit.memory.content for hit in page.hits] == ["The user is allergic to peanuts."]
    assert dozen[8].content == "The user is allergic to peanuts."
