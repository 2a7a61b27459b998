"""Revert, restore and forget stay inside the record and explain every change they make.

A revision row is stored data that imports also write, so revert and restore treat it as
input: they set only the surface's restorable fields, each checked like any write. A
forget that breaks another record's link writes that change as a revision of its own, and
a restore never brings back a link to a record that is gone.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import Agent, Memory, Revision, Skill
from stores.services import memory_invalidate, record_forget, record_revert, record_update
from stores.surfaces import SURFACES
from tests.factories import agent_token

ME = Actor.maintainer("tests")


def chain(surface: str, record_id: int) -> list[tuple[int, str]]:
    return list(
        Revision.objects.filter(surface=surface, record_id=record_id)
        .order_by("version_after")
        .values_list("version_after", "op")
    )


def crafted_revision(memory: Memory, **values: Any) -> Revision:
    """A revision as a crafted import would leave it: appended to the record's chain."""
    version = memory.version
    fields: dict[str, Any] = {
        "agent": memory.agent,
        "surface": "memory",
        "record_id": memory.pk,
        "version_before": version,
        "version_after": version + 1,
        "op": "update",
        "field": "content",
        "actor": "import",
        "channel": "shell",
        "before_text": memory.content,
        "after_text": memory.content,
        "before_state": SURFACES["memory"].snapshot(memory),
        "after_state": SURFACES["memory"].snapshot(memory),
    }
    fields.update(values)
    revision = Revision.objects.create(**fields)
    Memory.objects.filter(pk=memory.pk).update(version=version + 1)
    memory.refresh_from_db()
    return revision


def hostile_state(memory: Memory) -> dict[str, Any]:
    return {
        **SURFACES["memory"].snapshot(memory),
        "category": "attacker",
        "tags": ["planted"],
        "metadata": {"owner": "attacker"},
        "importance": 0.99,
    }


# --- a revision of a field that is not text ------------------------------------------


def test_restore_refuses_a_revision_that_sets_the_agent(agent, other_agent, make):
    memory = make.memory(agent, content="The user parks in spot 12.")
    crafted = crafted_revision(
        memory,
        field="agent_id",
        after_text=str(other_agent.pk),
        after_state=hostile_state(memory),
    )
    assert record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=ME).ok
    token = Actor.for_token(agent_token(agent)[0])

    result = record_revert(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=token,
        revision_id=crafted.pk,
        to="after",
    )

    assert result.status is Status.INVALID
    assert "agent_id" in result.message and "not a text field" in result.message
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not Memory.objects.filter(agent=other_agent).exists()
    assert chain("memory", memory.pk) == [(1, "create"), (2, "update"), (3, "forget")]


@pytest.mark.parametrize("field", ["agent_id", "agent", "id", "version", "category", "store"])
def test_revert_of_a_live_record_refuses_a_revision_of_a_field_that_is_not_text(
    agent, other_agent, make, field
):
    memory = make.memory(agent, content="The user parks in spot 12.")
    crafted = crafted_revision(
        memory,
        field=field,
        after_text=str(other_agent.pk),
        after_state=hostile_state(memory),
    )

    result = record_revert(
        surface_key="memory", agent=agent, ref=memory.pk, actor=ME, revision_id=crafted.pk
    )

    assert result.status is Status.INVALID
    assert repr(field) in result.message
    fresh = Memory.objects.get(pk=memory.pk)
    assert (fresh.agent_id, fresh.version, fresh.category) == (agent.pk, 2, "general")


# --- the state a revision holds is checked like any write ---------------------------


@pytest.mark.parametrize("spec", list(SURFACES.values()), ids=list(SURFACES))
def test_no_surface_declares_ownership_or_bookkeeping_restorable(spec):
    never = {"id", "agent", "version", "updated_at", "text_hash", "embedding", "embedding_hash"}
    assert never.isdisjoint(spec.state_fields)
    assert never.isdisjoint(spec.revertable_fields)
    assert never.isdisjoint(spec.text_fields)


