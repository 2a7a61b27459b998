"""Celery tasks. They take ids, re-read the records, and call one service each.

Every task is idempotent and safe to run twice or concurrently: re-embedding stores a
vector only if the text is unchanged, decay computes from the row it writes, and expiry
re-checks each entry under a lock.
"""

from __future__ import annotations

import logging
import threading

from celery import shared_task
from django.conf import settings
from django.db import connection
from kombu.exceptions import OperationalError as BrokerUnavailable

from stores.services import decay, embeddings, expiry

logger = logging.getLogger("memoryadmin.tasks")


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


def enqueue_reembed(surface_key: str, record_id: int) -> None:
    """Ask for a re-embed; if the broker is down the edit still stands and the sweep catches up."""
    if settings.MEMORYADMIN["REEMBED_AFTER_WRITE"] == "thread":
        background_reembedder.submit(surface_key, record_id)
        return
    try:
        reembed_records.delay(surface_key, [record_id])
    except BrokerUnavailable as error:
        logger.warning(
            "broker unavailable (%s); %s %s left stale for the sweep", error, surface_key, record_id
        )


class BackgroundReembedder:
    """Re-embeds after a write in a thread of the writing process, so no answer waits for it.

    For the embedded default, which has no broker: there, an eager Celery task ran the
    model inside the request (half a second for one 512-token window on two cores). Ids
    submitted while a batch runs are coalesced into the next one. What a stopped process
    had not embedded yet stays stale and the periodic sweep embeds it.
    """

    def __init__(self) -> None:
        self._pending: dict[str, set[int]] = {}
        self._condition = threading.Condition()
        self._busy = False
        self._thread: threading.Thread | None = None

    def submit(self, surface_key: str, record_id: int) -> None:
        with self._condition:
            self._pending.setdefault(surface_key, set()).add(record_id)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="memoryadmin-reembed", daemon=True
                )
                self._thread.start()
            self._condition.notify_all()

    def drain(self, timeout: float) -> bool:
        """Wait until everything submitted is embedded (or failed); False on timeout."""
        with self._condition:
            return self._condition.wait_for(lambda: not self._pending and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: bool(self._pending))
                batch, self._pending = self._pending, {}
                self._busy = True
            try:
                for surface_key, record_ids in batch.items():
                    self._embed(surface_key, sorted(record_ids))
            finally:
                # This thread's connection is its own: close it rather than keep a SQLite
                # handle (or a PostgreSQL session) open between bursts of writes.
                connection.close()
                with self._condition:
                    self._busy = False
                    self._condition.notify_all()

    @staticmethod
    def _embed(surface_key: str, record_ids: list[int]) -> None:
        batch_size = settings.MEMORYADMIN["REEMBED_BATCH_SIZE"]
        for start in range(0, len(record_ids), batch_size):
            try:
                embeddings.reembed(surface_key, record_ids[start : start + batch_size])
            except Exception:  # the vector stays stale: the sweep retries, nothing is lost
                logger.exception("background re-embed of %s %s failed", surface_key, record_ids)


background_reembedder = BackgroundReembedder()
