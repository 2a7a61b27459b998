"""Waiting for an agent's feed to move, without a database connection or a thread per waiter.

A waiter asks `wait_for_change(agent_id, head, timeout)`: it returns True once the agent's
latest change is past `head` (or may be: a wake-up is a hint, the caller reads again), False
when the time is up. How the news arrives depends on the database:

- PostgreSQL: each change's commit sends a NOTIFY (stores.dbops), which reaches every
  listening process on any host. Each event loop (one per web process) keeps one LISTEN
  connection, shared by all its waiters; while that connection is down, waiters fall back to
  polling, so a lost connection delays a wake-up but never loses one.
- SQLite (the embedded default, one host): a short poll of the agent's head, one indexed
  query every POLL_INTERVAL seconds per waiter, each on a connection closed right after.

Reads run in the loop's default executor and close their connection before they return, so
between two reads a waiter holds only a coroutine.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import weakref
from collections import defaultdict
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections
from django.utils import timezone

from stores import metrics
from stores.dbops import CHANGES_CHANNEL
from stores.selectors.changes import change_head_of, first_change_time

logger = logging.getLogger("memoryadmin.changes")

# libpq connection parameters of Django's PostgreSQL settings (the others are Django's own).
_LIBPQ_KEYS = frozenset(
    {
        "dbname",
        "user",
        "password",
        "host",
        "port",
        "connect_timeout",
        "sslmode",
        "sslrootcert",
        "sslcert",
        "sslkey",
        "options",
        "application_name",
        "target_session_attrs",
        "passfile",
        "service",
    }
)
RECONNECT_SECONDS = (0.5, 1.0, 2.0, 5.0)


def _poll_interval() -> float:
    return float(settings.MEMORYADMIN["CHANGES"]["POLL_INTERVAL"])


def _read_head(agent_id: int) -> int:
    try:
        return change_head_of(agent_id)
    finally:
        # This runs in an executor thread that serves other requests next: leave no
        # connection (or pool slot) behind.
        connections["default"].close()


def _observe_wake_lag(agent_id: int, head: int, since: dt.datetime) -> None:
    """The lag of a wake-up, for a change written while the reader waited (one already there
    when it asked is a backlog, not a lag)."""
    try:
        written = first_change_time(agent_id, head)
    finally:
        connections["default"].close()
    if written is not None and written >= since:
        lag = (timezone.now() - written).total_seconds()
        metrics.FEED_WAKE_LAG_SECONDS.observe(max(lag, 0.0))


async def current_head(agent_id: int) -> int:
    return await sync_to_async(_read_head, thread_sensitive=False)(agent_id)


async def _poll(agent_id: int, head: int, deadline: float) -> bool:
    loop = asyncio.get_running_loop()
    while True:
        if await current_head(agent_id) > head:
            return True
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        await asyncio.sleep(min(_poll_interval(), remaining))


class PostgresListener:
    """One LISTEN connection for one event loop, waking that loop's waiters by agent."""

    def __init__(self) -> None:
        self._waiters: dict[int, set[asyncio.Event]] = defaultdict(set)
        self._listening = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def _ensure_running(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def wait(self, agent_id: int, head: int, deadline: float) -> bool:
        self._ensure_running()
        loop = asyncio.get_running_loop()
        woken = asyncio.Event()
        self._waiters[agent_id].add(woken)
        try:
            while True:
                listening = self._listening.is_set()
                # Registered (and listening) before reading: a commit after this read
                # wakes us, and one before it shows in the head.
                if await current_head(agent_id) > head:
                    return True
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return False
                # Not listening (connecting, or the connection dropped): poll meanwhile.
                step = remaining if listening else min(_poll_interval(), remaining)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), step)
                    return True
        finally:
            self._waiters[agent_id].discard(woken)
            if not self._waiters[agent_id]:
                del self._waiters[agent_id]

    def _wake(self, agent_id: int | None = None) -> None:
        targets = self._waiters.values() if agent_id is None else [self._waiters.get(agent_id, ())]
        for events in targets:
            for event in events:
                event.set()

    async def _run(self) -> None:
        import psycopg

        attempt = 0
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    **_listener_parameters(), autocommit=True
                ) as listener:
                    await listener.execute(f"LISTEN {CHANGES_CHANNEL}")
                    self._listening.set()
                    attempt = 0
                    # What committed while we were not listening is in the head: wake all.
                    self._wake()
                    async for notice in listener.notifies():
                        if notice.payload.isdecimal():
                            self._wake(int(notice.payload))
            except asyncio.CancelledError:
                raise
            except Exception as error:  # psycopg.Error, OSError: reconnect, poll meanwhile
                logger.warning("change listener disconnected: %s", error)
            finally:
                self._listening.clear()
            await asyncio.sleep(RECONNECT_SECONDS[min(attempt, len(RECONNECT_SECONDS) - 1)])
            attempt += 1

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


def _listener_parameters() -> dict[str, Any]:
    params = connections["default"].get_connection_params()
    return {key: value for key, value in params.items() if key in _LIBPQ_KEYS}


_listeners: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, PostgresListener] = (
    weakref.WeakKeyDictionary()
)


def _listener() -> PostgresListener:
    loop = asyncio.get_running_loop()
    listener = _listeners.get(loop)
    if listener is None:
        listener = _listeners[loop] = PostgresListener()
    return listener


async def wait_for_change(agent_id: int, head: int, timeout: float) -> bool:
    """True once the agent's feed moved past `head` (maybe), False after `timeout` seconds."""
    since = timezone.now()
    deadline = asyncio.get_running_loop().time() + max(timeout, 0.0)
    if connections["default"].vendor == "postgresql":
        woke = await _listener().wait(agent_id, head, deadline)
    else:
        woke = await _poll(agent_id, head, deadline)
    if woke:
        await sync_to_async(_observe_wake_lag, thread_sensitive=False)(agent_id, head, since)
    return woke


async def close_listener() -> None:
    """Close this event loop's LISTEN connection (at the server's shutdown)."""
    listener = _listeners.pop(asyncio.get_running_loop(), None)
    if listener is not None:
        await listener.close()
