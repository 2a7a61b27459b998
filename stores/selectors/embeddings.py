"""Which vectors are stale, per surface: counts for dashboards and lists to act on.

A vector is stale when it is missing, was computed from another text (`embedding_hash`
differs from `text_hash`), or by another model than the configured one. Search never
ranks by a stale vector; these selectors let the UI, the API and maintainers see them.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import BooleanField, Count, ExpressionWrapper, F, Func, Q, QuerySet

from stores.embeddings import get_backend
from stores.models import Agent, EmbeddedRecord
from stores.surfaces import SURFACES


@dataclass(frozen=True)
class EmbeddingStatus:
    """How fresh one surface's vectors are."""

    surface: str
    total: int
    stale: int
    #: Records that have no vector at all (a subset of `stale`).
    missing: int
    model_name: str

    @property
    def fresh(self) -> int:
        return self.total - self.stale

    @property
    def outdated(self) -> int:
        """Stale records that do have a vector, computed from older text or another model."""
        return self.stale - self.missing


def embedded_surfaces() -> list[str]:
    return [key for key, spec in SURFACES.items() if spec.embedded]


class _IsTrue(Func):
    template = "(%(expressions)s) IS TRUE"
    output_field = BooleanField()


def fresh_filter(model_name: str | None = None) -> Q:
    """Records whose vector was computed by `model_name` from their current text."""
    model_name = model_name or get_backend().model_name
    # Written `(embedding_hash = text_hash) IS TRUE`, the expression PostgreSQL keeps
    # statistics on (stores/dbops.py): as a plain comparison of two columns the planner
    # guessed that 0.5% of the rows are fresh, and read a 20,000-memory agent exactly
    # (130 ms) instead of through the vector index.
    same_text = ExpressionWrapper(Q(embedding_hash=F("text_hash")), output_field=BooleanField())
    return (
        Q(embedding__isnull=False)
        & ~Q(embedding_hash="")
        & Q(_IsTrue(same_text))
        & Q(embedding_model=model_name)
    )


def stale_filter(model_name: str | None = None) -> Q:
    """Records whose vector is missing, from another model, or from another text."""
    model_name = model_name or get_backend().model_name
    return (
        Q(embedding__isnull=True)
        | Q(embedding_hash="")
        | ~Q(embedding_hash=F("text_hash"))
        | ~Q(embedding_model=model_name)
    )


def _records(surface_key: str, agent: Agent | None) -> QuerySet[EmbeddedRecord]:
    spec = SURFACES[surface_key]
    if not spec.embedded:
        raise ValueError(f"The {surface_key} surface is not embedded.")
    records = spec.model.objects.all()
    return records if agent is None else records.filter(agent=agent)


def embedding_status(*, agent: Agent | None = None) -> list[EmbeddingStatus]:
    """One aggregate query per embedded surface (optionally for one agent)."""
    model_name = get_backend().model_name
    statuses = []
    for key in embedded_surfaces():
        counts = _records(key, agent).aggregate(
            total=Count("pk"),
            stale=Count("pk", filter=stale_filter(model_name)),
            missing=Count("pk", filter=Q(embedding__isnull=True)),
        )
        statuses.append(EmbeddingStatus(surface=key, model_name=model_name, **counts))
    return statuses


def stale_records(surface_key: str, *, agent: Agent | None = None) -> QuerySet[EmbeddedRecord]:
    """Stale records of one surface, oldest id first, without loading their vectors."""
    return _records(surface_key, agent).filter(stale_filter()).defer("embedding").order_by("pk")
