"""The API's rate limit holds for a token across all the server's processes (PostgreSQL pass).

Each gunicorn worker is its own process; a limit counted in each process's memory lets a
token through once per worker. With the cache in Redis (MEMORYADMIN_CACHE_URL, or the
broker's Redis) the budget is shared.
"""

from __future__ import annotations

import shutil

import pytest
import requests
from django.db import connection

from tests.factories import AgentFactory, agent_token
from tests.load.server import gunicorn, redis_server

LIMIT = 12


@pytest.mark.django_db(transaction=True)
def test_rate_limit_is_shared_by_every_worker():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: gunicorn's processes must share the test database")
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server (bin/system-deps installs it)")
    raw = agent_token(AgentFactory())[1]
    with (
        redis_server() as redis_url,
        gunicorn(
            workers=4, threads=1, API_RATE_LIMIT=f"{LIMIT}/minute", BROKER_URL=redis_url
        ) as base,
    ):
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {raw}"
        codes = [
            session.get(f"{base}/api/v1/memories/", timeout=30).status_code
            for _ in range(LIMIT * 5)
        ]
        # A fresh connection each time, so requests spread over the workers too.
        codes += [
            requests.get(
                f"{base}/api/v1/memories/", headers={"Authorization": f"Bearer {raw}"}, timeout=30
            ).status_code
            for _ in range(LIMIT)
        ]
    assert codes.count(200) == LIMIT, codes
    assert set(codes[LIMIT:]) == {429}
