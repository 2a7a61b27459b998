"""MCP over streamable HTTP at /mcp/, served by uvicorn with the whole ASGI application."""

from __future__ import annotations

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from stores.engine.actors import Actor
from stores.models import Revision
from stores.services.agents import token_revoke
from tests.api.conftest import client_for
from tests.factories import agent_token
from tests.mcp.clients import http_client, run_async
from tests.mcp.scenarios import (
    STORY,
    answer,
    assert_tools_are_the_registry,
    edit_refusal_conflict_recall,
)

# Both protocol eras the SDK speaks: the 2026-07-28 envelope ("auto" finds it) and the
# initialize handshake of 2025 that most deployed clients still use.
MODES = ["auto", "legacy"]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"},
    },
}
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.mark.parametrize("mode", MODES)
def test_the_tools_are_the_rest_doors_tools(mcp_url, agent, mode):
    _token, raw = agent_token(agent)
    rest = client_for(raw).call("get", "tools/").json()["tools"]

    async def scenario() -> None:
        async with http_client(mcp_url, raw, mode) as client:
            await assert_tools_are_the_registry(client)
            listed = (await client.list_tools()).tools
            assert [
                {"name": t.name, "description": t.description, "parameters": t.input_schema}
                for t in listed
            ] == [definition["function"] for definition in rest]

    run_async(scenario)


@pytest.mark.parametrize("mode", MODES)
def test_edit_refusal_conflict_and_recall(mcp_url, agent, make, mode):
    memory = make.memory(agent, STORY)
    token, raw = agent_token(agent)

    async def scenario() -> None:
        async with http_client(mcp_url, raw, mode) as client:
            await edit_refusal_conflict_recall(client, memory.pk)

    run_async(scenario)
    memory.refresh_from_db()
    assert (memory.content, memory.version) == (STORY.replace("Paris", "Lyon"), 2)
    edit = Revision.objects.filter(surface="memory", record_id=memory.pk).latest("id")
    assert (edit.op, edit.actor_token, edit.version_after) == ("edit", token, 2)


def test_reference_tools_answer_in_their_own_words(mcp_url, agent, make):
    memory = make.memory(agent, STORY)
    _token, raw = agent_token(agent)

    async def scenario() -> None:
        async with http_client(mcp_url, raw) as client:
            forgotten = await client.call_tool("memory_edit", {"op": "forget", "id": "999999"})
            assert forgotten.is_error
            assert answer(forgotten)["details"] == {"status": "not_found"}
            assert forgotten.content[0].text == "not_found: Memory 999999 was not found."

            tomori = await client.call_tool(
                "update_long_term_memory",
                {"memory_id": memory.pk, "memory_content": "Alice lives in Lyon."},
            )
            assert not tomori.is_error
            assert answer(tomori)["status"] == "memory_updated_successfully"

            failed = await client.call_tool(
                "update_long_term_memory", {"memory_id": 999999, "memory_content": "x"}
            )
            assert failed.is_error
            assert answer(failed)["status"] == "memory_update_failed_not_found"

    run_async(scenario)


def test_memory_resource_reads_the_full_record_by_id_or_alias(mcp_url, agent, make):
    long_text = "Plans: " + "Lisbon each spring. " * 40 + "TAIL."
    memory = make.memory(agent, long_text, alias="6f1c-original-id")
    _token, raw = agent_token(agent)

    async def scenario() -> None:
        async with http_client(mcp_url, raw) as client:
            recalled = answer(await client.call_tool("recall_memories", {"query": "Lisbon"}))
            assert recalled["results"][0]["truncated"] is True

            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["memory://{id}"]
            for uri in (f"memory://{memory.pk}", "memory://6f1c-original-id"):
                (contents,) = (await client.read_resource(uri)).contents
                assert '"TAIL."' in contents.text or "TAIL." in contents.text
                assert contents.uri == uri

            listed = (await client.list_resources()).resources
            assert [r.uri for r in listed] == [f"memory://{memory.pk}"]
            assert listed[0].title.startswith("Plans: Lisbon")

            with pytest.raises(MCPError) as missing:
                await client.read_resource("memory://999999")
            assert missing.value.code == -32002

    run_async(scenario)


