from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from tests.factories import agent_token


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()
    yield
    cache.clear()


class AgentClient(APIClient):
    """An APIClient speaking JSON for one agent token."""

    def call(self, method: str, path: str, data: Any = None, **headers: str):
        url = path if path.startswith(("/", "http")) else f"/api/v1/{path}"
        extra = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()}
        return getattr(self, method)(url, data, format="json", **extra)


def client_for(raw_token: str | None = None) -> AgentClient:
    client = AgentClient()
    if raw_token:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_token}")
    return client


@pytest.fixture
def api(agent) -> AgentClient:
    """A client holding a read-write token of `agent`."""
    return client_for(agent_token(agent)[1])


@pytest.fixture
def other_api(other_agent) -> AgentClient:
    return client_for(agent_token(other_agent)[1])


@pytest.fixture
def read_only_api(agent) -> AgentClient:
    return client_for(agent_token(agent, read_only=True)[1])
