"""The timestamp contract of PRODUCT.md section 2, field by field."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from stores.engine.actors import Actor
from stores.models import Memory
from stores.services import (
    memory_reinforce,
    memory_set_importance,
    record_create,
    record_edit,
    record_replace,
)
from stores.surfaces import SURFACES

ME = Actor.maintainer("tests")
PRESERVED = [
    "created_at",
    "last_seen_at",
    "reinforcement_count",
    "importance",
    "metadata",
    "superseded_by_id",
    "invalidated_at",
    "archived_at",
    "decayed_at",
]


@pytest.fixture
def aged_memory(agent, make):
    memory = make.memory(
        agent, content="The user lives in Paris.", importance=0.4, metadata={"source": "chat"}
    )
    long_ago = timezone.now() - dt.timedelta(days=30)
    # Age the record as if it had lived a month (bookkeeping outside the service, test only).
    Memory.objects.filter(pk=memory.pk).update(
        created_at=long_ago,
        updated_at=long_ago,
        last_seen_at=long_ago,
        reinforcement_count=3,
        decayed_at=long_ago,
    )
    memory.refresh_from_db()
    return memory


def snapshot(memory: Memory) -> dict:
    memory.refresh_from_db()
    return {
        name: getattr(memory, name) for name in [*PRESERVED, "updated_at", "content", "version"]
    }


def test_phrase_edit_bumps_updated_at_only(agent, aged_memory):
    before = snapshot(aged_memory)
    result = record_edit(
        surface_key="memory",
        agent=agent,
        ref=aged_memory.pk,
        actor=ME,
        old_string="Paris",
        new_string="Lyon",
    )
    after = snapshot(aged_memory)
    assert result.ok
    assert after["content"] == "The user lives in Lyon."
    assert after["updated_at"] > before["updated_at"]
    assert {k: after[k] for k in PRESERVED} == {k: before[k] for k in PRESERVED}
    assert after["version"] == before["version"] + 1


def test_replace_bumps_updated_at_only(agent, aged_memory):
    before = snapshot(aged_memory)
    result = record_replace(
        surface_key="memory",
        agent=agent,
        ref=aged_memory.pk,
        actor=ME,
        text="The user moved to Lyon in 2025.",
        expected_version=before["version"],
    )
    after = snapshot(aged_memory)
    assert result.ok
    assert after["updated_at"] > before["updated_at"]
    assert {k: after[k] for k in PRESERVED} == {k: before[k] for k in PRESERVED}


def test_importance_change_moves_importance_updated_at_and_the_decay_anchor(agent, aged_memory):
    before = snapshot(aged_memory)
    result = memory_set_importance(agent=agent, ref=aged_memory.pk, actor=ME, importance=0.9)
    after = snapshot(aged_memory)
    assert result.ok
    assert after["importance"] == 0.9
    assert after["updated_at"] > before["updated_at"]
    # A value set by hand is as of now: the next decay pass must not shrink it for time
    # that passed before it was set.
    assert after["decayed_at"] > before["decayed_at"]
    unchanged = [name for name in PRESERVED if name not in ("importance", "decayed_at")]
    assert {k: after[k] for k in unchanged} == {k: before[k] for k in unchanged}
    assert after["content"] == before["content"]


def test_reinforce_is_the_only_op_that_moves_last_seen_and_count(agent, aged_memory):
    before = snapshot(aged_memory)
    result = memory_reinforce(agent=agent, ref=aged_memory.pk, actor=ME)
    after = snapshot(aged_memory)
    assert result.ok
    assert after["reinforcement_count"] == before["reinforcement_count"] + 1
    assert after["last_seen_at"] > before["last_seen_at"]
    unchanged = [name for name in PRESERVED if name not in ("last_seen_at", "reinforcement_count")]
    assert {k: after[k] for k in unchanged} == {k: before[k] for k in unchanged}
    assert after["content"] == before["content"]


def test_importance_is_clamped_and_reported(agent, aged_memory):
    result = memory_set_importance(agent=agent, ref=aged_memory.pk, actor=ME, importance=7)
    aged_memory.refresh_from_db()
    assert result.ok and result.details["clamped"] is True
    assert aged_memory.importance == 1.0


def test_editing_a_working_memory_value_never_extends_its_ttl(agent, make):
    entry = make.working(agent, ttl=600)
    expires_at = entry.expires_at
    result = record_edit(
        surface_key="working",
        agent=agent,
        ref=entry.pk,
        actor=ME,
        old_string="patrol log",
        new_string="incident log",
    )
    entry.refresh_from_db()
    assert result.ok
    assert entry.expires_at == expires_at


NEW_RECORDS = {
    "memory": {"content": "The user lives in Paris."},
    "working": {"namespace": "session", "key": "topic", "value": "travel"},
    "skill": {"name": "pack", "content": "# Pack\n"},
    "task": {"name": "brief", "schedule": "0 8 * * *", "directive": "Summarise the news."},
    "rules": {"content": "- Be brief.\n"},
}


@pytest.mark.parametrize("surface_key", list(NEW_RECORDS))
def test_a_new_record_is_created_and_updated_at_one_moment(agent, surface_key):
    created = record_create(
        surface_key=surface_key, agent=agent, actor=ME, values=NEW_RECORDS[surface_key]
    )

    record = SURFACES[surface_key].model.objects.get(pk=created.id)
    moments = {
        name: getattr(record, name)
        for name in ("created_at", "updated_at", "last_seen_at", "stored_at")
        if hasattr(record, name)
    }
    assert set(moments.values()) == {record.created_at}, moments
