"""The after-write queues let go of the database: a queue that keeps its thread's connection
between bursts closes it when every queue is released, as at exit and before the test
databases are dropped."""

from __future__ import annotations

import time

from django.db import connection

from stores.runtime.queues import AfterWriteQueue, release_all


def sessions_with_pid(pid_holder: list[int]) -> int:
    with connection.cursor() as cursor:
        # The test's transaction keeps its first look at the statistics unless told not to.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", pid_holder)
        return cursor.fetchone()[0]


def session_ends(pid_holder: list[int], within: float = 10.0) -> bool:
    """Whether the server ends the session within `within` seconds. A client's close reaches
    the server at once, but the session leaves pg_stat_activity only once its backend process
    has exited, a moment later on a busy machine."""
    deadline = time.monotonic() + within
    while sessions_with_pid(pid_holder):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_releasing_every_queue_closes_a_kept_connection(postgres_only):
    backends: list[int] = []

    def handle(key: str, ids: list[int]) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backends.append(cursor.fetchone()[0])

    queue = AfterWriteQueue("test-kept", handle, keep_connection=True)
    queue.submit("memory", 1)
    assert queue.drain(10)
    assert len(backends) == 1
    assert sessions_with_pid(backends) == 1

    assert release_all(10)
    assert session_ends(backends)
