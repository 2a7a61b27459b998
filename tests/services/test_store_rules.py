"""Store rules: fact rows refuse every op, episodic rows accept only invalidate."""

from __future__ import annotations

import pytest

from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import Memory
from stores.services import (
    memory_invalidate,
    memory_reinforce,
    memory_set_importance,
    record_edit,
    record_forget,
    record_replace,
    record_update,
)
from tests.factories import UserFactory


def every_op(agent, memory, actor):
    """Apply each op in turn (a replace carries the version current at that moment)."""
    ref = memory.pk

    def current_version():
        return Memory.objects.filter(pk=ref).values_list("version", flat=True).first()

    results = {}
    results["edit"] = record_edit(
        surface_key="memory",
        agent=agent,
        ref=ref,
        actor=actor,
        old_string="tea",
        new_string="coffee",
    )
    results["replace"] = record_replace(
        surface_key="memory",
        agent=agent,
        ref=ref,
        actor=actor,
        text="Something else entirely.",
        expected_version=current_version(),
    )
    results["update"] = record_update(
        surface_key="memory", agent=agent, ref=ref, actor=actor, changes={"category": "drinks"}
    )
    results["set_importance"] = memory_set_importance(
        agent=agent, ref=ref, actor=actor, importance=0.9
    )
    results["reinforce"] = memory_reinforce(agent=agent, ref=ref, actor=actor)
    results["forget"] = record_forget(surface_key="memory", agent=agent, ref=ref, actor=actor)
    return results


@pytest.fixture
def editor(agent):
    return Actor.for_user(UserFactory(is_staff=True))


def test_fact_rows_refuse_every_op_with_not_editable(agent, make, editor):
    fact = make.memory(agent, store=Memory.Store.FACT)
    results = every_op(agent, fact, editor)
    results["invalidate"] = memory_invalidate(agent=agent, ref=fact.pk, actor=editor)
    assert {op: r.status for op, r in results.items()} == dict.fromkeys(
        results, Status.NOT_EDITABLE
    )
    assert all(r.details["store"] == "fact" for r in results.values())
    fact.refresh_from_db()
    assert fact.version == 1 and fact.content == "The user prefers tea over coffee."


def test_episodic_rows_accept_only_invalidate(agent, make, editor):
    episode = make.memory(agent, store=Memory.Store.EPISODIC)
    results = every_op(agent, episode, editor)
    assert {r.status for r in results.values()} == {Status.NOT_EDITABLE}
    assert "invalidated" in results["edit"].message
    invalidated = memory_invalidate(agent=agent, ref=episode.pk, actor=editor)
    assert invalidated.status is Status.INVALIDATED
    episode.refresh_from_db()
    assert episode.invalidated_at is not None


def test_working_rows_accept_every_op(agent, make, editor):
    memory = make.memory(agent)
    results = every_op(agent, memory, editor)
    assert {op: r.status for op, r in results.items()} == {
        "edit": Status.UPDATED,
        "replace": Status.UPDATED,
        "update": Status.UPDATED,
        "set_importance": Status.UPDATED,
        "reinforce": Status.UPDATED,
        "forget": Status.DELETED,
    }
    assert not Memory.objects.filter(pk=memory.pk).exists()


def test_admin_permission_bypasses_store_rules(agent, make):
    fact = make.memory(agent, store=Memory.Store.FACT)
    admin = Actor.for_user(UserFactory(is_staff=True, is_superuser=True))
    result = record_edit(
        surface_key="memory",
        agent=agent,
        ref=fact.pk,
        actor=admin,
        old_string="tea",
        new_string="mate",
    )
    assert result.status is Status.UPDATED


def test_invalidate_with_a_replacement_from_the_same_agent(agent, other_agent, make, editor):
    old = make.memory(agent, content="Office is on floor 3.")
    new = make.memory(agent, content="Office is on floor 5.")
    foreign = make.memory(other_agent, content="Elsewhere.")
    refused = memory_invalidate(agent=agent, ref=old.pk, actor=editor, replacement_ref=foreign.pk)
    assert refused.status is Status.NOT_FOUND
    result = memory_invalidate(agent=agent, ref=old.pk, actor=editor, replacement_ref=new.pk)
    old.refresh_from_db()
    assert result.status is Status.INVALIDATED
    assert old.superseded_by_id == new.pk and old.invalidated_at is not None
