"""MemoryFilters: what each door builds from its parsed input, and what it lets through."""

from __future__ import annotations

import pytest

from stores.selectors.filters import MemoryFilters, filtered_memories


def test_an_empty_text_filter_is_no_filter():
    assert MemoryFilters(category="", store="", tag="", subject="") == MemoryFilters()


def test_doors_pick_the_filters_by_name_or_by_query_parameter():
    arguments = {"query": "tea", "tag": None, "limit": 5, "offset": 0}
    assert MemoryFilters.from_values(arguments) == MemoryFilters(query="tea")
    parameters = {"q": "tea", "agent": "rockbot", "include_invalidated": True, "limit": 20}
    assert MemoryFilters.from_query(parameters) == MemoryFilters(
        query="tea", include_invalidated=True
    )


@pytest.mark.django_db
def test_the_query_ranks_and_filters_nothing(agent, make):
    memory = make.memory(agent, "The user likes tea.")
    found = filtered_memories(agent=agent, filters=MemoryFilters(query="coffee"))
    assert list(found) == [memory]