def test_restore_ignores_state_keys_that_are_not_restorable(agent, other_agent, make):
    memory = make.memory(agent, content="The user parks in spot 12.")
    state = {
        **hostile_state(memory),
        "agent": other_agent.pk,
        "agent_id": other_agent.pk,
        "id": memory.pk + 1000,
        "version": 99,
        "text_hash": "0" * 64,
        "content": "planted through the state",
    }
    crafted = crafted_revision(memory, after_state=state)
    assert record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=ME).ok

    result = record_revert(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        revision_id=crafted.pk,
        to="after",
    )

    assert result.status is Status.REVERTED, result
    restored = Memory.objects.get(pk=memory.pk)
    assert (restored.agent_id, restored.version) == (agent.pk, 4)
    assert restored.content == "The user parks in spot 12."
    # Declared state fields come back (checked); nothing else in the state does.
    assert (restored.category, restored.tags) == ("attacker", ["planted"])
    assert not Memory.objects.filter(agent=other_agent).exists()


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"importance": 7.0}, {"importance": 1.0}),
        ({"importance_floor": -3}, {"importance_floor": 0.0}),
        ({"tags": " a , b,a"}, {"tags": ["a", "b"]}),
    ],
)
def test_restore_coerces_state_values_as_a_write_would(agent, make, values, expected):
    memory = make.memory(agent)
    state = {**SURFACES["memory"].snapshot(memory), **values}
    crafted = crafted_revision(memory, after_state=state)
    assert record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=ME).ok

    result = record_revert(
        surface_key="memory", agent=agent, ref=memory.pk, actor=ME, revision_id=crafted.pk
    )

    assert result.status is Status.REVERTED, result
    restored = Memory.objects.filter(pk=memory.pk).values(*expected).get()
    assert restored == expected
    after_state = Revision.objects.get(pk=result.revision).after_state
    assert {name: after_state[name] for name in expected} == expected


BAD_STATES = [
    ({"store": "anything-goes"}, "store"),
    ({"tags": {"a": 1}}, "tags"),
    ({"metadata": [1, 2]}, "metadata"),
    ({"importance": "high"}, "importance"),
    ({"pinned": "yes"}, "pinned"),
    ({"category": "x" * 101}, "category"),
    ({"category": None}, "category"),
    ({"invalidated_at": "2025-13-45T00:00:00"}, "invalidated_at"),
    ({"last_seen_at": 12}, "last_seen_at"),
    ({"reinforcement_count": -4}, "reinforcement_count"),
    ({"superseded_by": "7"}, "superseded_by"),
    ({"alias": 12}, "alias"),
]


@pytest.mark.parametrize(("values", "field"), BAD_STATES)
def test_restore_refuses_a_state_no_write_could_set(agent, make, values, field):
    memory = make.memory(agent)
    state = {**SURFACES["memory"].snapshot(memory), **values}
    crafted = crafted_revision(memory, after_state=state)
    assert record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=ME).ok

    result = record_revert(
        surface_key="memory", agent=agent, ref=memory.pk, actor=ME, revision_id=crafted.pk
    )

    assert result.status is Status.INVALID, result
    assert field in result.message
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert chain("memory", memory.pk)[-1] == (3, "forget")


@pytest.mark.parametrize(
    ("values", "field"),
    [v for v in BAD_STATES if set(v[0]) <= set(SURFACES["memory"].revertable_fields)],
)
def test_revert_of_a_live_record_refuses_a_state_no_write_could_set(agent, make, values, field):
    memory = make.memory(agent)
    crafted = crafted_revision(
        memory, after_state={**SURFACES["memory"].snapshot(memory), **values}
    )

    result = record_revert(
        surface_key="memory", agent=agent, ref=memory.pk, actor=ME, revision_id=crafted.pk
    )

    assert result.status is Status.INVALID, result
    assert field in result.message
    assert Memory.objects.get(pk=memory.pk).version == 2


def test_a_bogus_store_in_a_state_does_not_escape_the_store_rules(agent, make):
    fact = make.memory(agent, store=Memory.Store.FACT)
    crafted = crafted_revision(
        fact, after_state={**SURFACES["memory"].snapshot(fact), "store": "writable"}
    )
    assert record_forget(surface_key="memory", agent=agent, ref=fact.pk, actor=ME).ok
    token = Actor.for_token(agent_token(agent)[0])

    result = record_revert(
        surface_key="memory", agent=agent, ref=fact.pk, actor=token, revision_id=crafted.pk
    )

    assert result.status is Status.INVALID
    assert not Memory.objects.filter(pk=fact.pk).exists()


def test_restore_refuses_text_over_the_size_limit(agent, make, settings):
    limits = settings.MEMORYADMIN["MAX_TEXT_LENGTH"]
    memory = make.memory(agent)
    crafted = crafted_revision(memory, after_text="x" * (limits["memory"] + 1))
    assert record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=ME).ok

    result = record_revert(
        surface_key="memory", agent=agent, ref=memory.pk, actor=ME, revision_id=crafted.pk
    )

    assert result.status is Status.INVALID
    assert not Memory.objects.filter(pk=memory.pk).exists()


