"""Resource subscriptions with the MCP SDK's own client: subscribe to memory://<id> over
stdio, change the record over REST (another process), receive notifications/resources/updated."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import mcp_types as types
import pytest
import requests
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.factories import agent_token
from tests.load.server import free_port, wait_until_up
from tests.mcp.clients import http_client, run_async, stdio_parameters
from tests.mcp.scenarios import STORY

ROOT = Path(__file__).resolve().parents[2]
# The 2025 way is deprecated by the SDK, and tested on purpose: clients still speak it.
LEGACY = pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
# Well past the feed's wake-up (NOTIFY on PostgreSQL, a 0.5 s poll on SQLite).
NOTIFIED_WITHIN = 20


@contextmanager
def rest_server(environment: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """The web application as a process of its own, on the stdio server's data."""
    port = free_port()
    log = tmp_path / "uvicorn.log"
    env = {
        **environment,
        "PATH": "/usr/bin:/bin",
        "MEMORYADMIN_API_RATE_LIMIT": "100000/minute",
        "MEMORYADMIN_LOG_LEVEL": "WARNING",
    }
    with log.open("w") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "memoryadmin.asgi:application", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=output,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base, server, log)
        yield base
    finally:
        server.terminate()
        server.wait(20)


def edit_over_rest(base: str, raw: str, record_id: int, old: str, new: str) -> None:
    answer = requests.post(
        f"{base}/api/v1/memories/{record_id}/edit/",
        json={"old_string": old, "new_string": new},
        headers={"Authorization": f"Bearer {raw}"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text


class Updates:
    """What the client hears: the URIs of notifications/resources/updated, in order."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self.arrived = anyio.Event()

    async def handle(self, message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(str(message.params.uri))
            self.arrived.set()


@LEGACY
def test_a_subscriber_hears_of_a_change_made_over_rest(stdio_environment, agent, make, tmp_path):
    memory = make.memory(agent, STORY, alias="story-1")
    other = make.memory(agent, "Another memory, not subscribed to.")
    _token, raw = agent_token(agent)
    environment = stdio_environment()
    updates = Updates()

    async def scenario() -> None:
        async with Client(
            stdio_parameters(environment, "--token", raw),
            mode="legacy",
            read_timeout_seconds=60,
            message_handler=updates.handle,
        ) as client:
            capabilities = client.server_capabilities.resources
            assert capabilities is not None and capabilities.subscribe is True
            await client.subscribe_resource(f"memory://{memory.pk}")
            await client.subscribe_resource("memory://story-1")  # the alias names it too
            with rest_server(environment, tmp_path) as base:
                await anyio.to_thread.run_sync(
                    edit_over_rest, base, raw, other.pk, "subscribed", "followed"
                )
                await anyio.to_thread.run_sync(edit_over_rest, base, raw, memory.pk, "May", "June")
                with anyio.fail_after(NOTIFIED_WITHIN):
                    while len(updates.uris) < 2:
                        await updates.arrived.wait()
                        updates.arrived = anyio.Event()
            read = await client.read_resource(f"memory://{memory.pk}")
            assert '"version": 2' in read.contents[0].text

    run_async(scenario)

    assert sorted(updates.uris) == sorted([f"memory://{memory.pk}", "memory://story-1"])


def test_a_listen_stream_hears_of_a_change_made_over_rest(stdio_environment, agent, make, tmp_path):
    """The 2026-07-28 way: subscriptions/listen with resource_subscriptions."""
    memory = make.memory(agent, STORY)
    _token, raw = agent_token(agent)
    environment = stdio_environment()
    heard: list[str] = []

    async def scenario() -> None:
        async with Client(
            stdio_parameters(environment, "--token", raw), mode="auto", read_timeout_seconds=60
        ) as client:
            assert client.server_capabilities.resources.subscribe is True
            uri = f"memory://{memory.pk}"
            async with client.listen(resource_subscriptions=[uri]) as subscription:
                with rest_server(environment, tmp_path) as base:
                    await anyio.to_thread.run_sync(
                        edit_over_rest, base, raw, memory.pk, "May", "June"
                    )
                    with anyio.fail_after(NOTIFIED_WITHIN):
                        async for event in subscription:
                            heard.append(event.uri)
                            break

    run_async(scenario)

    assert heard == [f"memory://{memory.pk}"]


@LEGACY
def test_another_agents_memory_cannot_be_subscribed_to(stdio_environment, agent, other_agent, make):
    theirs = make.memory(other_agent, STORY)
    _token, raw = agent_token(agent)
    environment = stdio_environment()

    async def scenario() -> None:
        async with Client(
            stdio_parameters(environment, "--token", raw), mode="legacy", read_timeout_seconds=60
        ) as client:
            for uri in (f"memory://{theirs.pk}", "memory://no-such-alias", "skill://1"):
                with pytest.raises(MCPError) as refused:
                    await client.subscribe_resource(uri)
                assert refused.value.error.code == -32002

    run_async(scenario)


def test_the_stateless_http_door_does_not_advertise_subscriptions(mcp_url, agent):
    _token, raw = agent_token(agent)

    async def scenario() -> None:
        for mode in ("legacy", "auto"):
            async with http_client(mcp_url, raw, mode=mode) as client:
                resources = client.server_capabilities.resources
                assert resources is not None and not resources.subscribe

    run_async(scenario)
