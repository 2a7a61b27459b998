"""The production server caps connections at once, as bin/serve does (PostgreSQL pass)."""

from __future__ import annotations

import socket
import time
from contextlib import ExitStack
from urllib.parse import urlsplit

import pytest
import requests
from django.db import connection

from tests.load.server import gunicorn

CAP = 3


def held_open(base: str) -> socket.socket:
    """A connection that sends half a request and waits: a slow or hostile client."""
    address = urlsplit(base)
    held = socket.create_connection((address.hostname, address.port), timeout=10)
    held.sendall(b"POST /api/v1/memories/ HTTP/1.1\r\nHost: x\r\n")
    return held


@pytest.mark.django_db(transaction=True)
def test_connections_past_the_cap_answer_503_and_the_server_serves_again_after():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: gunicorn's processes must share the test database")
    with gunicorn(workers=1, threads=2, MAX_CONNECTIONS=str(CAP)) as base:
        with ExitStack() as stack:
            for _ in range(CAP):
                stack.enter_context(held_open(base))
            past_the_cap = requests.get(f"{base}/accounts/login/", timeout=10)
        # The server counts a closed connection out once it reads its end: a moment later.
        deadline = time.monotonic() + 10
        while (after := requests.get(f"{base}/accounts/login/", timeout=10)).status_code == 503:
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)

    assert past_the_cap.status_code == 503
    assert after.status_code == 200
