"""Over MCP, the memory resource is a full read carrying the text's SHA-256, and a replace of
a long text is refused (an isError result) until it sends that hash back."""

from __future__ import annotations

import hashlib
import json

from stores.models import Memory
from tests.factories import agent_token
from tests.mcp.clients import http_client, run_async
from tests.mcp.scenarios import answer

LONG = "Plans: " + "Lisbon each spring. " * 40 + "TAIL."


def test_a_long_text_is_replaced_over_mcp_only_with_the_hash_of_a_full_read(mcp_url, agent, make):
    memory = make.memory(agent, LONG)
    _token, raw = agent_token(agent)
    rewritten = LONG.replace("spring", "autumn")

    async def scenario() -> None:
        async with http_client(mcp_url, raw) as client:
            (contents,) = (await client.read_resource(f"memory://{memory.pk}")).contents
            digest = json.loads(contents.text)["content_sha256"]
            assert digest == hashlib.sha256(LONG.encode()).hexdigest()
            call = {"surface": "memory", "id": memory.pk, "text": rewritten}
            refused = await client.call_tool("replace_record", {**call, "expected_version": 1})
            assert refused.is_error
            assert answer(refused)["status"] == "precondition_required"
            done = await client.call_tool(
                "replace_record", {**call, "expected_version": 1, "expected_sha256": digest}
            )
            assert not done.is_error and answer(done)["status"] == "updated"

    run_async(scenario)
    assert Memory.objects.get(pk=memory.pk).content == rewritten
