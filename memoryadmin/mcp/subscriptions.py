"""Resource subscriptions: `notifications/resources/updated` for memory://<id> when it changes.

Served where a session can carry a message the server sends unasked: on stdio, in both eras
of the protocol: a 2025 client's `resources/subscribe`, answered on the connection, and a
2026-07-28 client's `subscriptions/listen` stream (through the SDK's ListenHandler, fed by
`bus`). The stateless HTTP door has no such channel: it registers neither, so it does not
advertise the capability either.

The watcher follows the agent's change feed (memoryadmin.doors.changes: PostgreSQL's NOTIFY,
a short poll on SQLite) only while someone is subscribed, from the feed's head at the first
subscription, so a change committed by any process after a subscribe is announced (each
changed memory once per batch of changes read together). The token is looked up again
before each announcement: a revoked token's session hears nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError
from starlette.requests import Request

from memoryadmin.doors.changes import wait_for_change
from memoryadmin.mcp.server import (
    DEAD_TOKEN,
    MEMORY_SCHEME,
    RESOURCE_NOT_FOUND,
    Identify,
    in_database_thread,
    memory_ref,
)
from stores.engine.lookup import lookup_filter
from stores.models import Memory
from stores.selectors.changes import FeedPage, change_head_of, changes_after
from stores.surfaces import MEMORY

# The longest a watcher sleeps before looking at its subscriptions again.
WAKE_SECONDS = 30.0
PAGE = 100


@dataclass(frozen=True)
class _Subscribed:
    record_id: int
    session: ServerSession


class _Bus(InMemorySubscriptionBus):
    """The SDK's bus, telling the watcher when a listen stream opens (it then follows the feed)."""

    def __init__(self, opened: Callable[[], None]) -> None:
        super().__init__()
        self._opened = opened

    @property
    def listening(self) -> bool:
        return bool(self._listeners)

    def subscribe(self, listener):
        unsubscribe = super().subscribe(listener)
        self._opened()
        return unsubscribe


class ResourceWatcher:
    """The subscriptions of one server (one token), and the task that announces changes."""

    def __init__(self, identify: Identify) -> None:
        self.identify = identify
        self.bus = _Bus(self._wake)
        self.listen = ListenHandler(self.bus)
        self._subscribed: dict[str, _Subscribed] = {}
        self._agent_id: int | None = None
        self._head: int | None = None
        self._changed = anyio.Event()

    def _wake(self) -> None:
        self._changed.set()

    @property
    def active(self) -> bool:
        return bool(self._subscribed) or self.bus.listening

    # --- resources/subscribe and resources/unsubscribe (2025 clients) ---------------------

    async def subscribe(
        self, ctx: ServerRequestContext, params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        record_id, agent_id, head = await in_database_thread(self._resolve, ctx.request, uri)
        self._follow(agent_id, head)
        self._subscribed[uri] = _Subscribed(record_id, ctx.session)
        self._wake()
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self._subscribed.pop(str(params.uri), None)
        return types.EmptyResult()

    def _resolve(self, request: Request | None, uri: str) -> tuple[int, int, int]:
        """The memory `uri` names, its agent, and that agent's feed head; or not found."""
        ref = memory_ref(uri)
        if ref is None:
            raise MCPError(RESOURCE_NOT_FOUND, f"No resource {uri}; subscribe to memory://<id>.")
        token = self.identify(request)
        if token is None:
            raise MCPError(RESOURCE_NOT_FOUND, DEAD_TOKEN, {"uri": uri, "status": "forbidden"})
        record_id = (
            Memory.objects.filter(lookup_filter(ref), agent_id=token.agent_id)
            .values_list("pk", flat=True)
            .first()
        )
        if record_id is None:
            raise MCPError(
                RESOURCE_NOT_FOUND, f"No memory {ref} in this agent's banks.", {"uri": uri}
            )
        return record_id, token.agent_id, change_head_of(token.agent_id)

    def _follow(self, agent_id: int, head: int) -> None:
        if self._head is None or self._agent_id != agent_id:
            self._agent_id, self._head = agent_id, head

    # --- the announcing task -------------------------------------------------------------

    async def run(self) -> None:
        """Announce changes for as long as the server runs (run it beside the server)."""
        while True:
            if not self.active:
                # Nobody is subscribed: follow nothing, from nowhere, until someone is.
                self._head = None
                self._changed = anyio.Event()
                await self._changed.wait()
            elif self._head is None or self._agent_id is None:
                await self._follow_for_listeners()
            elif await wait_for_change(self._agent_id, self._head, WAKE_SECONDS):
                await self._announce(self._agent_id, self._head)

    async def _follow_for_listeners(self) -> None:
        """A listen stream opened before any resources/subscribe: follow from now."""
        token = await in_database_thread(self.identify, None)
        if token is None:
            self._changed = anyio.Event()
            await self._changed.wait()
            return
        self._follow(token.agent_id, await in_database_thread(change_head_of, token.agent_id))

    async def _announce(self, agent_id: int, head: int) -> None:
        read = await in_database_thread(self._read, agent_id, head)
        if read is None:
            self._subscribed.clear()  # the token was revoked: this session hears nothing more
            return
        page, aliases = read
        self._head = page.position
        for record_id in sorted({item["id"] for item in page.items if item["id"] is not None}):
            uris = [f"{MEMORY_SCHEME}{record_id}"]
            if aliases.get(record_id):
                uris.append(f"{MEMORY_SCHEME}{aliases[record_id]}")
            for uri in uris:
                await self.bus.publish(ResourceUpdated(uri=uri))
            for uri, subscribed in list(self._subscribed.items()):
                if subscribed.record_id == record_id:
                    await subscribed.session.send_resource_updated(uri)

    def _read(self, agent_id: int, head: int) -> tuple[FeedPage, dict[int, str]] | None:
        """The agent's memory changes after `head` and their aliases; None for a dead token."""
        token = self.identify(None)
        if token is None or token.agent_id != agent_id:
            return None
        page = changes_after(token.agent, after=head, limit=PAGE, surface=MEMORY.key)
        ids = [item["id"] for item in page.items if item["id"] is not None]
        aliases = Memory.objects.filter(pk__in=ids, alias__isnull=False).values_list("pk", "alias")
        return page, dict(aliases)
