"""A real Redis broker and a real Celery worker process re-embed what the service writes.

The test starts redis-server on loopback and `celery -A memoryadmin worker --pool=solo`
as a subprocess against the same database as the test (a file database on SQLite; the
committed test database on PostgreSQL), then waits on the database with a deadline.
"""

from __future__ import annotations

import gc
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import kombu.pools
import pytest
import redis
from celery._state import _set_task_join_will_block
from django.conf import settings
from django.db import connections
from django.db.utils import load_backend

from memoryadmin.celery import app
from stores import tasks
from stores.engine.actors import Actor
from stores.models import DecayPass, Memory, Suggestion, WorkingMemoryEntry
from stores.services import record_edit
from tests.factories import AgentFactory, RecordMaker

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_SECONDS = 90
MAINTAINER = Actor.maintainer("tests")


@pytest.fixture
def broker_url() -> Iterator[str]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (bin/system-deps installs it with apt-get)")
    # A Unix socket, not a TCP port: a fixed port can be held by any process's outgoing
    # connection (it lies in the ephemeral range), and then Redis never answers. The folder
    # is short-named: a socket path is limited to about a hundred bytes.
    folder = Path(tempfile.mkdtemp(prefix="memoryadmin-redis-"))
    socket_path = folder / "redis.sock"
    log_path = folder / "redis.log"
    server = subprocess.Popen(
        [
            "redis-server",
            "--port", "0",
            "--unixsocket", str(socket_path),
            "--save", "",
            "--appendonly", "no",
            "--dir", str(folder),
            "--logfile", str(log_path),
        ],
    )  # fmt: skip
    client = redis.Redis(unix_socket_path=str(socket_path))
    try:
        wait_for(
            client.ping,
            "redis-server to answer",
            exceptions=(redis.ConnectionError,),
            process=server,
            log_path=log_path,
        )
        yield f"redis+socket://{socket_path}"
    finally:
        server.terminate()
        server.wait(timeout=20)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def worker_database(transactional_db, tmp_path) -> Iterator[dict[str, str]]:
    """Environment that points a worker process at the database this test writes to."""
    current = connections["default"]
    if current.vendor == "postgresql":
        db = current.settings_dict
        yield {
            "MEMORYADMIN_DATABASE_URL": (
                f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:{db['PORT']}/"
                f"{db['NAME']}"
            )
        }
        return
    # SQLite tests run in memory, which another process cannot open: switch this test to a
    # migrated file database in the data folder the worker will use.
    file_settings = {**current.settings_dict, "NAME": str(tmp_path / "memoryadmin.sqlite3")}
    file_connection = load_backend(file_settings["ENGINE"]).DatabaseWrapper(
        file_settings, "default"
    )
    connections["default"] = file_connection
    try:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        yield {"MEMORYADMIN_DATA_DIR": str(tmp_path)}
    finally:
        file_connection.close()
        connections["default"] = current


