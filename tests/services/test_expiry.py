"""Expiry purges only expired working-memory entries, each leaving its last value in history."""

from __future__ import annotations

import datetime as dt

from django.core.management import call_command
from django.utils import timezone

from stores.engine.actors import Actor
from stores.models import Revision, WorkingMemoryEntry
from stores.services import record_revert
from stores.services.expiry import working_purge_expired
from stores.tasks import purge_expired_working_memory


def expire(entry: WorkingMemoryEntry, seconds_ago: float = 60) -> None:
    WorkingMemoryEntry.objects.filter(pk=entry.pk).update(
        expires_at=timezone.now() - dt.timedelta(seconds=seconds_ago)
    )


def test_only_expired_entries_are_purged_and_each_leaves_a_revision(agent, make):
    expired = [make.working(agent, key=f"old-{n}", value=f"stale note {n}") for n in range(5)]
    for entry in expired:
        expire(entry)
    later = make.working(agent, key="later", ttl=3600)
    forever = make.working(agent, key="forever")

    outcome = working_purge_expired(batch_size=2)

    assert (outcome.purged, outcome.batches) == (5, 3)
    assert set(WorkingMemoryEntry.objects.values_list("pk", flat=True)) == {later.pk, forever.pk}
    purges = Revision.objects.filter(surface="working", op="forget").order_by("record_id")
    assert [revision.record_id for revision in purges] == [entry.pk for entry in expired]
    assert [revision.before_text for revision in purges] == [f"stale note {n}" for n in range(5)]
    assert all(revision.actor == "task:expiry" for revision in purges)
    assert working_purge_expired().purged == 0  # safe to run again


def test_a_purged_entry_can_be_brought_back_from_history(agent, make):
    entry = make.working(agent, key="focus", value="Reviewing the patrol log.")
    expire(entry)
    working_purge_expired()
    revision = Revision.objects.get(surface="working", record_id=entry.pk, op="forget")

    result = record_revert(
        surface_key="working",
        agent=agent,
        ref=entry.pk,
        actor=Actor.maintainer("tests"),
        revision_id=revision.pk,
        to="before",
    )

    assert result.ok, result
    assert WorkingMemoryEntry.objects.get(pk=entry.pk).value == "Reviewing the patrol log."


def test_purge_command_and_task(agent, make, capsys):
    entry = make.working(agent)
    expire(entry)

    call_command("purge_expired", "--dry-run")
    assert "1 entries have expired" in capsys.readouterr().out
    assert WorkingMemoryEntry.objects.filter(pk=entry.pk).exists()

    call_command("purge_expired", "--by", "alice")
    assert "Purged 1 expired entries" in capsys.readouterr().out
    assert Revision.objects.get(record_id=entry.pk, op="forget").actor == "shell:alice"

    expire(make.working(agent, key="second"))
    assert purge_expired_working_memory.delay().get() == {"purged": 1, "batches": 1}
