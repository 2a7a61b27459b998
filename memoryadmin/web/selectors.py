"""Reads for the browser pages: list filtering and dashboard figures.

Every function here runs a fixed number of queries, whatever the number of rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Case, Count, IntegerField, Q, QuerySet, Value, When
from django.db.models.functions import Coalesce, NullIf, Substr

from memoryadmin.web.surfaces import RELEVANCE, SURFACE_UI, SurfaceUI
from stores.models import Agent, Memory, Revision
from stores.selectors.embeddings import stale_filter
from stores.selectors.filters import MemoryFilters, filtered_memories, has_tag, still_true
from stores.selectors.revisions import pending_by_surface, pending_record_ids, records_written_by

# The record views read a past version's text from here, beside the other page reads.
from stores.selectors.search import search_memories


def effective_sort(ui: SurfaceUI, params: dict[str, Any]) -> str:
    """The sort asked for; else relevance for a memory search; else the surface's default."""
    if params.get("sort") in ui.sorts:
        return params["sort"]
    if (params.get("q") or "").strip() and RELEVANCE in ui.sorts:
        return RELEVANCE
    return ui.default_sort


def record_list(ui: SurfaceUI, agent: Agent, params: dict[str, Any]) -> QuerySet:
    """The agent's records of one surface, searched, filtered and sorted by `params`.

    Memories are filtered by `MemoryFilters` exactly as recall filters them for the API and
    the tools; the search adds substring matches to recall's ranking, so partial words and
    ids still find their record.
    """
    query = (params.get("q") or "").strip()
    sort = effective_sort(ui, params)
    ranked: list[int] = []
    shown = ui.filters
    if ui.spec.model is Memory:
        filters = MemoryFilters.from_query(params)
        records = filtered_memories(agent=agent, filters=filters)
        if params.get("invalidated") == "only":
            records = records.exclude(still_true())
        if query and sort == RELEVANCE:
            ranked = _relevant(agent, filters)
    else:
        records = ui.spec.model.objects.filter(agent=agent)
        if "category" in shown and params.get("category"):
            records = records.filter(category__iexact=params["category"].strip())
        if "tag" in shown and params.get("tag"):
            records = records.filter(has_tag(params["tag"].strip()))
        if "namespace" in shown and params.get("namespace"):
            records = records.filter(namespace=params["namespace"].strip())
        if "enabled" in shown and params.get("enabled") in ("yes", "no"):
            records = records.filter(enabled=params["enabled"] == "yes")
        # Every surface lists what one conversation wrote (memories: through MemoryFilters).
        if params.get("source_conversation"):
            written = records_written_by(agent, ui.key, params["source_conversation"])
            records = records.filter(pk__in=written)
    if ui.select_related:
        records = records.select_related(*ui.select_related)
    if ui.spec.embedded:
        # No list shows a vector: 384 floats a row parsed for nothing.
        records = records.defer("embedding")
    if query:
        match = Q()
        for name in ui.search_fields:
            match |= Q(**{f"{name}__icontains": query})
        if query.isdecimal():
            match |= Q(pk=int(query))
        if ranked:
            match |= Q(pk__in=ranked)
        records = records.filter(match)
    if "stale" in shown and params.get("stale"):
        records = records.filter(stale_filter())
    if params.get("pending"):
        records = records.filter(pk__in=pending_record_ids(agent, ui.key))
    if sort == RELEVANCE and ranked:
        rank = Case(
            *(
                When(pk=record_id, then=Value(position))
                for position, record_id in enumerate(ranked)
            ),
            default=Value(len(ranked)),
            output_field=IntegerField(),
        )
        return records.order_by(rank, "-updated_at", "-id")
    if sort == RELEVANCE:
        # Nothing ranked: a Case with no branch is the constant 0, which PostgreSQL reads as
        # ORDER BY position 0 and refuses. Substring matches come newest first.
        return records.order_by("-updated_at", "-id")
    return records.order_by(*ui.sorts.get(sort, ui.sorts[ui.default_sort]))


def _relevant(agent: Agent, filters: MemoryFilters) -> list[int]:
    """Ids recall finds for the search, best first: the memories relevant enough to pass
    its cut-off, as the REST recall and the recall tool list and count them."""
    return [
        hit.record.pk
        for hit in search_memories(
            agent=agent, filters=filters, limit=settings.MEMORYADMIN["SEARCH"]["CANDIDATES"]
        )
    ]


def memory_categories(agent: Agent) -> list[str]:
    """The agent's categories, sorted: the list page's filter menu."""
    if connection.vendor == "postgresql":
        return _postgres_categories(agent)
    return list(
        Memory.objects.filter(agent=agent)
        .order_by("category")
        .values_list("category", flat=True)
        .distinct()
    )


def _postgres_categories(agent: Agent) -> list[str]:
    # A loose index scan: one probe of the (agent, category) index per category, where
    # DISTINCT read every memory of the agent (66 ms at 100,000 rows until a vacuum had
    # made the index alone enough; 1 ms this way).
    table = Memory._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH RECURSIVE categories(category) AS (
                (SELECT category FROM {table} WHERE agent_id = %s ORDER BY category LIMIT 1)
                UNION ALL
                SELECT (SELECT m.category FROM {table} m
                        WHERE m.agent_id = %s AND m.category > categories.category
                        ORDER BY m.category LIMIT 1)
                FROM categories WHERE categories.category IS NOT NULL
            )
            SELECT category FROM categories WHERE category IS NOT NULL
            """,
            [agent.pk, agent.pk],
        )
        return [row[0] for row in cursor.fetchall()]


@dataclass(frozen=True)
class SurfaceCount:
    ui: SurfaceUI
    total: int
    stale: int | None
    pending: int


def dashboard_counts(agent: Agent) -> list[SurfaceCount]:
    pending = pending_by_surface(agent)
    counts = []
    for ui in SURFACE_UI.values():
        records = ui.spec.model.objects.filter(agent=agent)
        if ui.spec.embedded:
            figures = records.aggregate(total=Count("id"), stale=Count("id", filter=stale_filter()))
            counts.append(
                SurfaceCount(ui, figures["total"], figures["stale"], pending.get(ui.key, 0))
            )
        else:
            counts.append(SurfaceCount(ui, records.count(), None, pending.get(ui.key, 0)))
    return counts


def memory_store_counts(agent: Agent) -> list[tuple[str, str, int, int]]:
    """(store, label, live, invalidated) for each store of long-term memory."""
    rows = {
        row["store"]: row
        for row in Memory.objects.filter(agent=agent)
        .values("store")
        .annotate(
            total=Count("id"), invalidated=Count("id", filter=Q(invalidated_at__isnull=False))
        )
        .order_by()
    }
    result = []
    for store, label in Memory.Store.choices:
        row = rows.get(store, {"total": 0, "invalidated": 0})
        result.append((store, label, row["total"] - row["invalidated"], row["invalidated"]))
    return result


# How much of a revision's text a change row shows (its diff is loaded when opened).
SNIPPET_CHARS = 160


def with_snippets(revisions: QuerySet[Revision]) -> QuerySet[Revision]:
    """`revisions`, each with `snippet`: the start of its text after the change (a forget's,
    before it), cut in the query, so a list of changes never reads whole texts."""
    text = Coalesce(NullIf("after_text", Value("")), "before_text")
    return revisions.annotate(snippet=Substr(text, 1, SNIPPET_CHARS))
