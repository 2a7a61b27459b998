"""The Anthropic SDK's memory tool backed by memoryadmin: the SDK's own `call`, over real
HTTP to the test server on loopback (Django's live_server); no network beyond it."""

from __future__ import annotations

import httpx2
import pytest
from anthropic.lib.tools import ToolError

from memoryadmin.clients.anthropic_memory import MemoryadminMemoryTool
from stores.models import MemoryFile, Revision
from tests.factories import agent_token


@pytest.fixture
def tool(live_server, agent):
    _token, raw = agent_token(agent)
    with MemoryadminMemoryTool(live_server.url, token=raw) as tool:
        yield tool


def test_the_sdk_tool_is_claudes_memory_tool(tool):
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}


def test_each_command_the_model_sends_is_kept_in_memoryadmin(tool, agent):
    assert tool.call({"command": "create", "path": "/memories/a.md", "file_text": "x\ny\n"}) == (
        "File created successfully at: /memories/a.md"
    )
    tool.call({"command": "str_replace", "path": "/memories/a.md", "old_str": "y", "new_str": "z"})
    tool.call({"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "w"})
    assert tool.call({"command": "view", "path": "/memories/a.md", "view_range": [1, 2]}) == (
        "Here's the content of /memories/a.md with line numbers:\n     1\tw\n     2\tx"
    )
    tool.call({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"})
    assert MemoryFile.objects.get(agent=agent).content == "w\nx\nz\n"
    assert Revision.objects.filter(agent=agent, surface="file").count() == 4
    assert tool.call({"command": "delete", "path": "/memories/b.md"}) == (
        "Successfully deleted /memories/b.md"
    )


def test_a_refusal_is_the_sdks_tool_error_with_its_sentence(tool):
    with pytest.raises(ToolError, match="would escape /memories directory"):
        tool.call({"command": "create", "path": "/memories/../x", "file_text": "x"})
    with pytest.raises(ToolError, match=r"^The path /memories/none does not exist"):
        tool.call({"command": "view", "path": "/memories/none"})


def test_closing_the_tool_closes_its_own_connection_and_not_a_client_it_was_given(
    live_server, agent
):
    raw = agent_token(agent)[1]
    view = {"command": "view", "path": "/memories"}
    with httpx2.Client() as given:
        with MemoryadminMemoryTool(live_server.url, token=raw, http=given) as tool:
            tool.call(view)
        assert not given.is_closed
    with MemoryadminMemoryTool(live_server.url, token=raw) as own:
        own.call(view)
    with pytest.raises(RuntimeError, match="client has been closed"):
        own.call(view)


def test_a_bad_token_is_a_tool_error_too(live_server):
    with (
        MemoryadminMemoryTool(live_server.url, token="not-a-token") as tool,
        pytest.raises(ToolError, match="refused the command"),
    ):
        tool.call({"command": "view", "path": "/memories"})
