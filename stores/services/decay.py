"""Importance decay: one set-based UPDATE per id range, computed from each row at write time.

    importance <- min(importance, max(importance_floor, importance * 0.5 ** (elapsed / half_life)))
    elapsed     = now - coalesce(decayed_at, created_at)

The new value is an expression of the row as the database holds it when it writes it,
so an importance someone sets while a pass runs is never overwritten with a value read
earlier (and setting importance re-anchors `decayed_at`, so it is not decayed for the
time before it was set). Decay is bookkeeping: no `version` bump, no revision, no
`updated_at` change, so a page or an agent holding a version from before the pass can
still edit. Each agent whose memories a pass lowered gets one change in its feed, which
clients read only when they ask for it (`include=decay`). Pinned memories keep their
importance but their anchor moves, so unpinning one later does not make it pay for the
time it was pinned.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import NotSupportedError, connection, transaction
from django.db.models import (
    Case,
    Count,
    F,
    FloatField,
    Func,
    Max,
    Min,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Greatest, Least, Power
from django.utils import timezone

from stores.dbops import lock_feed
from stores.models import Change, DecayPass, Memory

logger = logging.getLogger("memoryadmin.decay")

SECONDS_PER_DAY = 86400.0
# 0.5 ** 64 is about 5e-20: as good as zero for an importance, and far from float underflow
# (PostgreSQL raises an error on underflow rather than returning 0).
MAX_HALF_LIVES = 64.0


class SecondsSince(Func):
    """Seconds from a datetime expression to a fixed moment, in the database's own terms."""

    output_field = FloatField()

    def __init__(self, moment, anchor) -> None:
        super().__init__(Value(moment), anchor)

    def _operands(self, compiler, connection) -> tuple[str, str, list]:
        (moment, moment_params), (anchor, anchor_params) = (
            compiler.compile(expression) for expression in self.get_source_expressions()
        )
        return moment, anchor, [*moment_params, *anchor_params]

    def as_postgresql(self, compiler, connection, **extra):
        moment, anchor, params = self._operands(compiler, connection)
        return f"EXTRACT(EPOCH FROM ({moment} - {anchor}))::float8", params

    def as_sqlite(self, compiler, connection, **extra):
        # Django stores datetimes on SQLite as ISO text in UTC, which julianday() reads.
        moment, anchor, params = self._operands(compiler, connection)
        return f"((julianday({moment}) - julianday({anchor})) * 86400.0)", params

    def as_sql(self, compiler, connection, **extra):
        raise NotSupportedError(f"Decay supports PostgreSQL and SQLite, not {connection.vendor}.")


@dataclass(frozen=True)
class DecayPlan:
    """What a pass would touch, without touching it (for --dry-run)."""

    rows_to_lower: int
    pinned_rows: int
    half_life_days: float


def decay_candidates() -> Q:
    # Rows at (or under) their floor cannot go lower; pinned rows only move their anchor.
    return Q(pinned=True) | Q(importance__gt=F("importance_floor"))


def decayed_importance(now, half_life_days: float):
    elapsed = Greatest(SecondsSince(now, Coalesce(F("decayed_at"), F("created_at"))), Value(0.0))
    half_lives = Least(elapsed / Value(half_life_days * SECONDS_PER_DAY), Value(MAX_HALF_LIVES))
    lowered = Greatest(F("importance_floor"), F("importance") * Power(Value(0.5), half_lives))
    # Never raise: an importance set under its floor stays where it was put.
    return Case(When(pinned=True, then=F("importance")), default=Least(F("importance"), lowered))


def decay_plan(*, half_life_days: float | None = None) -> DecayPlan:
    half_life_days = half_life_days or settings.MEMORYADMIN["DECAY"]["HALF_LIFE_DAYS"]
    return DecayPlan(
        rows_to_lower=Memory.objects.filter(
            pinned=False, importance__gt=F("importance_floor")
        ).count(),
        pinned_rows=Memory.objects.filter(pinned=True).count(),
        half_life_days=half_life_days,
    )


def decay_importance(
    *,
    half_life_days: float | None = None,
    batch_size: int | None = None,
    triggered_by: str = "task:decay",
    progress: Callable[[int, int], None] | None = None,
) -> DecayPass:
    """Run one decay pass over every memory, in id-range batches, and log it as a DecayPass.

    Each batch is its own short statement (and transaction), so a pass over millions of
    rows never holds locks for long. Safe to run twice or concurrently: a second pass
    computes from the anchor the first one wrote. `progress(done_ids, total_ids)` is
    called after each batch.
    """
    config = settings.MEMORYADMIN["DECAY"]
    half_life_days = float(half_life_days or config["HALF_LIFE_DAYS"])
    if half_life_days <= 0:
        raise ValueError("The decay half-life must be a positive number of days.")
    batch_size = int(batch_size or config["BATCH_SIZE"])
    started = time.perf_counter()
    log = DecayPass.objects.create(half_life_days=half_life_days, triggered_by=triggered_by)
    now = timezone.now()
    new_importance = decayed_importance(now, half_life_days)
    bounds = Memory.objects.aggregate(low=Min("pk"), high=Max("pk"))
    touched = batches = 0
    lowered: Counter[int] = Counter()
    try:
        if bounds["low"] is not None:
            low, high = bounds["low"], bounds["high"]
            for start in range(low, high + 1, batch_size):
                batch = Memory.objects.filter(pk__gte=start, pk__lt=start + batch_size)
                touched += batch.filter(decay_candidates()).update(
                    importance=new_importance, decayed_at=now
                )
                lowered.update(_lowered_by_agent(batch, now))
                batches += 1
                if progress is not None:
                    progress(min(start + batch_size, high + 1) - low, high + 1 - low)
    except Exception as error:
        log.error = f"{type(error).__name__}: {error}"
        raise
    finally:
        log.finished_at = timezone.now()
        log.duration_seconds = time.perf_counter() - started
        log.rows_touched = touched
        log.batches = batches
        log.save(
            update_fields=["finished_at", "duration_seconds", "rows_touched", "batches", "error"]
        )
        logger.info(
            "decay pass: %d rows in %d batches, %.2fs, half-life %.1f days",
            touched,
            batches,
            log.duration_seconds,
            half_life_days,
        )
    if lowered:
        _announce(log, lowered)
    return log


def _lowered_by_agent(batch: QuerySet[Memory], now: datetime) -> dict[int, int]:
    """How many memories of each agent the pass lowered in `batch` (pinned ones kept theirs)."""
    rows = (
        batch.filter(decayed_at=now, pinned=False)
        .values_list("agent_id")
        .annotate(count=Count("id"))
        .values_list("agent_id", "count")
    )
    return dict(rows)


def _announce(run: DecayPass, lowered: Counter[int]) -> None:
    """One change per agent in its feed, for clients that asked for decay (include=decay)."""
    with transaction.atomic():
        lock_feed(connection, list(lowered))
        Change.objects.bulk_create(
            Change(agent_id=agent_id, kind=Change.Kind.DECAY, decay_pass=run, memories=count)
            for agent_id, count in sorted(lowered.items())
        )
