"""The embedded default's stand-in for Celery beat runs the same periodic passes."""

from __future__ import annotations

import datetime as dt

from django.core.management import call_command
from django.utils import timezone

from stores.models import DecayPass, Memory, WorkingMemoryEntry


def test_run_periodic_once_sweeps_decays_and_purges(agent, make, capsys):
    memory = make.memory(agent, content="Stale until the sweep runs.")
    Memory.objects.filter(pk=memory.pk).update(embedding_hash="", embedding=None)
    expired = make.working(agent, ttl=60)
    WorkingMemoryEntry.objects.filter(pk=expired.pk).update(
        expires_at=timezone.now() - dt.timedelta(minutes=1)
    )
    kept = make.working(agent, key="still-valid", ttl=3600)

    call_command("run_periodic", "--once")

    memory.refresh_from_db()
    assert memory.embedding_hash == memory.text_hash
    assert not WorkingMemoryEntry.objects.filter(pk=expired.pk).exists()
    assert WorkingMemoryEntry.objects.filter(pk=kept.pk).exists()
    assert DecayPass.objects.count() == 1
    assert "decay-memories" in capsys.readouterr().out
