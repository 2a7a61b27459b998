"""No lost update: concurrent phrase edits and importance changes on one hot record (PostgreSQL)."""

from __future__ import annotations

import random
import threading

import pytest
from django.db import connection

from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import Memory, Revision
from stores.services import memory_set_importance, record_edit
from tests.factories import AgentFactory, RecordMaker

WRITERS = 8
EDITS_PER_WRITER = 50


def token(writer: int, edit: int) -> str:
    return f"[w{writer}e{edit}]"


@pytest.mark.django_db(transaction=True)
def test_concurrent_edits_are_never_lost(postgres_only):
    agent = AgentFactory()
    tokens = [token(w, e) for w in range(WRITERS) for e in range(EDITS_PER_WRITER)]
    memory = RecordMaker().memory(agent, content=" ".join(tokens))
    outcomes: dict[str, Status] = {}
    importance_writes: list[Status] = []
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer(number: int) -> None:
        actor = Actor.maintainer(f"writer-{number}")
        rng = random.Random(number)
        try:
            for edit in range(EDITS_PER_WRITER):
                # Half the edits carry the version read a moment ago, so some lose the race.
                expected = None
                if rng.random() < 0.5:
                    expected = Memory.objects.values_list("version", flat=True).get(pk=memory.pk)
                result = record_edit(
                    surface_key="memory",
                    agent=agent,
                    ref=memory.pk,
                    actor=actor,
                    old_string=token(number, edit),
                    new_string=token(number, edit) + "+done",
                    expected_version=expected,
                )
                outcomes[token(number, edit)] = result.status
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    def importance_changer() -> None:
        actor = Actor.maintainer("importance")
        value = 0.0
        try:
            while not stop.is_set():
                value = 0.9 if value != 0.9 else 0.1
                importance_writes.append(
                    memory_set_importance(
                        agent=agent, ref=memory.pk, actor=actor, importance=value
                    ).status
                )
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    changer = threading.Thread(target=importance_changer)
    changer.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    changer.join()
    assert not errors, errors

    memory.refresh_from_db()
    applied = [t for t, status in outcomes.items() if status is Status.UPDATED]
    refused = [t for t, status in outcomes.items() if status is not Status.UPDATED]
    assert len(outcomes) == WRITERS * EDITS_PER_WRITER
    assert {outcomes[t] for t in refused} <= {Status.CONFLICT}
    assert applied, "no edit went through"
    for applied_token in applied:
        assert memory.content.count(applied_token + "+done") == 1, applied_token
    for refused_token in refused:
        assert refused_token + "+done" not in memory.content
        assert memory.content.count(refused_token) == 1

    chain = list(
        Revision.objects.filter(surface="memory", record_id=memory.pk)
        .order_by("version_after")
        .values_list("version_before", "version_after", "op")
    )
    assert [after for _, after, _ in chain] == list(range(1, len(chain) + 1))
    assert all(before == after - 1 for before, after, _ in chain)
    importance_applied = importance_writes.count(Status.UPDATED)
    assert len(chain) == 1 + len(applied) + importance_applied
    assert memory.version == len(chain)
    assert sum(1 for *_, op in chain if op == "edit") == len(applied)
