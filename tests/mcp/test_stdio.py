"""MCP over stdio: `manage.py mcp_stdio --token …` spawned by the SDK's own client."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.core.management import CommandError, call_command
from mcp import Client

from memoryadmin.mcp.server import build_server
from memoryadmin.mcp.stdio import identity_of
from stores.engine.actors import Actor
from stores.services.agents import token_revoke
from tests.factories import agent_token
from tests.mcp.clients import run_async, stdio_client, stdio_parameters
from tests.mcp.scenarios import (
    STORY,
    answer,
    assert_tools_are_the_registry,
    edit_refusal_conflict_recall,
)


def test_a_local_agent_lists_the_tools_edits_and_recalls(stdio_environment, agent, make):
    memory = make.memory(agent, STORY)
    _token, raw = agent_token(agent)
    environment = stdio_environment()

    async def scenario() -> None:
        async with stdio_client(environment, raw) as client:
            assert client.server_info.name == "memoryadmin"
            await assert_tools_are_the_registry(client)
            await edit_refusal_conflict_recall(client, memory.pk)

    run_async(scenario)


def test_a_local_agent_reaches_only_its_own_agent(stdio_environment, agent, other_agent, make):
    theirs = make.memory(other_agent, STORY)
    _token, raw = agent_token(agent)
    environment = stdio_environment()

    async def scenario() -> None:
        async with stdio_client(environment, raw, mode="legacy") as client:
            for name, arguments in [
                ("read_record", {"surface": "memory", "id": theirs.pk}),
                ("edit_memory", {"id": theirs.pk, "old_string": "May", "new_string": "June"}),
            ]:
                result = await client.call_tool(name, arguments)
                assert result.is_error
                assert answer(result)["status"] == "not_found"
            recalled = answer(await client.call_tool("recall_memories", {"query": "Alice"}))
            assert recalled["results"] == []

    run_async(scenario)


def test_the_token_can_come_from_the_environment(stdio_environment, agent, make):
    memory = make.memory(agent, STORY)
    _token, raw = agent_token(agent)
    environment = stdio_environment() | {"MEMORYADMIN_TOKEN": raw}

    async def scenario() -> None:
        async with Client(stdio_parameters(environment), read_timeout_seconds=60) as client:
            read = await client.call_tool("read_record", {"surface": "memory", "id": memory.pk})
            assert answer(read)["record"]["content"] == STORY

    run_async(scenario)


def test_the_command_refuses_a_missing_or_dead_token(db, agent, monkeypatch):
    monkeypatch.delenv("MEMORYADMIN_TOKEN", raising=False)
    with pytest.raises(CommandError, match="--token"):
        call_command("mcp_stdio")
    with pytest.raises(CommandError, match="Unknown, revoked or expired"):
        call_command("mcp_stdio", token="not-a-token")
    token, raw = agent_token(agent)
    token_revoke(actor=Actor.maintainer("tests"), token=token)
    with pytest.raises(CommandError, match="Unknown, revoked or expired"):
        call_command("mcp_stdio", token=raw)


def test_revoking_the_token_cuts_off_a_running_session(sync_thread_db, agent, make):
    """The stdio server looks the token up at every call (here connected in process)."""
    memory = make.memory(agent, STORY)
    token, raw = agent_token(agent)

    async def scenario() -> None:
        async with Client(build_server(identity_of(raw))) as client:
            arguments = {"surface": "memory", "id": memory.pk}
            assert not (await client.call_tool("read_record", arguments)).is_error
            await sync_to_async(token_revoke)(actor=Actor.maintainer("tests"), token=token)
            refused = await client.call_tool("read_record", arguments)
            assert refused.is_error
            assert answer(refused)["status"] == "forbidden"
            assert answer(refused)["code"] == "authentication_failed"

    run_async(scenario)
