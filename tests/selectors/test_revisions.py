"""Revision reads: each in a fixed number of queries, whatever the number of rows."""

from __future__ import annotations

import pytest

from stores.engine.actors import Actor
from stores.models import Agent
from stores.selectors.revisions import (
    agent_revisions,
    changes_since,
    has_history,
    history_of,
    last_revision,
    live_refs,
    pending_by_surface,
    pending_count,
    pending_counts,
    pending_revisions,
    recorded_versions,
    text_at_version,
)
from stores.services import record_edit, record_forget
from tests.factories import agent_token


def edit(agent, memory, actor, old, new):
    result = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=actor,
        old_string=old,
        new_string=new,
    )
    assert result.ok, result.message


def test_history_and_changes_run_one_query_whatever_their_length(
    agent, make, django_assert_num_queries
):
    memory = make.memory(agent, "The user likes tea.")
    me = Actor.maintainer("tests")
    for old, new in (("tea", "mate"), ("mate", "cocoa"), ("cocoa", "coffee")):
        edit(agent, memory, me, old, new)

    with django_assert_num_queries(1):
        history = history_of(agent, "memory", memory.pk, limit=10)
        [row.reviewed_by for row in history]
    with django_assert_num_queries(1):
        changes = list(agent_revisions(agent, surface="memory", with_body=False))

    assert [row.version_after for row in history] == [4, 3, 2, 1]
    assert [row.pk for row in changes] == [row.pk for row in history]


def test_a_forgotten_record_is_found_by_its_last_revision_not_as_live(agent, make):
    kept = make.memory(agent, "Kept.")
    gone = make.memory(agent, "Gone.")
    record_forget(surface_key="memory", agent=agent, ref=gone.pk, actor=Actor.maintainer("t"))

    assert last_revision(agent, "memory", gone.pk).op == "forget"
    assert has_history(agent, "memory", gone.pk) and not has_history(agent, "memory", 0)
    assert live_refs(agent, agent_revisions(agent)) == {("memory", kept.pk)}


def test_pending_reads_count_what_awaits_review(agent, other_agent, make):
    memory = make.memory(agent, "The user likes tea.")
    other = make.memory(other_agent, "Other tea.")
    for owner in (agent, other_agent):
        Agent.objects.filter(pk=owner.pk).update(review_mode=Agent.ReviewMode.ALL)
        owner.refresh_from_db()
    edit(agent, memory, Actor.for_token(agent_token(agent)[0]), "tea", "mate")
    edit(other_agent, other, Actor.for_token(agent_token(other_agent)[0]), "tea", "mate")

    assert [row.record_id for row in pending_revisions(agent)] == [memory.pk]
    assert pending_counts(agent, "memory", [memory.pk, other.pk]) == {memory.pk: 1}
    assert pending_by_surface(agent) == {"memory": 1}


@pytest.mark.parametrize("with_body", [True, False])
def test_a_list_without_body_leaves_the_texts_unread(agent, make, with_body):
    make.memory(agent, "The user likes tea.")
    row = agent_revisions(agent, with_body=with_body).first()
    assert ("after_text" in row.get_deferred_fields()) is not with_body


def test_a_stale_form_finds_the_text_it_was_loaded_from_and_what_changed_since(agent, make):
    memory = make.memory(agent, "The user likes tea.")
    me = Actor.maintainer("tests")
    edit(agent, memory, me, "tea", "mate")
    edit(agent, memory, me, "mate", "cocoa")

    assert text_at_version(agent, "memory", memory.pk, 2, "content") == "The user likes mate."
    assert [
        row.version_after for row in changes_since(agent, "memory", memory.pk, 1, limit=20)
    ] == [
        2,
        3,
    ]
    assert recorded_versions("memory", memory.pk) == {1, 2, 3}
    assert pending_count(agent, "memory", memory.pk) == 0
