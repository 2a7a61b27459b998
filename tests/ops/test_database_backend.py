"""The PostgreSQL backend: a kept connection's health check makes no round trip while the
connection is sound, a connection the server ended is replaced before the request's first
query, and the statements every edit sends are prepared on the server once."""

from __future__ import annotations

import select
import time
from collections.abc import Iterator
from functools import partial

import pytest
from django.db import connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test.utils import CaptureQueriesContext

from stores.engine.actors import Actor
from stores.models import Memory
from stores.services import record_edit


@pytest.fixture
def kept(postgres_only) -> Iterator[BaseDatabaseWrapper]:
    """A connection of its own, as a server thread keeps one between requests."""
    wrapper = connections.create_connection("default")
    assert wrapper.settings_dict["CONN_HEALTH_CHECKS"] and wrapper.settings_dict["CONN_MAX_AGE"]
    wrapper.ensure_connection()
    yield wrapper
    wrapper.close()


def backend_pid(wrapper: BaseDatabaseWrapper) -> int:
    with wrapper.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def last_statement(pid: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid])
        return cursor.fetchone()[0]


def test_a_sound_kept_connection_is_checked_without_a_statement(kept):
    pid = backend_pid(kept)
    with kept.cursor() as cursor:
        cursor.execute("SELECT 'the last request'")

    assert kept.is_usable()
    assert last_statement(pid) == "SELECT 'the last request'"


def test_a_connection_the_server_ended_is_replaced_before_the_next_request(kept):
    pid = backend_pid(kept)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    waiting = select.poll()
    waiting.register(kept.connection.fileno(), select.POLLIN)
    deadline = time.monotonic() + 10
    while not waiting.poll(100) and time.monotonic() < deadline:
        pass

    assert not kept.is_usable()
    # What Django does at the start of a request, then the request's first query.
    kept.close_if_unusable_or_obsolete()
    assert backend_pid(kept) != pid


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_the_statements_an_edit_repeats_are_prepared_once_and_logged(postgres_only, agent, make):
    memory = make.memory(agent, "The user likes tea.")

    edit = partial(
        record_edit,
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=Actor.maintainer("tests"),
    )

    assert edit(old_string="tea", new_string="mate").ok
    after_one = prepared_statements()
    with CaptureQueriesContext(connection) as queries:
        assert edit(old_string="mate", new_string="coffee").ok
    Memory.objects.filter(agent=agent).count()  # Django's own statements stay unprepared

    assert prepared_statements() == after_one
    assert any(s.startswith('UPDATE "stores_memory"') for s in after_one)
    assert any(s.startswith('INSERT INTO "stores_revision"') for s in after_one)
    assert any(s.endswith('FOR UPDATE OF "stores_memory"') for s in after_one)
    # The query log shows each prepared statement with its values, as Django's own.
    updates = [q["sql"] for q in queries if q["sql"].startswith('UPDATE "stores_memory"')]
    assert updates and "'The user likes coffee.'" in updates[0]
