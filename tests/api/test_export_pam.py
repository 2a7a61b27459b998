"""GET /api/v1/export/pam/: a token's own agent's memories as a PAM memory store."""

from __future__ import annotations

import json

import pytest
from portable_ai_memory import load_dict, validate_memory_store

from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db


def body(answer) -> dict:
    return json.loads(b"".join(answer.streaming_content))


def test_a_token_downloads_its_agents_memories_as_valid_pam(api, agent, other_agent, make):
    mine = make.memory(agent, "Prefers tea.", alias="tea", category="preference")
    make.memory(other_agent, "Not yours.")

    answer = api.get("/api/v1/export/pam/")

    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/json"
    assert f'filename="{agent.name}-memory-store.json"' in answer["Content-Disposition"]
    document = body(answer)
    assert validate_memory_store(load_dict(document)).is_valid
    assert [(m["id"], m["type"], m["content"]) for m in document["memories"]] == [
        ("tea", "preference", mine.content)
    ]
    assert document["owner"] == {"id": agent.name}


def test_a_read_only_token_may_export(read_only_api, agent, make):
    make.memory(agent, "Prefers tea.")
    assert read_only_api.get("/api/v1/export/pam/").status_code == 200


def test_no_token_no_export(agent, make):
    make.memory(agent, "Prefers tea.")
    for raw in (None, "ma_nope_nope"):
        answer = client_for(raw).get("/api/v1/export/pam/")
        assert answer.status_code == 401
        assert "Prefers tea." not in answer.content.decode()


def test_a_staff_session_exports_the_agent_it_names(client, staff_user, agent, make):
    make.memory(agent, "Prefers tea.", alias="tea")
    client.force_login(staff_user)
    answer = client.get(f"/api/v1/export/pam/?agent={agent.name}")
    assert answer.status_code == 200
    assert [memory["id"] for memory in body(answer)["memories"]] == ["tea"]
