"""Celery tasks. They take ids, re-read the records, and call one service each."""

from __future__ import annotations

import logging

from celery import shared_task
from kombu.exceptions import OperationalError as BrokerUnavailable

from stores.services import embeddings

logger = logging.getLogger("memoryadmin.tasks")


@shared_task(
    bind=True,
    autoretry_for=(ConnectionError, TimeoutError),
    retry_backoff=True,
    max_retries=5,
)
def reembed_records(self, surface_key: str, record_ids: list[int]) -> dict[str, int]:
    outcome = embeddings.reembed(surface_key, record_ids)
    return {
        "stored": outcome.stored,
        "skipped_fresh": outcome.skipped_fresh,
        "skipped_changed": outcome.skipped_changed,
    }


def enqueue_reembed(surface_key: str, record_id: int) -> None:
    """Ask for a re-embed; if the broker is down the edit still stands and the sweep catches up."""
    try:
        reembed_records.delay(surface_key, [record_id])
    except BrokerUnavailable:
        logger.warning("broker unavailable; %s %s left stale for the sweep", surface_key, record_id)
