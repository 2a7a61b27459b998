"""Keeping vectors fresh: a vector is stored only if the text it came from is still current.

This is bookkeeping, not an edit: it never bumps `version` and writes no revision.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db.models import QuerySet

from stores.embeddings import get_backend
from stores.models import Agent, EmbeddedRecord, text_fingerprint
from stores.selectors.embeddings import embedded_surfaces, stale_filter
from stores.surfaces import SURFACES

logger = logging.getLogger("memoryadmin.embeddings")

SWEEP_BATCH_SIZE = 64


@dataclass(frozen=True)
class ReembedOutcome:
    stored: int = 0
    skipped_fresh: int = 0
    skipped_changed: int = 0

    def __add__(self, other: ReembedOutcome) -> ReembedOutcome:
        return ReembedOutcome(
            stored=self.stored + other.stored,
            skipped_fresh=self.skipped_fresh + other.skipped_fresh,
            skipped_changed=self.skipped_changed + other.skipped_changed,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "stored": self.stored,
            "skipped_fresh": self.skipped_fresh,
            "skipped_changed": self.skipped_changed,
        }


def reembed(surface_key: str, record_ids: Iterable[int], *, force: bool = False) -> ReembedOutcome:
    """Embed the current text of these records and store each vector if that text is unchanged.

    Records whose vector is already fresh are skipped unless `force` (a maintainer who
    fixed a backend without renaming its model). Ids of deleted records are ignored.
    """
    spec = SURFACES[surface_key]
    backend = get_backend()
    ids = list(record_ids)
    records = spec.model.objects.filter(pk__in=ids).defer("embedding")
    if not force:
        records = records.filter(stale_filter(backend.model_name))
    pending = list(records.order_by("pk"))
    skipped_fresh = len(ids) - len(pending) if not force else 0
    if not pending:
        return ReembedOutcome(skipped_fresh=max(skipped_fresh, 0))
    texts = [record.embedding_text() for record in pending]
    vectors = backend.embed_documents(texts)
    stored = changed = 0
    for record, text, vector in zip(pending, texts, vectors, strict=True):
        fingerprint = text_fingerprint(text)
        # Compare-and-swap on the text: an edit committed meanwhile wins, and its own
        # re-embed stores the vector for the new text.
        written = spec.model.objects.filter(pk=record.pk, text_hash=fingerprint).update(
            embedding=vector, embedding_hash=fingerprint, embedding_model=backend.model_name
        )
        if written:
            stored += 1
        else:
            changed += 1
    if changed:
        logger.info(
            "re-embed %s: %d records changed while embedding; left for their own job",
            surface_key,
            changed,
        )
    return ReembedOutcome(
        stored=stored, skipped_fresh=max(skipped_fresh, 0), skipped_changed=changed
    )


def _candidates(
    surface_key: str, *, agent: Agent | None, include_fresh: bool
) -> QuerySet[EmbeddedRecord]:
    records = SURFACES[surface_key].model.objects.all()
    if agent is not None:
        records = records.filter(agent=agent)
    if not include_fresh:
        records = records.filter(stale_filter())
    return records


def reembed_sweep(
    *,
    surfaces: Iterable[str] | None = None,
    agent: Agent | None = None,
    include_fresh: bool = False,
    batch_size: int = SWEEP_BATCH_SIZE,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, ReembedOutcome]:
    """Re-embed every stale record (or every record), in batches walked by id.

    Walking by id (keyset) makes each batch a short query and guarantees the sweep ends
    even while agents keep writing; a record edited during the sweep is left to the job
    its edit enqueued. Safe to run twice or concurrently: every store is a compare-and-swap.
    `progress(surface, done, total)` is called after each batch.
    """
    outcomes: dict[str, ReembedOutcome] = {}
    for key in surfaces or embedded_surfaces():
        candidates = _candidates(key, agent=agent, include_fresh=include_fresh)
        total = candidates.count()
        outcome = ReembedOutcome()
        done = 0
        last_id = 0
        while True:
            ids = list(
                candidates.filter(pk__gt=last_id)
                .order_by("pk")
                .values_list("pk", flat=True)[:batch_size]
            )
            if not ids:
                break
            outcome = outcome + reembed(key, ids, force=include_fresh)
            last_id = ids[-1]
            done += len(ids)
            if progress is not None:
                progress(key, done, total)
        outcomes[key] = outcome
    return outcomes
