"""Importance decay: set-based, anchored on decayed_at, bookkeeping only."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest
from django.core.management import call_command
from django.db import connection, connections, transaction
from django.utils import timezone

from stores.engine.actors import Actor
from stores.models import DecayPass, Memory, Revision
from stores.services import memory_set_importance, record_edit
from stores.services.decay import decay_importance
from tests.factories import AgentFactory, RecordMaker

MAINTAINER = Actor.maintainer("tests")


def age(memory: Memory, days: float, *, anchor: str = "created_at") -> None:
    """Pretend the memory was created (or last decayed) `days` ago."""
    Memory.objects.filter(pk=memory.pk).update(**{anchor: timezone.now() - dt.timedelta(days=days)})


def test_importance_halves_after_one_half_life_anchored_on_decayed_at_not_updated_at(agent, make):
    memory = make.memory(agent, "The user drinks tea.", importance=0.8)
    age(memory, 30)
    # A content edit moves updated_at; it must not make the memory skip decay.
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=MAINTAINER,
        old_string="tea",
        new_string="green tea",
    )

    run = decay_importance(half_life_days=30)

    memory.refresh_from_db()
    assert memory.importance == pytest.approx(0.4, rel=1e-3)
    assert memory.decayed_at is not None
    assert run.rows_touched == 1

    decay_importance(half_life_days=30)  # right after: almost no time has passed
    memory.refresh_from_db()
    assert memory.importance == pytest.approx(0.4, rel=1e-3)

    age(memory, 60, anchor="decayed_at")
    decay_importance(half_life_days=30)
    memory.refresh_from_db()
    assert memory.importance == pytest.approx(0.1, rel=1e-3)


def test_decay_respects_pins_and_floors_and_never_raises(agent, make):
    pinned = make.memory(agent, "Pinned.", importance=0.9, pinned=True)
    floored = make.memory(agent, "Floored.", importance=0.5, importance_floor=0.3)
    under_floor = make.memory(agent, "Under.", importance=0.1, importance_floor=0.3)
    for memory in (pinned, floored, under_floor):
        age(memory, 3650)

    decay_importance(half_life_days=30)

    for memory in (pinned, floored, under_floor):
        memory.refresh_from_db()
    assert pinned.importance == 0.9
    assert pinned.decayed_at is not None  # unpinning later does not charge the pinned years
    assert floored.importance == pytest.approx(0.3)
    assert under_floor.importance == pytest.approx(0.1)


def test_decay_is_bookkeeping_it_changes_no_text_version_or_history(agent, make):
    memory = make.memory(agent, "The user drinks tea.", importance=0.8)
    age(memory, 10)
    before = Memory.objects.get(pk=memory.pk)
    revisions = Revision.objects.count()

    decay_importance(half_life_days=30)

    after = Memory.objects.get(pk=memory.pk)
    assert after.importance < before.importance
    assert (after.content, after.version, after.updated_at, after.text_hash) == (
        before.content,
        before.version,
        before.updated_at,
        before.text_hash,
    )
    assert Revision.objects.count() == revisions
    # A page holding the version from before the pass can still edit.
    result = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=MAINTAINER,
        old_string="tea",
        new_string="coffee",
        expected_version=before.version,
    )
    assert result.ok, result


def test_decay_never_undoes_an_importance_edit_made_during_the_pass(agent, make):
    first = make.memory(agent, "First.", importance=0.8)
    second = make.memory(agent, "Second.", importance=0.8)
    for memory in (first, second):
        age(memory, 30)
    edited = []

    def edit_between_batches(done: int, total: int) -> None:
        if not edited:  # after the batch holding `first`, before the one holding `second`
            edited.append(
                memory_set_importance(agent=agent, ref=second.pk, actor=MAINTAINER, importance=0.9)
            )

    decay_importance(half_life_days=30, batch_size=1, progress=edit_between_batches)

    first.refresh_from_db()
    second.refresh_from_db()
    assert edited[0].ok
    assert first.importance == pytest.approx(0.4, rel=1e-3)
    # The person's 0.9 stands: the pass computed from the row as it was when it wrote it,
    # and setting importance re-anchored decay at that moment.
    assert second.importance == pytest.approx(0.9, rel=1e-3)


def test_each_pass_is_logged(agent, make):
    for n in range(5):
        make.memory(agent, f"Memory {n}.", importance=0.6)

    run = decay_importance(half_life_days=7, batch_size=2, triggered_by="shell:alice")

    logged = DecayPass.objects.get()
    assert logged == run
    assert (logged.rows_touched, logged.batches, logged.half_life_days) == (5, 3, 7)
    assert logged.triggered_by == "shell:alice"
    assert logged.finished_at >= logged.started_at
    assert logged.duration_seconds > 0
    assert logged.daily_factor == pytest.approx(0.5 ** (1 / 7))


def test_decay_command_dry_run_changes_nothing(agent, make, capsys):
    memory = make.memory(agent, importance=0.8)
    age(memory, 30)

    call_command("decay", "--dry-run", "--half-life", "30")

    assert "Would lower 1 memories" in capsys.readouterr().out
    memory.refresh_from_db()
    assert memory.importance == 0.8
    assert not DecayPass.objects.exists()

    call_command("decay", "--half-life", "30", "--by", "alice")
    memory.refresh_from_db()
    assert memory.importance == pytest.approx(0.4, rel=1e-3)
    assert DecayPass.objects.get().triggered_by == "shell:alice"


def test_the_scheduled_task_runs_a_pass(agent, make):
    make.memory(agent)
    from stores.tasks import decay_memories

    result = decay_memories.delay().get()

    assert result["rows_touched"] == 1
    assert DecayPass.objects.get().triggered_by == "task:decay"


@pytest.mark.django_db(transaction=True)
def test_decay_blocked_by_an_importance_edit_keeps_the_edit_on_postgres():
    """A real race: the pass reaches a row while an edit holds it, and writes after it."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL row locks (run with MEMORYADMIN_DATABASE_URL set)")
    agent = AgentFactory()
    memory = RecordMaker().memory(agent, "The user drinks tea.", importance=0.8)
    age(memory, 30)
    editing, finish_edit = threading.Event(), threading.Event()
    results = {}

    def edit() -> None:
        try:
            with transaction.atomic():
                # The service locks the row, then commits 0.9; hold the transaction open.
                results["edit"] = memory_set_importance(
                    agent=agent, ref=memory.pk, actor=MAINTAINER, importance=0.9
                )
                editing.set()
                finish_edit.wait(30)
        finally:
            connections.close_all()

    def decay() -> None:
        try:
            results["decay"] = decay_importance(half_life_days=30)
        finally:
            connections.close_all()

    editor = threading.Thread(target=edit)
    editor.start()
    assert editing.wait(30)
    decayer = threading.Thread(target=decay)
    decayer.start()
    wait_until_a_query_waits_for_a_lock()
    finish_edit.set()
    editor.join(30)
    decayer.join(30)

    memory.refresh_from_db()
    assert results["edit"].ok and results["decay"].rows_touched == 1
    assert memory.importance == pytest.approx(0.9, rel=1e-3)


def wait_until_a_query_waits_for_a_lock(deadline_seconds: float = 30) -> None:
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return
        time.sleep(0.05)
    pytest.fail("the decay pass never waited for the edited row")
