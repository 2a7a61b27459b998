"""The embedded default's stand-in for Celery beat runs the same periodic passes."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from stores.models import DecayPass, Memory, WorkingMemoryEntry

ROOT = Path(__file__).resolve().parents[2]


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


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_run_periodic_stops_at_once_when_asked_between_passes(tmp_path, stop):
    """bin/serve's periodic runner ends on the signal that stops the server, and leaves no
    process behind (a stop that hung it kept the database open for good)."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMORYADMIN_")},
        # An empty database: each pass fails, is reported, and waits for its next time.
        "MEMORYADMIN_DATA_DIR": str(tmp_path),
        "MEMORYADMIN_ENV": "development",
    }
    process = subprocess.Popen(
        [sys.executable, "manage.py", "run_periodic"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        passes = len(settings.CELERY_BEAT_SCHEDULE)
        said = [process.stdout.readline() for _ in range(passes)]
        assert all(": " in line for line in said), said
        process.send_signal(stop)
        assert process.wait(timeout=20) == 0
    finally:
        process.kill()
        process.wait()
