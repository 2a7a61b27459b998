"""Claude's memory tool over MCP's streamable HTTP, with the MCP SDK's own client."""

from __future__ import annotations

from stores.models import MemoryFile
from tests.factories import agent_token
from tests.mcp.clients import http_client, run_async
from tests.mcp.scenarios import answer


def test_the_memory_tool_answers_in_the_sdks_words_over_mcp(mcp_url, agent):
    _token, raw = agent_token(agent)

    async def scenario() -> None:
        async with http_client(mcp_url, raw) as client:
            listed = await client.list_tools()
            assert "memory" in [tool.name for tool in listed.tools]

            async def text(**command: object) -> tuple[bool, str]:
                result = await client.call_tool("memory", command)
                return result.is_error, answer(result)["content"][0]["text"]

            assert await text(
                command="create", path="/memories/notes.md", file_text="Line 1\nOld\nLine 3"
            ) == (False, "File created successfully at: /memories/notes.md")
            assert await text(command="view", path="/memories/notes.md") == (
                False,
                "Here's the content of /memories/notes.md with line numbers:\n"
                "     1\tLine 1\n     2\tOld\n     3\tLine 3",
            )
            edited = await text(
                command="str_replace", path="/memories/notes.md", old_str="Old", new_str="New"
            )
            assert edited[0] is False and "     2\tNew" in edited[1]
            assert await text(
                command="insert", path="/memories/notes.md", insert_line=9, insert_text="x"
            ) == (
                True,
                "Invalid `insert_line` parameter: 9. It should be within the range [0, 3].",
            )
            assert await text(
                command="rename", old_path="/memories/notes.md", new_path="/memories/a/n.md"
            ) == (False, "Successfully renamed /memories/notes.md to /memories/a/n.md")
            assert await text(command="view", path="/memories") == (
                False,
                "Here're the files and directories up to 2 levels deep in /memories, excluding "
                "hidden items:\n17B\t/memories\n17B\t/memories/a/\n17B\t/memories/a/n.md",
            )
            assert await text(command="create", path="/memories/../etc/passwd", file_text="x") == (
                True,
                "Path /memories/../etc/passwd would escape /memories directory",
            )
            assert await text(command="delete", path="/memories/a") == (
                False,
                "Successfully deleted /memories/a",
            )

    run_async(scenario)
    assert not MemoryFile.objects.filter(agent=agent).exists()
