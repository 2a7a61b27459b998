"""The MCP SDK's own client, connected to memoryadmin over streamable HTTP or stdio."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

import anyio
import httpx2
from django.conf import settings
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def run_async(function: Callable[[], Awaitable[object]]) -> None:
    """Run `function` in an event loop of its own thread: this thread may already be running
    one (the browser tests' Playwright keeps a loop running in the main thread)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(anyio.run, function).result()


@asynccontextmanager
async def http_client(url: str, raw_token: str | None, mode: str = "auto") -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {raw_token}"} if raw_token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


def stdio_parameters(environment: dict[str, str], *arguments: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[str(settings.BASE_DIR / "manage.py"), "mcp_stdio", *arguments],
        env=environment,
        cwd=str(settings.BASE_DIR),
    )


@asynccontextmanager
async def stdio_client(
    environment: dict[str, str], raw_token: str, mode: str = "auto"
) -> AsyncIterator[Client]:
    async with Client(
        stdio_parameters(environment, "--token", raw_token), mode=mode, read_timeout_seconds=60
    ) as client:
        yield client