def test_skill_restore_takes_only_its_own_state(agent, make):
    skill = make.skill(agent, name="deploy")
    spec = SURFACES["skill"]
    state = {**spec.snapshot(skill), "name": "x" * 201}
    revision = Revision.objects.create(
        agent=agent,
        surface="skill",
        record_id=skill.pk,
        version_before=1,
        version_after=2,
        op="update",
        field="content",
        actor="import",
        channel="shell",
        before_text=skill.content,
        after_text=skill.content,
        before_state=spec.snapshot(skill),
        after_state=state,
    )
    Skill.objects.filter(pk=skill.pk).update(version=2)
    assert record_forget(surface_key="skill", agent=agent, ref=skill.pk, actor=ME).ok

    result = record_revert(
        surface_key="skill", agent=agent, ref=skill.pk, actor=ME, revision_id=revision.pk
    )

    assert result.status is Status.INVALID
    assert "name" in result.message


# --- forgetting a successor -------------------------------------------------------


def superseded_pair(agent, make) -> tuple[Memory, Memory]:
    old = make.memory(agent, content="Office is on floor 3.")
    new = make.memory(agent, content="Office is on floor 5.")
    assert memory_invalidate(agent=agent, ref=old.pk, actor=ME, replacement_ref=new.pk).ok
    old.refresh_from_db()
    return old, new


def test_forgetting_a_successor_unlinks_its_predecessor_as_a_revision(agent, make):
    old, new = superseded_pair(agent, make)

    result = record_forget(surface_key="memory", agent=agent, ref=new.pk, actor=ME)

    assert result.status is Status.DELETED
    fresh = Memory.objects.get(pk=old.pk)
    assert (fresh.superseded_by_id, fresh.version) == (None, 3)
    assert fresh.invalidated_at == old.invalidated_at  # still superseded, by a gone record
    unlink = Revision.objects.get(surface="memory", record_id=old.pk, version_after=3)
    assert (unlink.op, unlink.actor, unlink.channel) == ("unlink", "shell:tests", "shell")
    assert unlink.before_state["superseded_by"] == new.pk
    assert unlink.after_state == SURFACES["memory"].snapshot(fresh)
    assert unlink.after_state["superseded_by"] is None
    assert unlink.before_text == unlink.after_text == "Office is on floor 3."
    assert result.details["unlinked"] == [
        {"surface": "memory", "id": old.pk, "version": 3, "revision": unlink.pk}
    ]


def test_restoring_the_successor_and_reverting_the_unlink_links_them_again(agent, make):
    old, new = superseded_pair(agent, make)
    forgotten = record_forget(surface_key="memory", agent=agent, ref=new.pk, actor=ME)
    assert record_revert(
        surface_key="memory",
        agent=agent,
        ref=new.pk,
        actor=ME,
        revision_id=forgotten.revision,
        to="before",
    ).ok

    result = record_revert(
        surface_key="memory",
        agent=agent,
        ref=old.pk,
        actor=ME,
        revision_id=forgotten.details["unlinked"][0]["revision"],
        to="before",
    )

    assert result.status is Status.REVERTED, result
    assert Memory.objects.get(pk=old.pk).superseded_by_id == new.pk
    assert chain("memory", old.pk)[-2:] == [(3, "unlink"), (4, "revert")]


def test_an_agent_forgetting_a_successor_unlinks_a_predecessor_it_may_not_edit(agent, make):
    # The episodic predecessor takes no op of the agent's; its link to a record that no
    # longer exists goes anyway, as the consequence of a forget the agent may do.
    episode = make.memory(agent, content="Moved desks.", store=Memory.Store.EPISODIC)
    new = make.memory(agent, content="Desk is by the window.")
    assert memory_invalidate(agent=agent, ref=episode.pk, actor=ME, replacement_ref=new.pk).ok
    Agent.objects.filter(pk=agent.pk).update(review_mode=Agent.ReviewMode.ALL)
    agent.refresh_from_db()
    token = Actor.for_token(agent_token(agent)[0])

    result = record_forget(surface_key="memory", agent=agent, ref=new.pk, actor=token)

    assert result.status is Status.DELETED
    assert Memory.objects.get(pk=episode.pk).superseded_by_id is None
    unlink = Revision.objects.get(surface="memory", record_id=episode.pk, op="unlink")
    assert unlink.actor == token.label
    assert unlink.review == Revision.Review.PENDING  # a reviewer sees it beside the forget


