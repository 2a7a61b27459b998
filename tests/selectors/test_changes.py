"""The change feed's order under concurrent writers whose transactions commit out of id order."""

from __future__ import annotations

import random
import threading
import time

import pytest
from django.db import connections, transaction

from stores.engine.actors import Actor
from stores.models import Change, Revision
from stores.selectors.changes import changes_after, decode_cursor
from stores.services import record_edit
from tests.factories import RecordMaker

WRITERS = 8
WRITES_EACH = 12


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_committing_out_of_order_are_read_once_each_in_order(
    postgres_only, agent
):
    """Eight writers hold their transactions open a random moment after writing, so revision
    ids commit out of order, while a reader follows the feed page by page. Read by revision
    id, the feed would pass a low id that commits late and never hand it out."""
    make = RecordMaker()
    records = [make.memory(agent, f"Shared note {n}: v0.") for n in range(4)]
    shared = records[0]  # every writer edits it too: its versions must come in order
    stop = threading.Event()
    seen: list[dict] = []
    errors: list[BaseException] = []

    def write(writer: int) -> None:
        rng = random.Random(writer)
        actor = Actor.maintainer(f"writer-{writer}")
        try:
            for n in range(WRITES_EACH):
                target = shared if n % 3 == 0 else records[1 + writer % 3]
                with transaction.atomic():
                    result = record_edit(
                        surface_key="memory",
                        agent=agent,
                        ref=target.pk,
                        actor=actor,
                        old_string=":",
                        new_string=f": w{writer}n{n};",
                    )
                    assert result.ok, result.message
                    # Committed later than writes that began after it: ids out of order.
                    time.sleep(rng.uniform(0, 0.03))
        except BaseException as error:
            errors.append(error)
        finally:
            connections.close_all()

    def read() -> None:
        position = 0
        try:
            while True:
                done = stop.is_set()
                page = changes_after(agent, after=position, limit=5)
                seen.extend(page.items)
                position = decode_cursor(page.next, agent)
                if done and not page.items:
                    return
                time.sleep(0.002)
        except BaseException as error:
            errors.append(error)
        finally:
            connections.close_all()

    reader = threading.Thread(target=read)
    writers = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
    reader.start()
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    stop.set()
    reader.join()

    assert not errors, errors
    # The suggestion pass finds these notes alike as they are written: its changes come
    # between the writes, each once too.
    found = [
        (i["suggestion"]["id"], i["suggestion"]["event"]) for i in seen if i["revision"] is None
    ]
    assert len(found) == len(set(found)), "a suggestion's change was handed out twice"
    assert len(found) == Change.objects.filter(agent=agent, kind=Change.Kind.SUGGESTION).count()
    revisions = [item["revision"] for item in seen if item["revision"] is not None]
    committed = list(Revision.objects.filter(agent=agent).values_list("pk", flat=True))
    assert len(revisions) == len(set(revisions)), "a change was handed out twice"
    assert sorted(revisions) == sorted(committed), "a change was never handed out"
    assert len(committed) == len(records) + WRITERS * WRITES_EACH
    assert revisions != sorted(revisions), "the writers never committed out of id order"
    for record in records:
        versions = [item["version"] for item in seen if item["id"] == record.pk]
        assert versions == list(range(1, len(versions) + 1))
