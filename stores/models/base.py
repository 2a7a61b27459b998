"""What every surface record has: a stable id, an optimistic-lock version, timestamps."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from django.db import models
from django.db.models import Q
from django.utils import timezone
from pgvector.django import VectorField

if TYPE_CHECKING:
    from stores.models.agents import Agent

EMBEDDING_DIMENSIONS = 384


def text_fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class VersionedRecord(models.Model):
    """A surface record. Only the edit service writes it; `version` counts its revisions."""

    # An id the record had in another store (a GUID, a string, a number); resolves like the id.
    # NULL, not "", for "none": the per-agent uniqueness constraint applies to real aliases only.
    alias = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    version = models.PositiveIntegerField(default=1, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    if TYPE_CHECKING:
        # Every concrete surface model declares its agent's foreign key itself; said here for
        # the type checker, since the engine is written against this base, whatever it writes.
        agent: Agent
        agent_id: int

    class Meta:
        abstract = True


def unique_alias(surface: str) -> models.UniqueConstraint:
    """What keeps two of an agent's records of `surface` from sharing an alias (records
    without one are free); every concrete record's Meta lists it."""
    return models.UniqueConstraint(
        fields=["agent", "alias"],
        condition=Q(alias__isnull=False),
        name=f"{surface}_unique_alias",
    )


class EmbeddedRecord(VersionedRecord):
    """A record whose text is embedded for recall.

    `text_hash` fingerprints the text that should be embedded now; `embedding_hash`
    the text the stored vector was computed from. They differ exactly when the vector
    is stale, so staleness is a plain indexed comparison.
    """

    text_hash = models.CharField(max_length=64, editable=False, default="")
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True, editable=False)
    embedding_model = models.CharField(max_length=200, blank=True, editable=False)
    embedding_hash = models.CharField(max_length=64, blank=True, editable=False)

    class Meta:
        abstract = True

    def embedding_text(self) -> str:
        raise NotImplementedError
