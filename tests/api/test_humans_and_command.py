"""Humans use the API with their session; maintainers create tokens with a command."""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command
from rest_framework.test import APIClient

from stores.models import AgentAccess, AgentToken, Revision
from stores.services.agents import token_authenticate
from tests.factories import AgentFactory, UserFactory


def test_staff_session_chooses_the_agent_and_writes_as_a_user(staff_user, agent, make):
    memory = make.memory(agent)
    AgentFactory()
    client = APIClient()
    client.force_login(staff_user)
    unchosen = client.get("/api/v1/memories/")
    assert (unchosen.status_code, unchosen.json()["status"]) == (400, "invalid")
    edited = client.post(
        f"/api/v1/memories/{memory.pk}/edit/?agent={agent.name}",
        {"old_string": "tea", "new_string": "mate"},
        format="json",
    )
    assert edited.status_code == 200, edited.json()
    revision = Revision.objects.get(pk=edited.json()["revision"])
    assert (revision.actor_user, revision.channel) == (staff_user, "api")


def test_viewer_grant_reads_but_cannot_write(agent, make):
    viewer = UserFactory()
    AgentAccess.objects.create(user=viewer, agent=agent, role=AgentAccess.Role.VIEWER)
    memory = make.memory(agent)
    client = APIClient()
    client.force_login(viewer)
    assert client.get(f"/api/v1/memories/{memory.pk}/").status_code == 200
    refused = client.post(f"/api/v1/memories/{memory.pk}/reinforce/", {}, format="json")
    assert (refused.status_code, refused.json()["status"]) == (403, "forbidden")


def test_a_user_without_a_grant_sees_no_agent(agent, make):
    memory = make.memory(agent)
    client = APIClient()
    client.force_login(UserFactory())
    answer = client.get(f"/api/v1/memories/{memory.pk}/?agent={agent.name}")
    assert (answer.status_code, answer.json()["status"]) == (404, "not_found")


def test_browsable_api_renders_for_a_session(staff_user, agent):
    client = APIClient()
    client.force_login(staff_user)
    page = client.get(f"/api/v1/memories/?agent={agent.name}", HTTP_ACCEPT="text/html")
    assert page.status_code == 200
    assert b"<html" in page.content


def test_create_agent_token_creates_the_agent_and_prints_the_token_last(db):
    out = StringIO()
    call_command("create_agent_token", "Rock Bot", "--read-only", "--expires-in", "30", stdout=out)
    raw = out.getvalue().strip().splitlines()[-1]
    token = token_authenticate(raw)
    assert token is not None
    assert token.agent.name == "rock-bot"
    assert token.read_only is True
    assert token.expires_at is not None
    assert AgentToken.objects.count() == 1
    assert raw not in {t.key_hash for t in AgentToken.objects.all()}


def test_docs_and_schema_are_served(client):
    assert client.get("/api/schema/").status_code == 200
    assert client.get("/api/docs/").status_code == 200
