"""Expiry: working-memory entries past `expires_at` are purged, each with a revision.

The purge goes through the edit service's delete, so every purged entry leaves a
`forget` revision holding its last value and state (it can be read in history and
brought back by a revert). Entries are locked and re-checked in each batch, so an entry
whose TTL was extended a moment ago is not purged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from stores.engine.actors import Actor
from stores.engine.deleting import delete
from stores.selectors.working import expired_entries
from stores.surfaces import WORKING

logger = logging.getLogger("memoryadmin.expiry")


@dataclass(frozen=True)
class PurgeOutcome:
    purged: int
    batches: int


def working_purge_expired(
    *,
    actor: Actor | None = None,
    now: datetime | None = None,
    batch_size: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> PurgeOutcome:
    """Delete every working-memory entry that expired by `now`, one transaction per batch.

    Safe to run twice or concurrently: rows another purge holds are skipped (PostgreSQL),
    and an entry already gone is simply not found again.
    """
    actor = actor or Actor.background("expiry")
    now = now or timezone.now()
    batch_size = batch_size or settings.MEMORYADMIN["EXPIRY_BATCH_SIZE"]
    total = expired_entries(now).count()
    purged = batches = 0
    last_id = 0
    while True:
        with transaction.atomic():
            batch = list(
                expired_entries(now)
                .filter(pk__gt=last_id)
                .select_related("agent")
                .select_for_update(skip_locked=True, of=("self",))
                .order_by("pk")[:batch_size]
            )
            if not batch:
                break
            for entry in batch:
                delete(WORKING, entry, actor=actor)
        purged += len(batch)
        batches += 1
        last_id = batch[-1].pk
        if progress is not None:
            progress(purged, total)
    if purged:
        logger.info("purged %d expired working-memory entries in %d batches", purged, batches)
    return PurgeOutcome(purged=purged, batches=batches)