@pytest.fixture
def worker(broker_url, worker_database, tmp_path) -> Iterator[subprocess.Popen]:
    env = {
        **os.environ,
        **worker_database,
        "MEMORYADMIN_BROKER_URL": broker_url,
        "MEMORYADMIN_EMBEDDING_BACKEND": settings.MEMORYADMIN["EMBEDDINGS"]["BACKEND"],
        # As in a deployment, the worker shares the web's secret key: the webhook signing
        # secrets are sealed with a key derived from it.
        "MEMORYADMIN_SECRET_KEY": settings.SECRET_KEY,
    }
    log = (tmp_path / "worker.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "memoryadmin", "worker",
            "--pool=solo", "--loglevel=INFO",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    process.log_path = tmp_path / "worker.log"  # type: ignore[attr-defined]
    # This process now sends tasks to the broker instead of running them in-process.
    saved = {key: app.conf[key] for key in ("task_always_eager", "broker_url", "result_backend")}
    switch_celery(task_always_eager=False, broker_url=broker_url, result_backend=broker_url)
    try:
        yield process
    finally:
        # A result this process waited on unsubscribes from Redis when it is collected: now,
        # while Redis is up, rather than in a later test after it stopped.
        gc.collect()
        switch_celery(**saved)
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        if process.returncode not in (0, -signal.SIGTERM):
            print((tmp_path / "worker.log").read_text()[-4000:])


def switch_celery(**conf: object) -> None:
    """Point this process's Celery app elsewhere, dropping connections made for the old place."""
    # The broker connection and producer pools, built from the broker URL on first use.
    if app._pool is not None:
        app._pool.force_close_all()
    app._pool = None
    if "amqp" in vars(app):
        app.amqp._producer_pool = None
    # kombu's own pools, one per broker URL: the next test's broker has the same URL.
    kombu.pools.reset()
    # Celery's process-wide "joining would block" flag: an eager task sets it while it runs
    # and puts back what it found, so two eager tasks overlapping in two threads of earlier
    # tests (a live server's and the test's own) can leave it set, and .get() then refuses.
    _set_task_join_will_block(False)
    # The result backend, cached from the result URL on first use.
    app._backend_cache = None
    vars(app._local).pop("backend", None)
    # The app reads Django's settings under the CELERY_ prefix, and a lookup tries the
    # prefixed name first (Celery before 5.7 found the setting's value there over a change
    # made under the bare name): the change goes under that name.
    app.conf.update({f"CELERY_{key.upper()}": value for key, value in conf.items()})


def wait_for(
    condition: Callable[[], object],
    what: str,
    *,
    exceptions: tuple[type[BaseException], ...] = (),
    process: subprocess.Popen | None = None,
    log_path: Path | None = None,
) -> object:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        try:
            value = condition()
        except exceptions:
            value = None
        if value:
            return value
        if process is not None and process.poll() is not None:
            log = log_path.read_text()[-2000:] if log_path and log_path.exists() else ""
            pytest.fail(f"exited ({process.returncode}) while waiting for {what}\n{log}")
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {DEADLINE_SECONDS}s waiting for {what}")
        time.sleep(0.1)


def fresh(model, pk: int) -> bool:
    record = model.objects.filter(pk=pk).values("embedding_hash", "text_hash").first()
    return bool(record and record["embedding_hash"] == record["text_hash"])


def test_edits_through_the_service_are_reembedded_by_the_worker(worker):
    agent = AgentFactory()
    make = RecordMaker()
    memory = make.memory(agent, "The user drinks tea.")
    entry = make.working(agent, key="focus", value="Reviewing the patrol log.")
    result = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=MAINTAINER,
        old_string="tea",
        new_string="green tea",
    )
    assert result.ok, result
    edited_hash = Memory.objects.get(pk=memory.pk).text_hash

    wait_for(lambda: fresh(Memory, memory.pk), "the memory's vector", process=worker)
    wait_for(lambda: fresh(WorkingMemoryEntry, entry.pk), "the entry's vector", process=worker)

    stored = Memory.objects.get(pk=memory.pk)
    assert stored.embedding_hash == edited_hash  # the vector reads the edited text
    assert stored.embedding is not None and len(stored.embedding) == 384
    assert stored.version == 2  # re-embedding is bookkeeping: no version bump
    worker_log = worker.log_path.read_text()
    assert "stores.tasks.reembed_records" in worker_log  # the worker did it, not this process

    # The periodic passes run on the worker too; their results come back through Redis.
    assert tasks.sweep_stale_embeddings.delay().get(timeout=DEADLINE_SECONDS)["memory"] == {
        "stored": 0,
        "skipped_fresh": 0,
        "skipped_changed": 0,
    }
    decay = tasks.decay_memories.delay().get(timeout=DEADLINE_SECONDS)
    assert decay["rows_touched"] == 1
    assert DecayPass.objects.get().triggered_by == "task:decay"


def test_the_worker_finds_a_conflict_a_moment_after_the_write(worker):
    agent = AgentFactory()
    make = RecordMaker()
    make.memory(agent, "The user lives in Paris.")
    make.memory(agent, "The user lives in Lyon.")

    found = wait_for(
        lambda: Suggestion.objects.filter(agent=agent).first(), "the conflict", process=worker
    )

    assert found.kind == Suggestion.Kind.CONFLICT
    assert "'Paris' → 'Lyon'" in found.reason
    assert "stores.tasks.suggest_unless_written_again" in worker.log_path.read_text()


@pytest.fixture
def webhook_worker(worker_database, monkeypatch, settings, request) -> subprocess.Popen:
    """A worker that may reach the loopback receiver and retries within a moment.

    The database comes first: settings changed before the test database is set up would keep
    pointing this process at the database the tests were started with."""
    for name, value in {"ALLOW_PRIVATE": "true", "BACKOFF_SECONDS": "0.2"}.items():
        monkeypatch.setenv(f"MEMORYADMIN_WEBHOOK_{name}", value)
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "WEBHOOKS": {**settings.MEMORYADMIN["WEBHOOKS"], "DELIVERY": "task", "ALLOW_PRIVATE": True},
    }
    return request.getfixturevalue("worker")


def test_webhooks_go_out_from_the_worker_after_commit_and_retry_there(webhook_worker):
    from standardwebhooks import Webhook as Verifier

    from stores.services.webhooks import webhook_create
    from tests.receivers import receiver

    agent = AgentFactory()
    with receiver([500, 200]) as hook:
        added = webhook_create(actor=MAINTAINER, agent=agent, url=hook.url)
        memory = RecordMaker().memory(agent, "Sent by the worker.")
        first, second = hook.wait_for(2, timeout=DEADLINE_SECONDS)

    assert first.body == second.body  # the same change, tried again after the 500
    payload = Verifier(added.details["secret"]).verify(second.body, second.headers)
    assert payload["data"]["id"] == memory.pk
    assert "stores.tasks.deliver_webhook" in webhook_worker.log_path.read_text()
