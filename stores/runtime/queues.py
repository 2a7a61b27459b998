"""Work handed to a daemon thread of this process, off the request that committed it.

The queues know threads, locks, forks, exits and database connections; what they run is
given to them (stores.tasks builds them with the services' work). Whatever a process that
stops had not handled stays for the periodic sweeps, which is why a queue may lose work at a
crash and never needs to persist it.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable

from django.conf import settings
from django.db import close_old_connections, connection

logger = logging.getLogger("memoryadmin.tasks")

# How long a process that exits normally (a shell, a command, a server stopping) waits for
# its queued work: past it, the sweeps do what is left.
EXIT_WAIT_SECONDS = 30.0
# How long a queue that waits for quiet lets a steady stream of submissions postpone its
# oldest id.
QUIET_AT_MOST_SECONDS = 30.0


def release_all(timeout: float) -> bool:
    """Every queue of this process drained and its thread's connection closed: at exit, and
    in the tests before the test databases are dropped (PostgreSQL refuses to drop a database
    a thread is still connected to). False if one did not finish within `timeout`."""
    finished = [queue.drain(timeout, release=True) for queue in _QUEUES]  # each one, always
    return all(finished)


_QUEUES: list[AfterWriteQueue] = []
atexit.register(release_all, EXIT_WAIT_SECONDS)


class AfterWriteQueue:
    """Ids handed to `handle(key, ids)` in a daemon thread of this process.

    Ids submitted while a batch is handled are coalesced into the next one, so a burst of
    writes costs one pass per key (a surface), in batches of REEMBED_BATCH_SIZE. What a process
    that stops had not handled yet stays stale, and the periodic sweep embeds it; at a
    normal exit the process first waits a little for the queue to empty (EXIT_WAIT_SECONDS).

    A queue given `quiet` (seconds, read at each batch) waits until nothing was submitted for
    that long before it handles a batch, QUIET_AT_MOST_SECONDS at most: work that can wait,
    done while the process has no writes to answer, never beside them. A drain does not wait.
    """

    def __init__(
        self,
        name: str,
        handle: Callable[[str, list[int]], None],
        *,
        keep_connection: bool = False,
        quiet: Callable[[], float] | None = None,
    ) -> None:
        self._name = name
        self._handle = handle
        self._quiet = quiet
        # A queue that reads the database after most writes keeps its connection, as a
        # request thread does (a new PostgreSQL session per burst of writes is a new server
        # process each time); the others close theirs between bursts.
        self._keep_connection = keep_connection
        self._reset()
        # A forked child (a Celery or gunicorn worker) starts with no thread and, should the
        # parent have held the lock at the fork, a lock no one would release.
        os.register_at_fork(after_in_child=self._reset)
        _QUEUES.append(self)

    def _reset(self) -> None:
        self._pending: dict[str, set[int]] = {}
        self._condition = threading.Condition()
        self._busy = False
        self._release = False
        self._draining = 0
        self._first_submitted = self._last_submitted = 0.0
        self._thread: threading.Thread | None = None

    def submit(self, surface_key: str, record_id: int) -> None:
        with self._condition:
            self._last_submitted = time.monotonic()
            if not self._pending:
                self._first_submitted = self._last_submitted
            self._pending.setdefault(surface_key, set()).add(record_id)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._condition.notify_all()

    def drain(self, timeout: float, *, release: bool = False) -> bool:
        """Wait until everything submitted is handled (or failed); False on timeout. With
        `release` a kept connection is closed too (at exit, or before a test database goes)."""
        with self._condition:
            if release and self._thread is not None and self._thread.is_alive():
                self._release = True
            self._draining += 1
            self._condition.notify_all()
            try:
                return self._condition.wait_for(
                    lambda: not self._pending and not self._busy and not self._release, timeout
                )
            finally:
                self._draining -= 1

    def _wait_for_quiet(self) -> None:
        """Holding the condition: until no submission for `quiet` seconds, the oldest pending
        one has waited QUIET_AT_MOST_SECONDS, or somebody drains the queue."""
        quiet = self._quiet() if self._quiet is not None else 0.0
        latest = self._first_submitted + QUIET_AT_MOST_SECONDS
        while not self._draining and not self._release:
            now = time.monotonic()
            due = min(self._last_submitted + quiet, latest)
            if now >= due:
                return
            self._condition.wait(due - now)

    def _run(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: bool(self._pending) or self._release)
                if not self._pending:  # asked to let go of its connection, with nothing to do
                    connection.close()
                    self._release = False
                    self._condition.notify_all()
                    continue
                self._wait_for_quiet()
                batch, self._pending = self._pending, {}
                self._busy = True
            try:
                if self._keep_connection:
                    close_old_connections()  # past CONN_MAX_AGE, or broken: a new one
                batch_size = settings.MEMORYADMIN["REEMBED_BATCH_SIZE"]
                for surface_key, record_ids in batch.items():
                    ids = sorted(record_ids)
                    for start in range(0, len(ids), batch_size):
                        chunk = ids[start : start + batch_size]
                        try:
                            self._handle(surface_key, chunk)
                        except Exception:  # the vector stays stale: the sweep retries
                            logger.exception("%s of %s %s failed", self._name, surface_key, chunk)
            finally:
                # This thread's connection is its own: unless kept, close it rather than
                # keep a SQLite handle (or a PostgreSQL session) open between bursts of writes.
                if not self._keep_connection:
                    connection.close()
                with self._condition:
                    self._busy = False
                    self._condition.notify_all()


class RetryingQueue:
    """Ids handled one at a time in a daemon thread of this process, each able to ask to be
    handled again later.

    `submit_group(group_id)` hands over a group (an agent) whose ids (its webhooks) `expand`
    looks up in this thread, so the request spends nothing on the lookup. `handle(id)` answers
    the seconds after which that id wants another run (0: at once), or None; one timer per id
    waits for it.
    """

    def __init__(
        self,
        name: str,
        handle: Callable[[int], float | None],
        expand: Callable[[set[int]], Iterable[int]],
    ) -> None:
        self._name = name
        self._handle = handle
        self._expand = expand
        self._pending: set[int] = set()
        self._groups: set[int] = set()
        self._timers: dict[int, float] = {}
        self._condition = threading.Condition()
        self._busy = False
        self._thread: threading.Thread | None = None

    def submit_group(self, group_id: int) -> None:
        """Handle the group's ids, looked up in this queue's thread."""
        with self._condition:
            self._groups.add(group_id)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._condition.notify_all()

    def _later(self, item_id: int, seconds: float) -> None:
        with self._condition:
            self._timers[item_id] = time.monotonic() + seconds
            self._condition.notify_all()

    def _due(self) -> bool:
        now = time.monotonic()
        for item_id, due in list(self._timers.items()):
            if due <= now:
                del self._timers[item_id]
                self._pending.add(item_id)
        return bool(self._pending or self._groups)

    def drain(self, timeout: float) -> bool:
        """Wait until everything submitted, and every run asked for later, has been tried."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while self._due() or self._busy or self._timers:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._condition.wait(min(remaining, 0.05))
            return True

    def _run(self) -> None:
        while True:
            with self._condition:
                while not self._due():
                    soonest = min(self._timers.values(), default=None)
                    self._condition.wait(None if soonest is None else soonest - time.monotonic())
                batch, self._pending = self._pending, set()
                groups, self._groups = self._groups, set()
                self._busy = True
            try:
                if groups:
                    batch.update(self._expand(groups))
                for item_id in sorted(batch):
                    again = self._handle(item_id)
                    if again is not None:
                        self._later(item_id, again)
            finally:
                connection.close()
                with self._condition:
                    self._busy = False
                    self._condition.notify_all()