def test_a_token_reaches_only_its_own_agent(mcp_url, agent, other_agent, make):
    mine = make.memory(agent, "Mine: the user likes tea.")
    theirs = make.memory(other_agent, "Theirs: the user likes tea.")
    _token, raw = agent_token(agent)

    async def scenario() -> None:
        async with http_client(mcp_url, raw) as client:
            calls = [
                ("read_record", {"surface": "memory", "id": theirs.pk}),
                (
                    "edit_record",
                    {"surface": "memory", "id": theirs.pk, "old_string": "tea", "new_string": "x"},
                ),
                (
                    "replace_record",
                    {"surface": "memory", "id": theirs.pk, "text": "x", "expected_version": 1},
                ),
                ("forget_record", {"surface": "memory", "id": theirs.pk}),
                ("set_memory_importance", {"id": theirs.pk, "importance": 1}),
            ]
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                assert result.is_error, name
                assert answer(result)["status"] == "not_found", name

            with pytest.raises(MCPError):
                await client.read_resource(f"memory://{theirs.pk}")
            recalled = answer(await client.call_tool("recall_memories", {"query": "tea"}))
            assert [hit["id"] for hit in recalled["results"]] == [mine.pk]
            assert [r.uri for r in (await client.list_resources()).resources] == [
                f"memory://{mine.pk}"
            ]

    run_async(scenario)
    theirs.refresh_from_db()
    assert (theirs.content, theirs.version) == ("Theirs: the user likes tea.", 1)


def test_a_read_only_token_reads_but_every_write_is_refused(mcp_url, agent, make):
    memory = make.memory(agent, STORY)
    _token, raw = agent_token(agent, read_only=True)

    async def scenario() -> None:
        async with http_client(mcp_url, raw) as client:
            read = await client.call_tool("read_record", {"surface": "memory", "id": memory.pk})
            assert answer(read)["record"]["content"] == STORY
            edit = await client.call_tool(
                "edit_record",
                {"surface": "memory", "id": memory.pk, "old_string": "May", "new_string": "June"},
            )
            assert edit.is_error
            assert answer(edit)["status"] == "forbidden"

    run_async(scenario)


def test_bad_arguments_are_a_result_and_an_unknown_tool_a_protocol_error(mcp_url, agent):
    _token, raw = agent_token(agent)

    async def scenario() -> None:
        async with http_client(mcp_url, raw) as client:
            bad = await client.call_tool("edit_memory", {"id": 1})
            assert bad.is_error
            assert answer(bad)["status"] == "invalid"
            assert "old_string" in answer(bad)["message"]
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("no_such_tool", {})
            assert "Unknown tool" in unknown.value.message

    run_async(scenario)


def test_no_valid_token_is_refused_at_the_http_level(mcp_url, agent):
    _token, raw = agent_token(agent)
    revoked, revoked_raw = agent_token(agent)
    token_revoke(actor=Actor.maintainer("tests"), token=revoked)
    cases = {
        None: "not_authenticated",
        "Bearer not-a-token": "authentication_failed",
        f"Bearer {raw} extra": "authentication_failed",
        f"Bearer {revoked_raw}": "authentication_failed",
        f"Token {raw}": "not_authenticated",
    }
    for authorization, code in cases.items():
        headers = MCP_ACCEPT | ({"Authorization": authorization} if authorization else {})
        response = httpx2.post(mcp_url, json=INITIALIZE, headers=headers)
        assert response.status_code == 401, authorization
        assert response.headers["WWW-Authenticate"] == 'Bearer realm="memoryadmin"'
        assert response.json()["status"] == "forbidden"
        assert response.json()["code"] == code, authorization

    answered = httpx2.post(
        mcp_url, json=INITIALIZE, headers=MCP_ACCEPT | {"Authorization": f"Bearer {raw}"}
    )
    assert answered.status_code == 200
    assert answered.json()["result"]["serverInfo"]["name"] == "memoryadmin"


def test_the_rate_limit_is_the_rest_apis_and_shares_its_budget(mcp_url, agent, settings):
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "API": {"RATE_LIMIT": "2/minute"}}
    _token, raw = agent_token(agent)
    assert client_for(raw).call("get", "tools/").status_code == 200
    headers = MCP_ACCEPT | {"Authorization": f"Bearer {raw}"}
    assert httpx2.post(mcp_url, json=INITIALIZE, headers=headers).status_code == 200
    throttled = httpx2.post(mcp_url, json=INITIALIZE, headers=headers)
    assert throttled.status_code == 429
    assert int(throttled.headers["Retry-After"]) > 0
    assert throttled.json()["code"] == "rate_limited"
    assert client_for(raw).call("get", "tools/").status_code == 429


