"""Keeping vectors fresh: a vector is stored only if the text it came from is still current."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import F, Q, QuerySet

from stores.embeddings import get_backend
from stores.models import EmbeddedRecord, text_fingerprint
from stores.services.surfaces import SURFACES

logger = logging.getLogger("memoryadmin.embeddings")


@dataclass(frozen=True)
class ReembedOutcome:
    stored: int
    skipped_fresh: int
    skipped_changed: int


def embedded_surfaces() -> list[str]:
    return [key for key, spec in SURFACES.items() if spec.embedded]


def stale_filter(model_name: str) -> Q:
    """Records whose vector is missing, from another model, or from another text."""
    return Q(embedding_hash="") | ~Q(embedding_hash=F("text_hash")) | ~Q(embedding_model=model_name)


def stale_records(surface_key: str) -> QuerySet[EmbeddedRecord]:
    model = SURFACES[surface_key].model
    return model.objects.filter(stale_filter(get_backend().model_name))


def reembed(surface_key: str, record_ids: Iterable[int]) -> ReembedOutcome:
    """Embed the current text of these records and store each vector if that text is unchanged."""
    spec = SURFACES[surface_key]
    backend = get_backend()
    records = list(spec.model.objects.filter(pk__in=list(record_ids)).order_by("pk"))
    pending = [
        record
        for record in records
        if record.embedding_hash != record.text_hash
        or record.embedding_model != backend.model_name
        or record.embedding is None
    ]
    if not pending:
        return ReembedOutcome(stored=0, skipped_fresh=len(records), skipped_changed=0)
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
        stored=stored, skipped_fresh=len(records) - len(pending), skipped_changed=changed
    )
