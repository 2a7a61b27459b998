"""Celery tasks. They take ids, re-read the records, and call one service each.

Every task is idempotent and safe to run twice or concurrently: re-embedding stores a
vector only if the text is unchanged, decay computes from the row it writes, and expiry
re-checks each entry under a lock.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable

from celery import shared_task
from celery.signals import after_task_publish, task_failure
from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnavailable

from stores import metrics
from stores.selectors.webhooks import enabled_webhook_ids
from stores.services import decay, embeddings, expiry, webhooks

logger = logging.getLogger("memoryadmin.tasks")


@after_task_publish.connect
def _count_queued(sender: str | None = None, **_: object) -> None:
    metrics.TASKS_QUEUED.labels(task=sender or "unknown").inc()


@task_failure.connect
def _count_failed(sender: object = None, **_: object) -> None:
    metrics.TASKS_FAILED.labels(task=getattr(sender, "name", "unknown")).inc()


@shared_task(
    bind=True,
    # EmbeddingUnavailable is a ConnectionError: a model server that is down is retried with
    # backoff; an answer that can never work (EmbeddingError) is not.
    autoretry_for=(ConnectionError, TimeoutError),
    retry_backoff=True,
    max_retries=5,
    # Nobody reads a re-embed's result; storing it made every edit subscribe to its result
    # key in Redis on the request path (about 1 ms of an edit, bench/edit_path.py).
    ignore_result=True,
)
def reembed_records(self, surface_key: str, record_ids: list[int]) -> dict[str, int]:
    return embeddings.reembed(surface_key, record_ids).as_dict()


@shared_task
def sweep_stale_embeddings() -> dict[str, dict[str, int]]:
    """Re-embed whatever is still stale: edits made while the broker or a worker was down."""
    outcomes = embeddings.reembed_sweep(batch_size=settings.MEMORYADMIN["REEMBED_BATCH_SIZE"])
    return {surface: outcome.as_dict() for surface, outcome in outcomes.items()}


@shared_task
def decay_memories() -> dict[str, float]:
    run = decay.decay_importance(triggered_by="task:decay")
    return {"rows_touched": run.rows_touched, "duration_seconds": run.duration_seconds}


@shared_task
def purge_expired_working_memory() -> dict[str, int]:
    outcome = expiry.working_purge_expired()
    return {"purged": outcome.purged, "batches": outcome.batches}


@shared_task(ignore_result=True)
def deliver_webhook(webhook_id: int, retry: bool = False) -> None:
    """Send the webhook's undelivered changes; schedule itself again for a retry or the rest.

    A run that finds a retry not due yet schedules it only if it is that retry's own task
    (`retry`), come a moment early: writes meanwhile must not pile up tasks for one retry.
    """
    run = webhooks.webhook_deliver(webhook_id)
    if run.more:
        deliver_webhook.delay(webhook_id)
    elif run.retry_at is not None and (retry or not run.busy):
        wait = max(0.0, (run.retry_at - timezone.now()).total_seconds())
        deliver_webhook.apply_async((webhook_id, True), countdown=wait)


@shared_task
def sweep_webhooks() -> dict[str, int]:
    return webhooks.webhooks_sweep()


def enqueue_webhooks(agent_id: int) -> None:
    """After a write's commit: deliver to the agent's webhooks; the answer waits for neither
    the lookup of its webhooks nor the deliveries.

    "thread": the background deliverer looks the agent's webhooks up and sends. "task" with a
    broker: a background thread of this process looks them up and sends their tasks (a burst
    of writes costs one lookup); "task" without one (tests) does both here. What a process
    stopped before sending, or a broker outage, left in the feed, the sweep delivers.
    """
    if settings.MEMORYADMIN["WEBHOOKS"]["DELIVERY"] == "thread":
        background_deliverer.submit_agent(agent_id)
    elif settings.CELERY_TASK_ALWAYS_EAGER:
        _send_webhooks(WEBHOOK_AGENTS, [agent_id])
    else:
        background_webhook_sender.submit(WEBHOOK_AGENTS, agent_id)


def _send_webhooks(_group: str, agent_ids: list[int]) -> None:
    for webhook_id in enabled_webhook_ids(agent_ids):
        try:
            deliver_webhook.delay(webhook_id)
        except BrokerUnavailable as error:
            logger.warning(
                "broker unavailable (%s); webhook %s left for the sweep", error, webhook_id
            )


def enqueue_reembed(surface_key: str, record_id: int) -> None:
    """Ask for a re-embed of a committed write; the write's answer never waits for it.

    "thread" (the default without a broker): the model runs in a background thread of this
    process. "task" with a broker: a background thread of this process sends the task, so
    the request spends no broker round trip either; "task" without one (tests) runs the task
    eagerly, here. Whatever a stopped process or a broker outage left stale, the sweep embeds.
    """
    if settings.MEMORYADMIN["REEMBED_AFTER_WRITE"] == "thread":
        background_reembedder.submit(surface_key, record_id)
    elif settings.CELERY_TASK_ALWAYS_EAGER:
        _send_reembed(surface_key, [record_id])
    else:
        background_sender.submit(surface_key, record_id)


def _send_reembed(surface_key: str, record_ids: list[int]) -> None:
    try:
        reembed_records.delay(surface_key, record_ids)
    except BrokerUnavailable as error:
        logger.warning(
            "broker unavailable (%s); %s %s left stale for the sweep",
            *(error, surface_key, record_ids),
        )


class AfterWriteQueue:
    """Record ids handed to `handle(surface_key, ids)` in a daemon thread of this process.

    Ids submitted while a batch is handled are coalesced into the next one, so a burst of
    writes costs one pass per surface, in batches of REEMBED_BATCH_SIZE. What a process
    that stops had not handled yet stays stale, and the periodic sweep embeds it; at a
    normal exit the process first waits a little for the queue to empty (EXIT_WAIT_SECONDS).
    """

    def __init__(
        self, name: str, handle: Callable[[str, list[int]], None], *, keep_connection: bool = False
    ) -> None:
        self._name = name
        self._handle = handle
        # A queue that reads the database after most writes keeps its connection, as a
        # request thread does (a new PostgreSQL session per burst of writes is a new server
        # process each time); the others close theirs between bursts.
        self._keep_connection = keep_connection
        self._reset()
        # A forked child (a Celery or gunicorn worker) starts with no thread and, should the
        # parent have held the lock at the fork, a lock no one would release.
        os.register_at_fork(after_in_child=self._reset)
        atexit.register(self.drain, EXIT_WAIT_SECONDS, release=True)

    def _reset(self) -> None:
        self._pending: dict[str, set[int]] = {}
        self._condition = threading.Condition()
        self._busy = False
        self._release = False
        self._thread: threading.Thread | None = None

    def submit(self, surface_key: str, record_id: int) -> None:
        with self._condition:
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
                self._condition.notify_all()
            return self._condition.wait_for(
                lambda: not self._pending and not self._busy and not self._release, timeout
            )

    def _run(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: bool(self._pending) or self._release)
                if not self._pending:  # asked to let go of its connection, with nothing to do
                    connection.close()
                    self._release = False
                    self._condition.notify_all()
                    continue
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


def _embed(surface_key: str, record_ids: list[int]) -> None:
    embeddings.reembed(surface_key, record_ids)


# How long a process that exits normally (a shell, a command, a server stopping) waits for
# its queued re-embeds: past it, the sweep embeds what is left.
EXIT_WAIT_SECONDS = 30.0
# The embedded default, which has no broker: an eager Celery task ran the model inside the
# request (half a second for one 512-token window on two cores).
background_reembedder = AfterWriteQueue("memoryadmin-reembed", _embed)
# With a broker: the task is sent from here, off the request (about 1 ms of an edit).
background_sender = AfterWriteQueue("memoryadmin-reembed-sender", _send_reembed)
# With a broker: the agents whose writes committed, their webhooks looked up and their
# delivery tasks sent from here, off the request (the lookup was about 1 ms of an edit).
WEBHOOK_AGENTS = "agents"
background_webhook_sender = AfterWriteQueue(
    "memoryadmin-webhook-sender", _send_webhooks, keep_connection=True
)


class BackgroundDeliverer:
    """Delivers webhooks from a thread of the writing process (the embedded default).

    Without a broker, a Celery task would send inside the request; here a write only adds
    its agent's id to a set, and this thread looks up the agent's webhooks. A retry waits
    for its time in `_timers` (one per webhook); what a stopped process had not sent stays
    in the feed, and the periodic sweep sends it.
    """

    def __init__(self) -> None:
        self._pending: set[int] = set()
        self._agents: set[int] = set()
        self._timers: dict[int, float] = {}
        self._condition = threading.Condition()
        self._busy = False
        self._thread: threading.Thread | None = None

    def submit_agent(self, agent_id: int) -> None:
        """Deliver to the agent's enabled webhooks, looked up in this deliverer's thread."""
        with self._condition:
            self._agents.add(agent_id)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="memoryadmin-webhooks", daemon=True
                )
                self._thread.start()
            self._condition.notify_all()

    def _later(self, webhook_id: int, seconds: float) -> None:
        with self._condition:
            self._timers[webhook_id] = time.monotonic() + seconds
            self._condition.notify_all()

    def _due(self) -> bool:
        now = time.monotonic()
        for webhook_id, due in list(self._timers.items()):
            if due <= now:
                del self._timers[webhook_id]
                self._pending.add(webhook_id)
        return bool(self._pending or self._agents)

    def drain(self, timeout: float) -> bool:
        """Wait until everything submitted, and every retry scheduled, has been tried."""
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
                agents, self._agents = self._agents, set()
                self._busy = True
            try:
                if agents:
                    batch.update(self._webhooks_of(agents))
                for webhook_id in sorted(batch):
                    self._deliver(webhook_id)
            finally:
                connection.close()
                with self._condition:
                    self._busy = False
                    self._condition.notify_all()

    @staticmethod
    def _webhooks_of(agent_ids: set[int]) -> list[int]:
        try:
            return enabled_webhook_ids(agent_ids)
        except Exception:  # the changes stay in the feed: the next write or the sweep sends
            logger.exception("webhooks of agents %s: lookup failed", sorted(agent_ids))
            return []

    def _deliver(self, webhook_id: int) -> None:
        try:
            run = webhooks.webhook_deliver(webhook_id)
        except Exception:  # the changes stay in the feed: the next write or the sweep retries
            logger.exception("webhook %s: delivery failed", webhook_id)
            return
        if run.more:
            self._later(webhook_id, 0)
        elif run.retry_at is not None:
            self._later(webhook_id, max(0.0, (run.retry_at - timezone.now()).total_seconds()))


background_deliverer = BackgroundDeliverer()