def test_a_host_outside_allowed_hosts_is_refused(mcp_url, agent):
    _token, raw = agent_token(agent)
    response = httpx2.post(
        mcp_url,
        json=INITIALIZE,
        headers=MCP_ACCEPT | {"Authorization": f"Bearer {raw}", "Host": "evil.example"},
    )
    assert response.status_code == 400
    assert response.json()["code"] == "disallowed_host"


def test_the_same_server_serves_the_web_ui_and_the_rest_api(mcp_url, agent):
    _token, raw = agent_token(agent)
    root = mcp_url.removesuffix("/mcp/")
    assert httpx2.get(f"{root}/accounts/login/").status_code == 200
    tools = httpx2.get(f"{root}/api/v1/tools/", headers={"Authorization": f"Bearer {raw}"})
    assert tools.status_code == 200
    without_slash = httpx2.post(
        f"{root}/mcp", json=INITIALIZE, headers=MCP_ACCEPT | {"Authorization": f"Bearer {raw}"}
    )
    assert without_slash.status_code == 200


@pytest.mark.parametrize("accept", [None, "text/event-stream"])
def test_a_get_is_answered_405_not_left_open_as_an_endless_stream(mcp_url, agent, accept):
    """Regression: a plain GET opened an event stream that never sent anything nor ended.
    The stateless door offers no stream, so every GET answers 405 at once (the transport's
    answer for a server without one); the short timeout fails the test if it hangs."""
    _token, raw = agent_token(agent)
    headers = {"Authorization": f"Bearer {raw}"} | ({"Accept": accept} if accept else {})
    response = httpx2.get(mcp_url, headers=headers, timeout=5)
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"
    assert response.json()["status"] == "invalid"
    assert response.json()["code"] == "method_not_allowed"


def test_a_body_over_the_upload_limit_is_a_413_in_json(mcp_url, agent, settings):
    _token, raw = agent_token(agent)
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    headers = MCP_ACCEPT | {"Authorization": f"Bearer {raw}", "Content-Type": "application/json"}
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "' + b"x" * limit
    body += b'"}}'

    def chunks():  # no Content-Length: the door counts what it reads
        for start in range(0, len(body), 65536):
            yield body[start : start + 65536]

    for content in (body, chunks()):
        response = httpx2.post(mcp_url, content=content, headers=headers, timeout=30)
        assert response.status_code == 413
        assert response.json()["status"] == "invalid"
        assert response.json()["code"] == "too_large"
        assert response.json()["max_bytes"] == limit


def test_json_nested_past_the_depth_limit_is_refused(mcp_url, agent, settings):
    _token, raw = agent_token(agent)
    limit = settings.MEMORYADMIN["MAX_JSON_DEPTH"]
    headers = MCP_ACCEPT | {"Authorization": f"Bearer {raw}"}
    for depth in (limit + 1, 100_000):
        arguments = '{"a":' * depth + "1" + "}" * depth
        body = (
            '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
            f'{{"name": "recall_memories", "arguments": {arguments}}}}}'
        )
        response = httpx2.post(
            mcp_url, content=body, headers=headers | {"Content-Type": "application/json"}
        )
        assert response.status_code == 400, depth
        assert response.json()["code"] == "too_deep"
        assert response.json()["max_depth"] == limit
    answered = httpx2.post(mcp_url, json=INITIALIZE, headers=headers)
    assert answered.status_code == 200


def test_a_recall_query_over_the_limit_is_an_invalid_result(mcp_url, agent, settings):
    _token, raw = agent_token(agent)
    limit = settings.MEMORYADMIN["MAX_QUERY_LENGTH"]

    async def scenario() -> None:
        async with http_client(mcp_url, raw) as client:
            result = await client.call_tool("recall_memories", {"query": "tea " * limit})
            assert result.is_error
            assert answer(result)["status"] == "invalid"
            assert f"the limit is {limit}" in answer(result)["message"]

    run_async(scenario)


def test_a_refused_megabyte_argument_is_not_echoed_back(mcp_url, agent):
    """Regression: a rejected 1 MB input came back whole in the tool's answer."""
    _token, raw = agent_token(agent)

    async def scenario() -> None:
        async with http_client(mcp_url, raw) as client:
            result = await client.call_tool("read_record", {"surface": "memory", "id": "z" * 10**6})
            assert result.is_error
            assert answer(result)["status"] == "not_found"
            assert "characters, not repeated" in answer(result)["message"]
            assert sum(len(part.text) for part in result.content) < 5_000

    run_async(scenario)
