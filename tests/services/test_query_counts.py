"""One phrase edit costs a fixed number of queries, whatever the size of the agent's store."""

from __future__ import annotations

import pytest

from stores.engine.actors import Actor
from stores.services import record_edit
from tests.factories import UserFactory, agent_token

# SAVEPOINT, SELECT … FOR UPDATE, UPDATE … WHERE version, INSERT revision, RELEASE SAVEPOINT.
PHRASE_EDIT_QUERIES = 5
# An agent's write asks too whether its conversation, or the writes naming none, are held.
AGENT_EDIT_QUERIES = PHRASE_EDIT_QUERIES + 1


@pytest.mark.parametrize("store_size", [1, 300])
def test_phrase_edit_query_count_does_not_grow_with_the_store(
    agent, make, store_size, django_assert_num_queries
):
    for number in range(store_size - 1):
        make.memory(agent, content=f"Filler memory {number}.")
    target = make.memory(agent, content="The user likes tea.")
    actor = Actor.maintainer("tests")
    with django_assert_num_queries(PHRASE_EDIT_QUERIES):
        result = record_edit(
            surface_key="memory",
            agent=agent,
            ref=target.pk,
            actor=actor,
            old_string="tea",
            new_string="mate",
        )
    assert result.ok


def test_agent_and_human_edits_each_cost_a_fixed_count(agent, make, django_assert_num_queries):
    target = make.memory(agent, content="The user likes tea.")
    token, _ = agent_token(agent)
    token_actor = Actor.for_token(token)
    with django_assert_num_queries(AGENT_EDIT_QUERIES):
        assert record_edit(
            surface_key="memory",
            agent=agent,
            ref=target.pk,
            actor=token_actor,
            old_string="tea",
            new_string="mate",
        ).ok
    staff = Actor.for_user(UserFactory(is_staff=True))
    with django_assert_num_queries(PHRASE_EDIT_QUERIES):
        assert record_edit(
            surface_key="memory",
            agent=agent,
            ref=target.pk,
            actor=staff,
            old_string="mate",
            new_string="tea",
        ).ok


def test_a_preview_reads_the_record_once_and_writes_nothing(agent, make, django_assert_num_queries):
    target = make.memory(agent, content="The user likes tea.")
    # SELECT the record: no transaction, no lock, no UPDATE, no revision.
    with django_assert_num_queries(1):
        result = record_edit(
            surface_key="memory",
            agent=agent,
            ref=target.pk,
            actor=Actor.maintainer("tests"),
            old_string="tea",
            new_string="mate",
            dry_run=True,
        )
    assert result.ok and result.details["text"] == "The user likes mate."
