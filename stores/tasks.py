"""Celery tasks. They take ids, re-read the records, and call one service each.

Every task is idempotent and safe to run twice or concurrently: re-embedding stores a
vector only if the text is unchanged, decay computes from the row it writes, and expiry
re-checks each entry under a lock.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
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
    try:
        reembed_records.delay(surface_key, [record_id])
    except BrokerUnavailable as error:
        logger.warning(
            "broker unavailable (%s); %s %s left stale for the sweep", error, surface_key, record_id
        )
