"""Long polls of the change feed, held at the ASGI layer rather than in a Django view.

`GET /api/v1/changes/?wait=N` is answered by the feed view like any request: authentication,
rate limit, parameters, the page. When the page is empty and the request came through this
wrapper, the view marks its answer (`WAIT_HEADER`: the agent, the head it read, the wait)
instead of waiting itself; the wrapper keeps that answer, waits for the agent's feed to move
(memoryadmin.doors.changes) and then asks the view again, until something is there or the
wait is over, when the last empty answer goes out. Between two answers the request holds no
thread and no database connection, and nothing of it lives in the view.

Served without this wrapper (Django alone, its test client), the view answers at once: a long
poll may always come back early, and the client simply asks again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections import Counter
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from django.conf import settings
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memoryadmin.doors import statuses
from memoryadmin.doors.changes import wait_for_change
from memoryadmin.doors.errors import error_body
from stores.selectors.changes import NOW, encode_cursor

SCOPE_KEY = "memoryadmin.long_poll"
WAIT_HEADER = "X-Memoryadmin-Wait"
_WAIT_HEADER_BYTES = WAIT_HEADER.lower().encode("latin-1")
# A poll refused for too many held ones: by then one of them may well have answered.
RETRY_AFTER_SECONDS = 1


@dataclass(frozen=True)
class Wait:
    agent_id: int
    head: int
    seconds: float
    holder: str  # whose poll it is ("token:12", "user:3"): the cap on held polls is theirs


def wait_marker(agent_id: int, head: int, seconds: float, holder: str) -> str:
    return f"{agent_id} {head} {seconds:g} {holder}"


def _parse_marker(value: bytes) -> Wait | None:
    try:
        agent_id, head, seconds, holder = value.decode("latin-1").split()
        return Wait(int(agent_id), int(head), float(seconds), holder)
    except ValueError:
        return None


def _max_held() -> int:
    return int(settings.MEMORYADMIN["CHANGES"]["MAX_HELD_POLLS"])


def _too_many_polls(limit: int) -> JSONResponse:
    """429 for a poll past its holder's cap: held polls are cheap but not free (each is
    answered again by the view when its agent's feed moves)."""
    wait = RETRY_AFTER_SECONDS
    return JSONResponse(
        error_body(
            statuses.RATE_LIMITED_STATUS,
            f"This token already holds {limit} long polls of the change feed, the most it may "
            f"hold at once. Wait for one of them to answer, or retry in {wait} seconds; one "
            "poll per agent sees every change.",
            code="too_many_polls",
            retry_after=wait,
            max_held_polls=limit,
        ),
        status_code=statuses.RATE_LIMITED,
        headers={"Retry-After": str(wait)},
    )


@dataclass
class _Answer:
    """One answer of the Django application, kept until we know whether to send it."""

    start: Message | None = None
    body: list[Message] = field(default_factory=list)
    wait: Wait | None = None

    async def capture(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = []
            for name, value in message.get("headers", []):
                if name.lower() == _WAIT_HEADER_BYTES:
                    self.wait = _parse_marker(value)
                else:
                    headers.append((name, value))
            self.start = {**message, "headers": headers}
        else:
            self.body.append(message)

    async def send_to(self, send: Send) -> None:
        if self.start is not None:
            await send(self.start)
        for message in self.body:
            await send(message)


class LongPoll:
    """ASGI middleware for the change feed's path: see the module's docstring."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        # Polls held now in this process, by holder (each worker process counts its own).
        self.held: Counter[str] = Counter()
        # Polls in this process by credential (the Authorization header, hashed), held or
        # still being answered: past the cap one is refused before Django runs for it, so a
        # burst of polls cannot queue ahead of everyone's requests in Django's threads.
        self.by_credential: Counter[bytes] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        client = _Client(receive)
        reader = asyncio.get_running_loop().create_task(client.read())
        try:
            await self._answer({**scope, SCOPE_KEY: True}, client, send)
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader

    async def _answer(self, scope: Scope, client: _Client, send: Send) -> None:
        holder: str | None = None
        credential = _credential(scope)
        if credential is not None:
            if self.by_credential[credential] >= _max_held():
                await _too_many_polls(_max_held())(scope, client.replay(), send)
                return
            self.by_credential[credential] += 1
        try:
            loop = asyncio.get_running_loop()
            # Set when the first answer says to wait, from when that wait began.
            deadline = 0.0
            while True:
                answer = _Answer()
                await self.app(scope, client.replay(), answer.capture)
                wait = answer.wait
                if wait is None or client.gone.is_set():
                    await answer.send_to(send)
                    return
                if holder is None:
                    limit = _max_held()
                    if self.held[wait.holder] >= limit:
                        await _too_many_polls(limit)(scope, client.replay(), send)
                        return
                    holder = wait.holder
                    self.held[holder] += 1
                    deadline = loop.time() + wait.seconds
                    scope = _now_resolved(scope, wait.head)
                remaining = deadline - loop.time()
                moved = remaining > 0 and await _first(
                    wait_for_change(wait.agent_id, wait.head, remaining), client.gone.wait()
                )
                if client.gone.is_set():
                    return
                if not moved:
                    await answer.send_to(send)
                    return
        finally:
            _release(self.held, holder)
            _release(self.by_credential, credential)


def _now_resolved(scope: Scope, head: int) -> Scope:
    """The scope with `after=now` replaced by the head the first answer read: asked again
    after a commit, `now` would name the new head and the page would skip that commit."""
    query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    if not any(name == "after" and value.strip() == NOW for name, value in query):
        return scope
    resolved = [(name, encode_cursor(head) if name == "after" else value) for name, value in query]
    return {**scope, "query_string": urlencode(resolved).encode("latin-1")}


def _release(counts: Counter[Any], key: object) -> None:
    if key is not None:
        counts[key] -= 1
        if not counts[key]:
            del counts[key]


def _credential(scope: Scope) -> bytes | None:
    """A digest of a long poll's Authorization header (None without one, or for a read that
    asks not to wait)."""
    if b"wait=" not in scope.get("query_string", b""):
        return None
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            return hashlib.sha256(value).digest()
    return None


class _Client:
    """The request's body, read once, and whether the client has gone away."""

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self._body: list[Message] = []
        self._complete = asyncio.Event()
        self.gone = asyncio.Event()

    async def read(self) -> None:
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                self.gone.set()
                self._complete.set()
                return
            self._body.append(message)
            if not message.get("more_body", False):
                self._complete.set()

    def replay(self) -> Receive:
        """A receive for one dispatch: the body as it came, then the disconnect, if any."""
        given = 0

        async def receive() -> Message:
            nonlocal given
            await self._complete.wait()
            if given < len(self._body):
                given += 1
                return self._body[given - 1]
            await self.gone.wait()
            return {"type": "http.disconnect"}

        return receive


async def _first(waiting: Awaitable[bool], gone: Awaitable[object]) -> bool:
    """The waiter's answer, or False as soon as the client is gone."""
    tasks = [asyncio.ensure_future(waiting), asyncio.ensure_future(gone)]
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    for task in pending:
        with contextlib.suppress(asyncio.CancelledError):
            await task
    first = tasks[0]
    return first in done and first.result()
