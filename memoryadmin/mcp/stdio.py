"""MCP over stdin/stdout for a local agent: `python manage.py mcp_stdio --token …`.

The token is checked again on every call, so revoking it cuts off a running agent at its
next call. A client may subscribe to memory://<id> resources here: stdio carries the
`notifications/resources/updated` the server sends when one changes. There is no rate limit
here: whoever runs this process already holds the database's credentials.
"""

from __future__ import annotations

import anyio
from mcp.server import Server
from mcp.server.stdio import stdio_server
from starlette.requests import Request

from memoryadmin.doors.tokens import live_token
from memoryadmin.mcp.server import Identify, build_server
from memoryadmin.mcp.subscriptions import ResourceWatcher
from stores.models import AgentToken


def serve_stdio(raw_token: str) -> None:
    """Serve the agent of `raw_token` until stdin closes."""
    identify = identity_of(raw_token)
    watcher = ResourceWatcher(identify)
    anyio.run(_serve, build_server(identify, watcher), watcher)


def identity_of(raw_token: str) -> Identify:
    """The live token of `raw_token`, looked up again at each call."""

    def identify(_request: Request | None) -> AgentToken | None:
        return live_token(raw_token)

    return identify


async def _serve(server: Server, watcher: ResourceWatcher) -> None:
    """The server, and beside it the watcher that announces changes to subscribers."""
    async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as tasks:
        tasks.start_soon(watcher.run)
        await server.run(read_stream, write_stream, server.create_initialization_options())
        tasks.cancel_scope.cancel()
