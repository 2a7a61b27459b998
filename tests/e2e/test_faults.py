"""Faults an operator will meet: the broker goes away, a worker dies, the database restarts.

Each test puts the stack back as it found it, and checks the data in the database, not logs.
"""

from __future__ import annotations

import signal
import sys
import time

import pytest

from tests.e2e.helpers import all_fresh, log_in, stored_memories
from tests.e2e.stack import Stack, wait_for
from tests.e2e.test_stack import create_memory

# The beat sweep runs every few seconds here; give it several rounds.
SWEEP_DEADLINE = 30


@pytest.fixture(autouse=True)
def _stack_restored(stack):
    """A failing fault test must not leave the next test without Redis, worker or database."""
    yield
    stack.restore()


def edit(stack: Stack, token: str, memory_id: int, old: str, new: str):
    return stack.request(
        "POST",
        f"/api/v1/memories/{memory_id}/edit/",
        token=token,
        json={"old_string": old, "new_string": new},
    )


def test_edits_succeed_while_redis_is_down_and_the_sweep_re_embeds_them(stack):
    token = stack.create_token("e2e-broker-down")
    ids = [
        create_memory(stack, token, f"Patrol route {n} starts at the north gate.") for n in range(4)
    ]
    wait_for(lambda: all_fresh(stack, ids), "the first vectors", timeout=SWEEP_DEADLINE)

    stack.stop("redis")
    try:
        answers = []
        for memory_id in ids:
            started = time.monotonic()
            answers.append(edit(stack, token, memory_id, "north gate", "south gate"))
            # An edit does not hang on the missing broker.
            assert time.monotonic() - started < 10
        ready = stack.get("/readyz")
        stored = stored_memories(stack, ids)
    finally:
        stack.start_redis()

    assert [answer.status_code for answer in answers] == [200] * len(ids)
    assert {answer.json()["status"] for answer in answers} == {"updated"}
    assert ready.status_code == 503
    assert ready.json()["checks"]["broker"]["status"] == "error"
    assert ready.json()["checks"]["database"]["status"] == "ok"
    # Every edit is in the database; none of them has a vector for its new text yet.
    for memory in stored.values():
        assert memory.content.endswith("starts at the south gate.")
        assert memory.version == 2
        assert not memory.fresh
    # Redis is back (empty: its queue died with it). Beat's sweep finds the stale vectors.
    fresh = wait_for(lambda: all_fresh(stack, ids), "the sweep", timeout=SWEEP_DEADLINE)
    assert all(memory.vector_matches_text() for memory in fresh.values())
    assert stack.get("/readyz").status_code == 200


def test_a_worker_killed_mid_batch_leaves_nothing_half_written(stack):
    token = stack.create_token("e2e-worker-killed")
    stack.stop("worker")
    ids = [
        create_memory(stack, token, f"Inventory item {n}: {n * 3} spare fuses in bin {n}.")
        for n in range(24)
    ]
    # The queued per-record jobs are lost, as with a broker that restarts empty: the records
    # are left to the sweep, which embeds them in batches of 4 at 0.25 s a text (six batches,
    # six seconds: a window a busy machine's polling does not miss).
    stack.run(sys.executable, "-m", "celery", "--app=memoryadmin", "purge", "-f")
    stack.start_worker(delay=0.25, batch_size=4)

    def some_but_not_all_fresh() -> bool:
        fresh = [memory for memory in stored_memories(stack, ids).values() if memory.fresh]
        return 0 < len(fresh) < len(ids)

    try:
        # Known from the database, not from the embedder: a batch it has embedded is not
        # stored until its transaction commits, and the sweep may first embed other records.
        wait_for(
            some_but_not_all_fresh,
            "the sweep to have stored some of the batches",
            timeout=SWEEP_DEADLINE,
            interval=0.05,
        )
    finally:
        stack.stop("worker", signal.SIGKILL)

    stored = stored_memories(stack, ids)
    fresh = [memory for memory in stored.values() if memory.fresh]
    assert 0 < len(fresh) < len(ids), "the kill must land in the middle of the job"
    for memory in stored.values():
        assert memory.version == 1
        if memory.embedding is None:
            assert memory.embedding_hash == ""
        else:
            # A stored vector is complete and belongs to the text it names.
            assert memory.vector_matches_text()
    # The next run (a new worker, the next sweep) finishes the job.
    stack.start_worker()
    done = wait_for(lambda: all_fresh(stack, ids), "the next sweep", timeout=SWEEP_DEADLINE)
    assert all(memory.vector_matches_text() for memory in done.values())


def test_a_postgres_restart_answers_503_then_recovers_without_restarting_the_app(stack):
    token = stack.create_token("e2e-db-restart")
    memory_id = create_memory(stack, token, "The backup runs at 03:00 every night.")
    cookies = log_in(stack)
    dashboard = "/a/e2e-db-restart/"
    web = stack.processes["web"]

    stack.postgres("stop")
    try:
        read = stack.get("/api/v1/memories/", token=token)
        write = edit(stack, token, memory_id, "03:00", "04:00")
        page = stack.get(dashboard, cookies=cookies)
        ready = stack.get("/readyz")
        alive = stack.get("/healthz")
    finally:
        stack.postgres("resume")

    assert read.status_code == 503
    assert read.json()["code"] == "database_unavailable"
    assert read.headers["Retry-After"] == "5"
    assert write.status_code == 503
    assert page.status_code == 503
    assert "text/html" in page.headers["Content-Type"]
    assert ready.status_code == 503
    assert ready.json()["checks"]["database"]["status"] == "error"
    assert ready.json()["checks"]["broker"]["status"] == "ok"
    assert alive.status_code == 200
    # The same gunicorn, never restarted, answers again once the database is back.
    wait_for(
        lambda: stack.get("/api/v1/memories/", token=token).status_code == 200,
        "the API to answer again",
    )
    assert web.poll() is None
    assert stack.processes["web"] is web
    after = edit(stack, token, memory_id, "03:00", "04:00")
    assert after.status_code == 200, after.text
    assert stack.get(dashboard, cookies=cookies).status_code == 200
    # Nothing written before the restart was lost; the refused edit was not applied twice.
    stored = wait_for(lambda: all_fresh(stack, [memory_id]), "the re-embed after recovery")
    assert stored[memory_id].content == "The backup runs at 04:00 every night."
    assert stored[memory_id].version == 2
