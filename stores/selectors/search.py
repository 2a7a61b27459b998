"""Recall: hybrid search over long-term memory, lexical and vector ranks fused.

Two candidate lists are drawn from the same filtered memories:

- lexical: PostgreSQL full-text search (`to_tsvector('english', content)`, GIN index,
  `ts_rank`), or on SQLite an FTS5 index with BM25; any query word may match.
- vector: cosine similarity between the query's embedding and each memory's vector
  (pgvector HNSW index on PostgreSQL; an exact numpy scan on SQLite).

They are fused by reciprocal rank fusion, score = sum over lists of 1 / (k + rank), which
needs no calibration between BM25/ts_rank and cosine scales. Only fresh vectors take part
in the vector side: a record whose vector was computed from an older text, or by another
model, is left out of it (never ranked as if fresh) and can still be found lexically;
its hit says `vector_fresh=False`. If the embedding service cannot answer, search falls
back to the lexical side alone rather than failing.

`recall` is what the doors (REST, tools, MCP) call: the same ranking as one page of
previews with a total, and with an empty query the filtered memories newest first.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVectorField
from django.db import connection, transaction
from django.db.models import Func, QuerySet
from pgvector.django import CosineDistance

from stores.dbops import MEMORY_SEARCH_DOCUMENT, MEMORY_TEXT_SEARCH_CONFIG, SQLITE_MEMORY_FTS
from stores.embeddings import EmbeddingError, EmbeddingUnavailable, get_backend
from stores.errors import Invalid
from stores.models import Agent, Memory
from stores.selectors.embeddings import fresh_filter
from stores.selectors.filters import MemoryFilters, filtered_memories, max_query_length
from stores.selectors.records import preview

logger = logging.getLogger("memoryadmin.search")

_WORD = re.compile(r"\w+", re.UNICODE)
# The largest hnsw.ef_search pgvector accepts; a larger value is an error, not a wider search.
HNSW_MAX_EF_SEARCH = 1000


def _check_query(query: str) -> None:
    # Each word is a lexical term and the whole query is embedded: the cost of a search
    # grows with its query, so a longer one is refused here, whichever door it came by.
    limit = max_query_length()
    if len(query or "") > limit:
        raise Invalid(
            f"The search query is {len(query)} characters long; the limit is {limit}. "
            "Search with a few words or a sentence."
        )


@dataclass(frozen=True)
class SearchHit:
    """One result: the memory, its fused score, and what each side thought of it.

    `lexical_score` is the text-search relevance (ts_rank on PostgreSQL, -BM25 on SQLite;
    0.0 when no query word matched); `vector_score` the cosine similarity, or None when
    the record has no fresh vector or was not among the nearest. The ranks (1-based)
    explain the fusion.
    """

    record: Memory
    score: float
    lexical_score: float
    vector_score: float | None
    lexical_rank: int | None = None
    vector_rank: int | None = None
    vector_fresh: bool = True

    def explain(self) -> dict[str, object]:
        return {
            "score": self.score,
            "lexical_rank": self.lexical_rank,
            "lexical_score": self.lexical_score,
            "vector_rank": self.vector_rank,
            "vector_score": self.vector_score,
            "vector_fresh": self.vector_fresh,
        }


@dataclass(frozen=True)
class SimilarMemory:
    record: Memory
    similarity: float


class MemoryDocument(Func):
    """The memory's text-search document: its stored column, which the GIN index covers
    (`to_tsvector('english', content)`, kept by a trigger: stores/dbops.py)."""

    template = f'"{Memory._meta.db_table}"."{MEMORY_SEARCH_DOCUMENT}"'
    arity = 0
    output_field = SearchVectorField()


def search_memories(
    *, agent: Agent, filters: MemoryFilters, limit: int = 20, offset: int = 0
) -> list[SearchHit]:
    """Memories of `agent` passing `filters`, best first by fused lexical + vector rank of
    `filters.query`.

    An empty query (no words) finds nothing. The caller checks who may see `agent`.
    A query longer than `max_query_length()` is refused (Invalid).
    """
    _check_query(filters.query)
    return _ranked(agent=agent, filters=filters, limit=limit, offset=offset)[1]


@dataclass(frozen=True)
class RecallHit:
    """A recall result as agents see it: never the full text, only a preview of it."""

    memory: Memory
    score: float | None

    def as_dict(self) -> dict[str, Any]:
        memory = self.memory
        return {
            "id": memory.pk,
            "alias": memory.alias,
            "version": memory.version,
            "store": memory.store,
            "bank": memory.bank,
            "category": memory.category,
            "tags": list(memory.tags),
            "importance": memory.importance,
            "score": self.score,
            **preview(memory.content),
            "invalidated_at": memory.invalidated_at.isoformat() if memory.invalidated_at else None,
            "updated_at": memory.updated_at.isoformat(),
        }


@dataclass(frozen=True)
class RecallPage:
    total: int
    hits: list[RecallHit] = field(default_factory=list)


def recall(*, agent: Agent, filters: MemoryFilters, limit: int = 20, offset: int = 0) -> RecallPage:
    """One page of recall results for the doors.

    - `filters.query`: free text, ranked as `search_memories` ranks it; `score` is the
      fused score scaled so the best possible (first on both sides) is 1. With no words in
      it, every memory passing the filters, newest first, with `score` None.
    - `RecallPage.total`: how many ranked results there are (for a query, among the
      candidates both sides brought; otherwise every memory passing the filters).

    A query longer than `max_query_length()` is refused (Invalid).
    """
    _check_query(filters.query)
    if not _WORD.findall(filters.query):
        memories = (
            filtered_memories(agent=agent, filters=filters)
            .select_related("subject")
            .defer("embedding")
            .order_by("-updated_at", "-id")
        )
        return RecallPage(
            total=memories.count(),
            hits=[RecallHit(memory, None) for memory in memories[offset : offset + limit]],
        )
    total, hits = _ranked(agent=agent, filters=filters, limit=limit, offset=offset)
    best = 2.0 / (settings.MEMORYADMIN["SEARCH"]["RRF_K"] + 1)
    return RecallPage(
        total=total,
        hits=[RecallHit(hit.record, round(min(1.0, hit.score / best), 4)) for hit in hits],
    )


def _ranked(
    *, agent: Agent, filters: MemoryFilters, limit: int, offset: int
) -> tuple[int, list[SearchHit]]:
    """(how many fused results there are, the page of them) for `filters.query`."""
    query = filters.query
    words = _WORD.findall(query)
    if not words or limit <= 0:
        return 0, []
    memories = filtered_memories(agent=agent, filters=filters)
    config = settings.MEMORYADMIN["SEARCH"]
    wanted = offset + limit
    lexical = _lexical_candidates(memories, words, max(config["CANDIDATES"], wanted))
    vector = _vector_candidates(memories, query, max(config["VECTOR_CANDIDATES"], wanted))
    everything = _fuse(lexical, vector, k=config["RRF_K"])
    fused = everything[offset : offset + limit]
    records = (
        Memory.objects.select_related("subject")
        .defer("embedding")
        .in_bulk([record_id for record_id, _ in fused])
    )
    model_name = get_backend().model_name
    lexical_by_id = {record_id: (rank, score) for rank, (record_id, score) in enumerate(lexical, 1)}
    vector_by_id = {record_id: (rank, score) for rank, (record_id, score) in enumerate(vector, 1)}
    hits = []
    for record_id, score in fused:
        record = records.get(record_id)
        if record is None:  # forgotten between the two queries
            continue
        lexical_rank, lexical_score = lexical_by_id.get(record_id, (None, 0.0))
        vector_rank, vector_score = vector_by_id.get(record_id, (None, None))
        hits.append(
            SearchHit(
                record=record,
                score=score,
                lexical_score=lexical_score,
                vector_score=vector_score,
                lexical_rank=lexical_rank,
                vector_rank=vector_rank,
                vector_fresh=bool(record.embedding_hash)
                and record.embedding_hash == record.text_hash
                and record.embedding_model == model_name,
            )
        )
    return len(everything), hits


# --- lexical ---------------------------------------------------------------------------


def _lexical_candidates(
    memories: QuerySet[Memory], words: list[str], depth: int
) -> list[tuple[int, float]]:
    if connection.vendor == "postgresql":
        return _postgres_lexical(memories, words, depth)
    return _sqlite_lexical(memories, words, depth)


def _postgres_lexical(
    memories: QuerySet[Memory], words: list[str], depth: int
) -> list[tuple[int, float]]:
    # Any word may match (OR); ts_rank rewards documents matching more and rarer words.
    text_query = SearchQuery(
        " OR ".join(words), config=MEMORY_TEXT_SEARCH_CONFIG, search_type="websearch"
    )
    document = MemoryDocument()
    rows = (
        memories.annotate(document=document)
        .filter(document=text_query)
        .annotate(rank=SearchRank(document, text_query))
        .order_by("-rank", "pk")
        .values_list("pk", "rank")[:depth]
    )
    return [(record_id, float(rank)) for record_id, rank in rows]


def _sqlite_lexical(
    memories: QuerySet[Memory], words: list[str], depth: int
) -> list[tuple[int, float]]:
    # Each word quoted: FTS5 then treats it as a plain term, never as query syntax.
    match = " OR ".join(f'"{word}"' for word in words)
    allowed_sql, allowed_params = memories.values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT rowid, -bm25({SQLITE_MEMORY_FTS}) FROM {SQLITE_MEMORY_FTS} "
            f"WHERE {SQLITE_MEMORY_FTS} MATCH %s AND rowid IN ({allowed_sql}) "
            f"ORDER BY bm25({SQLITE_MEMORY_FTS}), rowid LIMIT %s",
            [match, *allowed_params, depth],
        )
        return [(record_id, float(score)) for record_id, score in cursor.fetchall()]


# --- vector ----------------------------------------------------------------------------


def _query_vector(query: str) -> list[float] | None:
    try:
        return get_backend().embed_query(query)
    except (EmbeddingUnavailable, EmbeddingError) as error:
        logger.warning("search without vectors: %s", error)
        return None


def _vector_candidates(
    memories: QuerySet[Memory], query: str, depth: int
) -> list[tuple[int, float]]:
    query_vector = _query_vector(query)
    if query_vector is None:
        return []
    floor = settings.MEMORYADMIN["SEARCH"]["VECTOR_MIN_SIMILARITY"]
    neighbours = nearest(memories.filter(fresh_filter()), query_vector, depth)
    return [(record_id, similarity) for record_id, similarity in neighbours if similarity > floor]


def nearest(
    memories: QuerySet[Memory], query_vector: list[float], depth: int
) -> list[tuple[int, float]]:
    """(id, cosine similarity) of the `depth` memories nearest the vector, nearest first."""
    if connection.vendor == "postgresql":
        with transaction.atomic(), connection.cursor() as cursor:
            # Iterative scans let the HNSW index keep searching when filters (agent, fresh,
            # category, ...) reject the first neighbours it finds (pgvector >= 0.8), and
            # past the breadth: a deep page needs no breadth beyond pgvector's maximum.
            breadth = max(settings.MEMORYADMIN["SEARCH"]["HNSW_EF_SEARCH"], depth)
            cursor.execute(
                "SELECT set_config('hnsw.ef_search', %s, true), "
                "set_config('hnsw.iterative_scan', 'relaxed_order', true)",
                [str(min(breadth, HNSW_MAX_EF_SEARCH))],
            )
            rows = list(
                memories.annotate(distance=CosineDistance("embedding", query_vector))
                .order_by("distance")
                .values_list("pk", "distance")[:depth]
            )
        # relaxed_order may return neighbours slightly out of order: put them back in order.
        rows.sort(key=lambda row: (row[1], row[0]))
        return [(record_id, 1.0 - float(distance)) for record_id, distance in rows]
    rows = list(memories.values_list("pk", "embedding"))
    if not rows:
        return []
    ids = np.fromiter((record_id for record_id, _ in rows), dtype=np.int64, count=len(rows))
    matrix = np.vstack([np.asarray(vector, dtype=np.float32) for _, vector in rows])
    target = np.asarray(query_vector, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(target) or 1.0)
    similarities = matrix @ target / np.where(norms == 0, 1.0, norms)
    order = np.lexsort((ids, -similarities))[:depth]
    return [(int(ids[i]), float(similarities[i])) for i in order]


def _fuse(
    lexical: list[tuple[int, float]], vector: list[tuple[int, float]], *, k: int
) -> list[tuple[int, float]]:
    scores: dict[int, float] = {}
    lexical_scores = dict(lexical)
    for ranked in (lexical, vector):
        for rank, (record_id, _) in enumerate(ranked, 1):
            scores[record_id] = scores.get(record_id, 0.0) + 1.0 / (k + rank)
    # Ties (same fused score) go to the better lexical match, then the older record.
    return sorted(
        scores.items(), key=lambda item: (-item[1], -lexical_scores.get(item[0], 0.0), item[0])
    )


# --- similar memories --------------------------------------------------------------------


def similar_memories(
    memory: Memory, *, limit: int = 10, threshold: float | None = None
) -> list[SimilarMemory]:
    """Other memories of the same agent whose vectors are close: likely duplicates or
    contradictions for a human to review. Empty when the memory's own vector is stale."""
    threshold = (
        settings.MEMORYADMIN["SEARCH"]["SIMILAR_THRESHOLD"] if threshold is None else threshold
    )
    model_name = get_backend().model_name
    source = (
        Memory.objects.filter(pk=memory.pk)
        .filter(fresh_filter(model_name))
        .values_list("embedding", flat=True)
        .first()
    )
    if source is None:
        return []
    neighbours = nearest(
        Memory.objects.filter(agent_id=memory.agent_id)
        .exclude(pk=memory.pk)
        .filter(fresh_filter(model_name)),
        list(source),
        limit,
    )
    close = [
        (record_id, similarity) for record_id, similarity in neighbours if similarity >= threshold
    ]
    records = Memory.objects.defer("embedding").in_bulk([record_id for record_id, _ in close])
    return [
        SimilarMemory(record=records[record_id], similarity=similarity)
        for record_id, similarity in close
        if record_id in records
    ]
