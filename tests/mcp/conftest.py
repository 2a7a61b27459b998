"""Connect to memoryadmin with the MCP SDK's own client, over HTTP and over stdio.

HTTP: the real ASGI application (Django and /mcp/ together) under uvicorn, in a thread on a
loopback port, sharing the test database. Stdio: `manage.py mcp_stdio --token` spawned as
a subprocess against the same data — on PostgreSQL the test database itself; on SQLite
(an in-memory test database no other process can open) a file copy of it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from urllib.parse import quote

import pytest
from asgiref.sync import sync_to_async
from django.core.cache import cache
from django.db import connection, connections

from tests.mcp.clients import run_async
from tests.servers import asgi_server

FAKE_EMBEDDINGS = "stores.embeddings.fake.FakeBackend"


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def sync_thread_db(transactional_db) -> Iterator[None]:
    """Committed data the MCP handlers can read from asgiref's one sync thread, whose
    connections are closed afterwards (or PostgreSQL would refuse to drop the test database)."""
    yield
    run_async(sync_to_async(connections.close_all, thread_sensitive=True))


@pytest.fixture
def mcp_url(sync_thread_db) -> Iterator[str]:
    """The /mcp/ endpoint of a uvicorn server running the whole ASGI application."""
    with asgi_server() as base:
        yield f"{base}/mcp/"


@pytest.fixture
def stdio_environment(sync_thread_db, tmp_path) -> Callable[[], dict[str, str]]:
    """Environment that points a subprocess at the test data; call it once the data exists
    (on SQLite the data is copied to a file when it is called)."""

    def environment() -> dict[str, str]:
        variables = {"MEMORYADMIN_EMBEDDING_BACKEND": FAKE_EMBEDDINGS}
        if connection.vendor == "postgresql":
            db = connection.settings_dict
            user = quote(db["USER"] or "")
            password = f":{quote(db['PASSWORD'])}" if db.get("PASSWORD") else ""
            variables["MEMORYADMIN_DATABASE_URL"] = (
                f"postgres://{user}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
            )
        else:
            connection.ensure_connection()
            copy = sqlite3.connect(tmp_path / "memoryadmin.sqlite3")
            with copy:
                connection.connection.backup(copy)
            copy.close()
            variables["MEMORYADMIN_DATA_DIR"] = str(tmp_path)
        return variables

    return environment
