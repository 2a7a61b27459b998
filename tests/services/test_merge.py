"""The merge op: the timestamp contract of a merge, the store rules, and its undo."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import Agent, Memory, Revision
from stores.services import memory_merge, record_edit, record_undo

ME = Actor.maintainer("tests")
LONG_AGO = timezone.now() - dt.timedelta(days=30)


def aged(memory: Memory, **values) -> Memory:
    # Age a record as if it had lived a while (bookkeeping outside the service, test only).
    Memory.objects.filter(pk=memory.pk).update(updated_at=LONG_AGO, **values)
    memory.refresh_from_db()
    return memory


@pytest.fixture
def three(agent, make):
    kept = aged(
        make.memory(agent, content="The user lives in Berlin.", tags=["home"], importance=0.3),
        created_at=LONG_AGO,
        last_seen_at=LONG_AGO,
        reinforcement_count=2,
    )
    recent = timezone.now() - dt.timedelta(days=1)
    second = aged(
        make.memory(agent, content="User lives in Berlin", tags=["city", "home"], importance=0.8),
        last_seen_at=recent,
        reinforcement_count=3,
    )
    third = aged(
        make.memory(agent, content="The user is based in Berlin.", store="episodic"),
        last_seen_at=LONG_AGO,
        reinforcement_count=1,
    )
    return kept, second, third


def test_merge_sums_takes_latest_highest_and_union(agent, three):
    kept, second, third = three
    result = memory_merge(
        agent=agent, actor=ME, ref=kept.pk, merge_from=[second.pk, third.pk],
        expected_version=kept.version,
    )  # fmt: skip
    assert result.status == Status.UPDATED, result
    kept.refresh_from_db()
    assert kept.reinforcement_count == 6
    assert kept.last_seen_at == second.last_seen_at
    assert kept.importance == 0.8
    assert kept.tags == ["home", "city"]
    assert kept.content == "The user lives in Berlin."
    assert kept.created_at == LONG_AGO
    assert kept.updated_at > LONG_AGO
    for other in (second, third):
        other.refresh_from_db()
        assert other.superseded_by_id == kept.pk
        assert other.invalidated_at is not None
        assert other.content != ""
    assert [m["id"] for m in result.details["merged"]] == [second.pk, third.pk]
    ops = Revision.objects.filter(agent=agent, op="merge").values_list("record_id", flat=True)
    assert sorted(ops) == sorted([kept.pk, second.pk, third.pk])


def test_merge_sets_the_merged_text(agent, three):
    kept, second, _ = three
    result = memory_merge(
        agent=agent, actor=ME, ref=kept.pk, merge_from=[second.pk],
        content="The user lives in Berlin (Kreuzberg).", expected_version=kept.version,
    )  # fmt: skip
    assert result.ok
    kept.refresh_from_db()
    assert kept.content == "The user lives in Berlin (Kreuzberg)."


def test_dry_run_writes_nothing(agent, three):
    kept, second, _ = three
    result = memory_merge(agent=agent, actor=ME, ref=kept.pk, merge_from=[second.pk], dry_run=True)
    assert result.ok and result.details["dry_run"] is True
    second.refresh_from_db()
    kept.refresh_from_db()
    assert second.superseded_by_id is None and kept.reinforcement_count == 2
    assert not Revision.objects.filter(agent=agent, op="merge").exists()


def test_a_fact_cannot_be_merged_away_and_nothing_is_written(agent, make, three):
    kept, second, _ = three
    fact = make.memory(agent, content="The user lives in Berlin, a fact.", store="fact")
    user = Actor.background("tests")
    result = memory_merge(agent=agent, actor=user, ref=kept.pk, merge_from=[second.pk, fact.pk])
    assert result.status == Status.NOT_EDITABLE
    second.refresh_from_db()
    assert second.superseded_by_id is None
    assert not Revision.objects.filter(agent=agent, op="merge").exists()


def test_stale_version_is_a_conflict(agent, three):
    kept, second, _ = three
    result = memory_merge(
        agent=agent, actor=ME, ref=kept.pk, merge_from=[second.pk],
        expected_version=kept.version + 1,
    )  # fmt: skip
    assert result.status == Status.CONFLICT


def test_merging_into_itself_or_another_agent_is_refused(agent, make, three):
    kept, _, _ = three
    itself = memory_merge(agent=agent, actor=ME, ref=kept.pk, merge_from=[kept.pk])
    assert itself.status == Status.CONFLICT
    stranger = make.memory(Agent.objects.create(name="stranger"), content="x")
    elsewhere = memory_merge(agent=agent, actor=ME, ref=kept.pk, merge_from=[stranger.pk])
    assert elsewhere.status == Status.NOT_FOUND
    nothing = memory_merge(agent=agent, actor=ME, ref=kept.pk, merge_from=[])
    assert nothing.status == Status.INVALID


@pytest.mark.parametrize("which", ["kept", "merged"])
def test_undo_restores_every_record(agent, three, which):
    kept, second, third = three
    before = {m.pk: (m.content, m.reinforcement_count, m.tags, m.importance) for m in three}
    merged = memory_merge(
        agent=agent, actor=ME, ref=kept.pk, merge_from=[second.pk, third.pk],
        content="Berlin is home.", expected_version=kept.version,
    )  # fmt: skip
    assert merged.ok
    target = kept if which == "kept" else second
    revision = Revision.objects.get(agent=agent, op="merge", record_id=target.pk)
    undone = record_undo(
        surface_key="memory", agent=agent, ref=target.pk, actor=ME, revision_id=revision.pk
    )
    assert undone.ok, undone
    for memory in three:
        memory.refresh_from_db()
        assert (memory.content, memory.reinforcement_count, memory.tags, memory.importance) == (
            before[memory.pk]
        )
        assert memory.superseded_by_id is None and memory.invalidated_at is None
    assert sorted(r["id"] for r in undone.details["restored"]) == sorted(
        {second.pk, third.pk, kept.pk} - {undone.id}
    )


def test_undo_after_a_later_change_is_refused_with_nothing_written(agent, three):
    kept, second, _ = three
    assert memory_merge(agent=agent, actor=ME, ref=kept.pk, merge_from=[second.pk]).ok
    assert record_edit(
        surface_key="memory", agent=agent, ref=kept.pk, actor=ME,
        old_string="Berlin", new_string="Potsdam",
    ).ok  # fmt: skip
    revision = Revision.objects.get(agent=agent, op="merge", record_id=kept.pk)
    undone = record_undo(
        surface_key="memory", agent=agent, ref=kept.pk, actor=ME, revision_id=revision.pk
    )
    assert undone.status == Status.CONFLICT
    second.refresh_from_db()
    assert second.superseded_by_id == kept.pk


@pytest.mark.parametrize("which", ["kept", "merged"])
def test_a_merge_into_a_superseded_memory_is_undone_from_either_side(agent, make, three, which):
    kept, second, _ = three
    newer = make.memory(agent, content="The user moved to Hamburg.")
    aged(kept, superseded_by=newer)
    merged = memory_merge(agent=agent, actor=ME, ref=kept.pk, merge_from=[second.pk])
    assert merged.ok, merged
    target = kept if which == "kept" else second
    revision = Revision.objects.get(agent=agent, op="merge", record_id=target.pk)

    undone = record_undo(
        surface_key="memory", agent=agent, ref=target.pk, actor=ME, revision_id=revision.pk
    )

    assert undone.ok, undone
    kept.refresh_from_db()
    second.refresh_from_db()
    # The kept memory stays superseded as it was; the merged-away one is back.
    assert kept.superseded_by_id == newer.pk and kept.reinforcement_count == 2
    assert second.superseded_by_id is None and second.invalidated_at is None
