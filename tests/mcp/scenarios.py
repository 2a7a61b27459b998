"""What an agent does over MCP, the same on every transport; each step asserts what it sees."""

from __future__ import annotations

import json
from typing import Any

from mcp import Client
from mcp_types import CallToolResult

from stores.tools import all_tools

STORY = "Alice moved to Paris in May. She likes tea; her brother likes tea too."


def answer(result: CallToolResult) -> dict[str, Any]:
    """The tool's JSON answer, checked to be the same in the structured and the text form."""
    structured = result.structured_content
    assert isinstance(structured, dict)
    sentence, encoded = (block.text for block in result.content)
    assert json.loads(encoded) == structured
    assert sentence.startswith(f"{structured['status']}: ")
    return structured


async def assert_tools_are_the_registry(client: Client) -> None:
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    registry = {tool.name: tool for tool in all_tools()}
    assert set(listed) == set(registry)
    for name, tool in registry.items():
        assert listed[name].description == tool.description
        assert listed[name].input_schema == tool.parameters
        assert listed[name].annotations.read_only_hint is (not tool.writes)


async def edit_refusal_conflict_recall(client: Client, memory_id: int) -> None:
    """A phrase edit, a refused ambiguous edit, a stale replacement, a recall, a full read."""
    edited = await client.call_tool(
        "edit_record",
        {"surface": "memory", "id": memory_id, "old_string": "Paris", "new_string": "Lyon"},
    )
    assert not edited.is_error
    body = answer(edited)
    assert (body["status"], body["id"], body["version"]) == ("updated", memory_id, 2)
    assert "Lyon" in body["diff"]

    ambiguous = await client.call_tool(
        "edit_record",
        {"surface": "memory", "id": memory_id, "old_string": "likes tea", "new_string": "x"},
    )
    assert ambiguous.is_error
    assert answer(ambiguous)["status"] == "ambiguous"
    assert answer(ambiguous)["count"] == 2

    stale = await client.call_tool(
        "replace_record",
        {"surface": "memory", "id": memory_id, "text": "Something else.", "expected_version": 1},
    )
    assert stale.is_error
    assert answer(stale)["status"] == "conflict"
    assert answer(stale)["current_version"] == 2

    recalled = answer(await client.call_tool("recall_memories", {"query": "Lyon"}))
    assert recalled["status"] == "ok"
    assert [hit["id"] for hit in recalled["results"]] == [memory_id]
    assert recalled["results"][0]["preview"] == STORY.replace("Paris", "Lyon")

    read = await client.read_resource(f"memory://{memory_id}")
    (contents,) = read.contents
    assert contents.mime_type == "application/json"
    record = json.loads(contents.text)
    # Only the one successful edit landed: the refusals changed nothing.
    assert (record["content"], record["version"]) == (STORY.replace("Paris", "Lyon"), 2)