def test_a_forget_that_is_refused_unlinks_nothing(agent, make):
    old, new = superseded_pair(agent, make)

    result = record_forget(
        surface_key="memory", agent=agent, ref=new.pk, actor=ME, expected_version=7
    )

    assert result.status is Status.CONFLICT
    assert Memory.objects.get(pk=old.pk).superseded_by_id == new.pk
    assert chain("memory", old.pk) == [(1, "create"), (2, "invalidate")]


def test_every_link_between_surface_records_is_one_the_forget_unlinks():
    from django.db import models

    links = [
        (spec.key, field.name, field.remote_field.on_delete)
        for spec in SURFACES.values()
        for field in spec.model._meta.concrete_fields
        if field.many_to_one
        and any(field.related_model is other.model for other in SURFACES.values())
    ]
    # A new link must be handled by engine.delete before it joins this list: CASCADE or
    # PROTECT would change or block a record outside the forget's revision.
    assert links == [("memory", "superseded_by", models.SET_NULL)]


# --- restoring a record whose successor is gone ------------------------------------


def test_restoring_a_memory_whose_successor_is_gone_drops_the_link(agent, make):
    old, new = superseded_pair(agent, make)
    forgotten = record_forget(surface_key="memory", agent=agent, ref=old.pk, actor=ME)
    assert record_forget(surface_key="memory", agent=agent, ref=new.pk, actor=ME).ok

    result = record_revert(
        surface_key="memory",
        agent=agent,
        ref=old.pk,
        actor=ME,
        revision_id=forgotten.revision,
        to="before",
    )

    assert result.status is Status.REVERTED, result
    restored = Memory.objects.get(pk=old.pk)
    assert restored.superseded_by_id is None
    assert restored.invalidated_at == old.invalidated_at
    revision = Revision.objects.get(pk=result.revision)
    assert revision.after_state == SURFACES["memory"].snapshot(restored)
    assert revision.after_state["superseded_by"] is None
    connection.check_constraints()  # no dangling key left for the commit to trip over


def test_restoring_a_memory_keeps_a_successor_that_is_still_there(agent, make):
    old, new = superseded_pair(agent, make)
    forgotten = record_forget(surface_key="memory", agent=agent, ref=old.pk, actor=ME)

    result = record_revert(
        surface_key="memory",
        agent=agent,
        ref=old.pk,
        actor=ME,
        revision_id=forgotten.revision,
        to="before",
    )

    assert result.status is Status.REVERTED
    assert Memory.objects.get(pk=old.pk).superseded_by_id == new.pk


def test_restore_drops_links_to_another_agents_records(agent, other_agent, make):
    memory = make.memory(agent)
    foreign = make.memory(other_agent)
    foreign_subject = other_agent.subjects.create(display_name="Cy", external_id="cy")
    crafted = crafted_revision(
        memory,
        after_state={
            **SURFACES["memory"].snapshot(memory),
            "superseded_by": foreign.pk,
            "subject": foreign_subject.pk,
        },
    )
    assert record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=ME).ok

    result = record_revert(
        surface_key="memory", agent=agent, ref=memory.pk, actor=ME, revision_id=crafted.pk
    )

    assert result.status is Status.REVERTED, result
    restored = Memory.objects.get(pk=memory.pk)
    assert (restored.superseded_by_id, restored.subject_id) == (None, None)


def test_reverting_a_live_memory_to_a_link_whose_target_is_gone_drops_it(agent, make):
    old, new = superseded_pair(agent, make)
    invalidated = Revision.objects.get(surface="memory", record_id=old.pk, op="invalidate")
    assert record_update(
        surface_key="memory", agent=agent, ref=old.pk, actor=ME, changes={"category": "moved"}
    ).ok
    assert record_forget(surface_key="memory", agent=agent, ref=new.pk, actor=ME).ok

    result = record_revert(
        surface_key="memory", agent=agent, ref=old.pk, actor=ME, revision_id=invalidated.pk
    )

    assert result.status is Status.REVERTED, result
    fresh = Memory.objects.get(pk=old.pk)
    assert (fresh.category, fresh.superseded_by_id) == ("general", None)
    connection.check_constraints()
