"""MCP over stdin/stdout for a local agent: `python manage.py mcp_stdio --token …`.

The token is checked again on every call, so revoking it cuts off a running agent at its
next call. There is no rate limit here: whoever runs this process already holds the
database's credentials.
"""

from __future__ import annotations

import anyio
from mcp.server import Server
from mcp.server.stdio import stdio_server
from starlette.requests import Request

from memoryadmin.doors.tokens import live_token
from memoryadmin.mcp.server import Identify, build_server
from stores.models import AgentToken


def serve_stdio(raw_token: str) -> None:
    """Serve the agent of `raw_token` until stdin closes."""
    anyio.run(_serve, build_server(identity_of(raw_token)))


def identity_of(raw_token: str) -> Identify:
    """The live token of `raw_token`, looked up again at each call."""

    def identify(_request: Request | None) -> AgentToken | None:
        return live_token(raw_token)

    return identify


async def _serve(server: Server) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
