"""The pass's candidate pairs on PostgreSQL, where its nearest neighbours come from an HNSW
index that other agents' memories share."""

from __future__ import annotations

import pytest

from stores.selectors import suggestions as found
from tests.factories import SubjectFactory, crowd_with_copies

NEVER = "The user never eats breakfast."
PORRIDGE = "The user has porridge every morning."


@pytest.fixture
def embedded(django_capture_on_commit_callbacks):
    return lambda: django_capture_on_commit_callbacks(execute=True)


def test_a_small_banks_neighbours_are_found_among_many_alike_of_other_agents(
    postgres_only, agent, other_agent, make, embedded
):
    subject = SubjectFactory(agent=agent)
    with embedded():
        pairs = {
            bank: (
                make.memory(agent, content=NEVER, subject=bank),
                make.memory(agent, content=PORRIDGE, subject=bank),
            )
            for bank in (subject, None)
        }
    # Past hnsw.max_scan_tuples (20,000): an index scan gives up before reaching either bank.
    crowd_with_copies(pairs[None][0], other_agent, 25_000)

    batch = list(found.comparable(agent).order_by("pk"))
    neighbours = found.neighbours_of_each(agent, batch)

    for never, porridge in pairs.values():
        assert [candidate.memory_id for candidate in neighbours[porridge.pk]] == [never.pk]
        assert [candidate.memory_id for candidate in neighbours[never.pk]] == [porridge.pk]
        after_write = found.candidates_of(porridge, found.vector_of(porridge.pk), lexical=False)
        assert [candidate.memory_id for candidate in after_write] == [never.pk]
