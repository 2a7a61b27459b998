"""The periodic count of large stores' common words, and recall weighing such words by it."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.utils import timezone

from stores.engine.actors import Actor
from stores.interchange import rockbot
from stores.models import Memory, TermShare
from stores.selectors.filters import MemoryFilters, filtered_memories
from stores.selectors.lexical import lexical_candidates, term_weight
from stores.services.importing.run import import_records
from stores.services.term_shares import term_shares_refresh
from stores.tasks import count_common_terms


@pytest.fixture
def common_at_four(settings):
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "SEARCH": {**settings.MEMORYADMIN["SEARCH"], "COMMON_TERM_MEMORIES": 4},
    }


def shares(agent) -> dict[str, float]:
    return {kept.lexeme: kept.share for kept in TermShare.objects.filter(agent=agent)}


def test_a_large_stores_common_words_are_kept_as_their_share(
    postgres_only, common_at_four, agent, other_agent, make
):
    for text in ["harbours at dawn", "the harbour", "harbour walls", "a harbour", "violins"]:
        make.memory(agent, text)
    outdated = make.memory(agent, "harbour and violin")
    Memory.objects.filter(pk=outdated.pk).update(invalidated_at=timezone.now())
    for text in ["harbour", "harbour", "harbour"]:  # three memories: not a large store
        make.memory(other_agent, text)

    assert term_shares_refresh().as_dict() == {"agents": 1, "terms": 1}

    # Stemmed as the search document stores it; the memory no longer true is not counted.
    assert shares(agent) == {"harbour": pytest.approx(4 / 5)}
    assert shares(other_agent) == {}


def test_a_store_grown_small_again_is_counted_exactly(postgres_only, common_at_four, agent, make):
    memories = [make.memory(agent, f"harbour note {n}") for n in range(4)]
    term_shares_refresh()
    assert "harbour" in shares(agent)
    memories[0].delete()

    count_common_terms.apply(throw=True)

    assert shares(agent) == {}


def test_nothing_is_counted_on_sqlite(db, common_at_four, agent, make):
    if connection.vendor != "sqlite":
        pytest.skip("SQLite counts a word from its full-text index at once")
    for n in range(4):
        make.memory(agent, f"harbour note {n}")

    assert term_shares_refresh().as_dict() == {"agents": 0, "terms": 0}
    assert shares(agent) == {}


@pytest.fixture
def harbour_and_violin(agent, make):
    """Most memories hold "harbour"; a few hold "violin"; none holds both."""
    for n in range(12):
        make.memory(agent, f"Harbour log {n}.")
    for n in range(3):
        make.memory(agent, f"Violin lesson {n}.")
    return filtered_memories(agent=agent, filters=MemoryFilters())


def best(memories, agent, terms, depth=1) -> list[str]:
    found = lexical_candidates(memories, terms, depth, agent_id=agent.pk)
    return [memories.get(pk=pk).content for pk, _share in found]


def test_recall_weighs_a_common_word_by_its_counted_share(postgres_only, agent, harbour_and_violin):
    assert best(harbour_and_violin, agent, ["harbour", "violin"]) == ["Violin lesson 0."]

    # As if the last count had found "harbour" in one memory in a hundred: it now weighs
    # more than "violin", which three memories in fifteen hold.
    TermShare.objects.create(agent=agent, lexeme="harbour", holding=1, memories=100)

    assert best(harbour_and_violin, agent, ["harbour", "violin"]) == ["Harbour log 0."]


def test_a_share_promising_more_holders_than_there_are_still_fills_the_page(
    postgres_only, agent, harbour_and_violin
):
    exact = best(harbour_and_violin, agent, ["harbour", "violin"], depth=10)
    # "violin" as if seven memories in ten held it: still rarer than "harbour" (twelve in
    # fifteen), so the ranking is first asked for its holders alone, and finds three of ten.
    TermShare.objects.create(agent=agent, lexeme="violin", holding=7, memories=10)

    assert best(harbour_and_violin, agent, ["harbour", "violin"], depth=10) == exact


def test_a_search_of_the_whole_store_takes_its_size_from_the_count(
    postgres_only, agent, harbour_and_violin
):
    # As if the last count had found 1,000 memories, 800 of them holding "harbour".
    TermShare.objects.create(agent=agent, lexeme="harbour", holding=800, memories=1000)

    def violin_share(whole_store: bool) -> float:
        found = lexical_candidates(
            harbour_and_violin, ["harbour", "violin"], 1, agent_id=agent.pk, whole_store=whole_store
        )
        return found[0][1]

    # Searching some of the memories, their 15 are counted: "harbour" is in 12 of them.
    searched = term_weight(15, 3) / (term_weight(15, 3) + term_weight(15, 12))
    assert violin_share(whole_store=False) == pytest.approx(searched)
    whole = term_weight(1000, 3) / (term_weight(1000, 3) + term_weight(1000, 800))
    assert violin_share(whole_store=True) == pytest.approx(whole)


def test_an_import_that_makes_a_store_large_counts_its_common_words_at_once(
    postgres_only, common_at_four, agent, tmp_path
):
    notes = tmp_path / "agent" / "memory" / "notes"
    notes.mkdir(parents=True)
    for number in range(5):
        entry = {"Id": f"n{number}", "Content": f"Harbour note {number}.", "Category": "notes"}
        (notes / f"n{number}.json").write_text(json.dumps(entry), "utf-8")

    report = import_records(
        agent=agent, items=rockbot.read_store(tmp_path / "agent"), actor=Actor.maintainer("tests")
    )

    assert report.ok and report.tallies["memory"].created == 5
    assert shares(agent) == {"harbour": 1.0, "note": 1.0}


def test_a_store_grown_since_its_count_still_weighs_every_word_above_nothing(
    postgres_only, agent, harbour_and_violin
):
    # As if the last count had found the store at 2 memories: "harbour" is now in 12.
    TermShare.objects.create(agent=agent, lexeme="violin", holding=1, memories=2)

    found = lexical_candidates(
        harbour_and_violin, ["harbour", "violin"], 20, agent_id=agent.pk, whole_store=True
    )

    assert len(found) == 15
    assert all(0 < share <= 1 for _pk, share in found)
