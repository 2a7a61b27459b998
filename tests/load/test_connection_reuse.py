"""The production server reuses PostgreSQL connections (PostgreSQL pass).

Under Django's own ASGI handler each request's sync code ran in a new thread, and its
connections are per thread, so CONN_MAX_AGE kept none: every request opened a connection
(about 10 of an edit's 27 ms, bench/edit_path.py), and one kept for reuse leaked with its
thread. memoryadmin.asgi runs Django in a fixed pool of threads instead, each keeping its
connection; the opt-in connection pool (MEMORYADMIN_DATABASE_POOL=true) shares fewer.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.db import connection

from tests.factories import AgentFactory, agent_token
from tests.load.server import gunicorn

REQUESTS = 30


def sessions_opened() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_with_the_pool_requests_do_not_open_a_connection_each():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: the pool is PostgreSQL's")
    raw = agent_token(AgentFactory())[1]
    with gunicorn(workers=1, DATABASE_POOL="true") as base:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {raw}"
        session.get(f"{base}/api/v1/memories/", timeout=30)
        before = sessions_opened()
        for _ in range(REQUESTS):
            assert session.get(f"{base}/api/v1/memories/", timeout=30).status_code == 200
        time.sleep(1.5)  # a backend reports its session when it ends or flushes its stats
        opened = sessions_opened() - before
    assert opened <= 3, f"{opened} connections opened for {REQUESTS} requests"


@pytest.mark.django_db(transaction=True)
def test_the_production_server_keeps_a_connection_per_thread():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    raw = agent_token(AgentFactory())[1]
    with gunicorn(workers=1, threads=2) as base:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {raw}"
        session.get(f"{base}/api/v1/memories/", timeout=30)
        before = sessions_opened()
        for _ in range(REQUESTS):
            assert session.get(f"{base}/api/v1/memories/", timeout=30).status_code == 200
        time.sleep(1.5)
        opened = sessions_opened() - before
    # At most the second thread's own (and the first's, if it closed one at its age limit).
    assert opened <= 2, f"{opened} connections opened for {REQUESTS} requests"


def backends_connected() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_the_server_does_not_leak_a_connection_per_request():
    """Regression (the list-append checker at full size ran PostgreSQL out of connections):
    under Django's ASGI handler a connection kept for reuse stayed open with the thread it
    belonged to gone."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    raw = agent_token(AgentFactory())[1]
    with gunicorn(workers=1, threads=2) as base:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {raw}"
        session.get(f"{base}/api/v1/memories/", timeout=30)
        before = backends_connected()
        # Concurrent clients, as an agent fleet is: the server runs several requests at once.
        with ThreadPoolExecutor(max_workers=8) as clients:
            codes = list(
                clients.map(
                    lambda _: (
                        requests.get(
                            f"{base}/api/v1/memories/",
                            headers={"Authorization": f"Bearer {raw}"},
                            timeout=30,
                        ).status_code
                    ),
                    range(REQUESTS * 4),
                )
            )
        time.sleep(1)
        leaked = backends_connected() - before
    assert set(codes) == {200}
    assert leaked <= 2, f"{leaked} connections left open by {len(codes)} requests"
