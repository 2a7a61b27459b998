from __future__ import annotations

import pytest

from stores.models import AgentAccess
from stores.services import Actor
from tests.factories import UserFactory, agent_token


@pytest.fixture
def staff_client(client, staff_user):
    client.force_login(staff_user)
    return client


@pytest.fixture
def viewer_client(client, agent):
    viewer = UserFactory()
    AgentAccess.objects.create(user=viewer, agent=agent, role=AgentAccess.Role.VIEWER)
    client.force_login(viewer)
    return client


@pytest.fixture
def agent_actor(agent):
    token, _raw = agent_token(agent)
    return Actor.for_token(token)


def htmx(target: str = "") -> dict[str, str]:
    headers = {"HX-Request": "true"}
    if target:
        headers["HX-Target"] = target
    return headers
