"""The scan at the door, through each door an agent writes by: REST, a tool call, MCP and
Claude's memory tool. Every door answers the engine's one refusal; none echoes the value."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from memoryadmin.mcp.server import _call
from stores.models import Agent, AgentToken, Memory, MemoryFile, Revision, ScanPolicy
from tests.api.conftest import client_for
from tests.factories import agent_token

pytestmark = pytest.mark.django_db

SECRET = "sk_live_" + "Zq8Wd2Lm4Np6Rt1Vx3Yb5Ck7"
EMAIL = "sam.rivera@example.net"


def refused_without_the_value(body: dict, *, kind: str = "Stripe Access Key") -> None:
    assert body["status"] == "sensitive_data"
    assert f"credentials ({kind})" in body["message"]
    assert SECRET not in json.dumps(body)


def test_rest_create_and_edit_are_refused(api, agent, make):
    memory = make.memory(agent, "Pays by card.")

    created = api.call("post", "memories/", {"content": f"Billing key {SECRET}."})
    edited = api.call(
        "post",
        f"memories/{memory.pk}/edit/",
        {"old_string": "by card", "new_string": f"with {SECRET}"},
    )

    assert created.status_code == edited.status_code == 422
    refused_without_the_value(created.json())
    refused_without_the_value(edited.json())
    assert list(Memory.objects.filter(agent=agent).values_list("content", flat=True)) == [
        "Pays by card."
    ]


def test_rest_mask_and_flag(api, agent):
    Agent.objects.filter(pk=agent.pk).update(credentials_policy=ScanPolicy.MASK)

    answer = api.call("post", "memories/", {"content": f"Key {SECRET}; mail {EMAIL}."})

    assert answer.status_code == 201
    body = answer.json()
    assert body["scan"]["policy"] == {"credentials": "mask", "personal_data": "allow"}
    assert SECRET not in json.dumps(body)
    content = Memory.objects.get(pk=body["id"]).content
    assert content == f"Key [masked Stripe Access Key]; mail {EMAIL}."


def test_a_tool_call_is_refused_in_its_words(api, agent, make):
    memory = make.memory(agent, "Pays by card.")

    answer = api.call(
        "post",
        "tools/edit_memory/",
        {"id": memory.pk, "old_string": "by card", "new_string": f"with {SECRET}"},
    )

    refused_without_the_value(answer.json())
    memory.refresh_from_db()
    assert memory.version == 1


def test_a_reference_tool_keeps_the_status_word(api, agent, make):
    memory = make.memory(agent, "Pays by card.")

    answer = api.call(
        "post",
        "tools/update_long_term_memory/",
        {"memory_id": memory.pk, "memory_content": f"Pays with {SECRET}."},
    )

    body = answer.json()
    assert body["status"] == "memory_update_failed_sensitive_data"
    assert SECRET not in json.dumps(body)


def test_mcp_is_refused_and_holds(agent, make):
    memory = make.memory(agent, "Pays by card.")
    token, _raw = agent_token(agent)

    refused = _call(
        lambda request: token,
        None,
        "edit_record",
        {"surface": "memory", "id": memory.pk, "old_string": "by card", "new_string": SECRET},
    )
    Agent.objects.filter(pk=agent.pk).update(credentials_policy=ScanPolicy.HOLD)
    token = AgentToken.objects.select_related("agent").get(pk=token.pk)
    held = _call(
        lambda request: token,
        None,
        "edit_record",
        {"surface": "memory", "id": memory.pk, "old_string": "by card", "new_string": SECRET},
    )

    assert refused.is_error
    refused_without_the_value(refused.structured_content)
    assert SECRET not in refused.content[0].text
    assert not held.is_error and held.structured_content["review"] == "pending"
    revision = Revision.objects.get(record_id=memory.pk, version_after=2)
    assert revision.review == Revision.Review.PENDING


@pytest.mark.parametrize("door", ["rest", "mcp"])
def test_claudes_memory_tool_is_refused(agent, door):
    token, raw = agent_token(agent)
    command = {"command": "create", "path": "/memories/billing.md", "file_text": SECRET}

    if door == "rest":
        answer = client_for(raw).call("post", "tools/memory/", command).json()
    else:
        answer = _call(lambda request: token, None, "memory", command).structured_content

    assert answer["is_error"]
    text = answer["content"][0]["text"]
    assert "credentials (Stripe Access Key)" in text and SECRET not in text
    assert not MemoryFile.objects.filter(agent=agent).exists()


def _write_through(door: str, agent, client, content: str) -> None:
    """Create a memory holding `content` through `door`, as that door's writer would."""
    token, raw = agent_token(agent)
    if door == "rest":
        client_for(raw).call("post", "memories/", {"content": content})
    elif door == "tool":
        client_for(raw).call("post", "tools/memory/", {
            "command": "create", "path": "/memories/note.md", "file_text": content,
        })  # fmt: skip
    elif door == "mcp":
        _call(lambda request: token, None, "memory", {
            "command": "create", "path": "/memories/note.md", "file_text": content,
        })  # fmt: skip
    else:
        client.post(reverse("web:record_new", args=[agent.name, "memory"]), {"content": content})


def _stored(agent) -> list[tuple[str, str]]:
    """Each text the agent now holds, with whether its first revision awaits review."""
    texts = [
        *Memory.objects.filter(agent=agent).values_list("pk", "content"),
        *MemoryFile.objects.filter(agent=agent).values_list("pk", "content"),
    ]
    reviews = dict(Revision.objects.filter(agent=agent).values_list("record_id", "review"))
    return [(text, reviews[pk]) for pk, text in texts]


@pytest.mark.parametrize("door", ["rest", "tool", "mcp", "ui"])
@pytest.mark.parametrize(
    ("policy", "stored"),
    [
        ("allow", [(f"Key {SECRET}.", Revision.Review.NOT_NEEDED)]),
        ("mask", [("Key [masked Stripe Access Key].", Revision.Review.NOT_NEEDED)]),
        ("hold", [(f"Key {SECRET}.", Revision.Review.PENDING)]),
        ("refuse", []),
    ],
)
def test_each_policy_through_each_door(client, staff_user, agent, door, policy, stored):
    Agent.objects.filter(pk=agent.pk).update(credentials_policy=policy)
    agent.refresh_from_db()
    client.force_login(staff_user)

    _write_through(door, agent, client, f"Key {SECRET}.")

    assert _stored(agent) == stored
