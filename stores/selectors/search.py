"""Recall: hybrid search over long-term memory, each side's strength fused into one score.

Two candidate lists are drawn from the same filtered memories:

- lexical (`stores.selectors.lexical`): the memories holding the query's words, stopwords
  left out, each word weighed by how rare it is among them; its score is the share of the
  query's weight a memory covers (0..1).
- vector: cosine similarity between the query's embedding and each memory's vector
  (pgvector HNSW index on PostgreSQL; an exact numpy scan on SQLite).

Each side's score becomes a strength in 0..1, and the fused score is their mean:

- lexical strength: the share covered, cubed. Holding every word of "Biscuit vet
  appointment" is strong evidence; holding only "user" of "which animal does the user own"
  is almost none (0.33 covered, 0.04 strong).
- vector strength: how many standard deviations the memory's similarity stands above a
  typical memory's for this query, measured on the store itself (`stores.selectors.vectors`
  explains how): 0.75 or less is nothing, 4.5 or more is full strength, linear between.

Which results are listed (the relevance cut-off, `MEMORYADMIN_SEARCH_MIN_SCORE`): a query
is answered when its best result's fused score reaches the cut-off; then every result
reaching it is listed, and so is every result scoring at least `RELATIVE_SCORE` of the
best's. A similarity a few standard deviations above the typical memory is no proof alone:
a question whose answer shares none of its words ("when does the user wake up on
workdays" for "Maya's alarm is set for 6:15 on weekdays") scores no higher than the
memories a query nothing answers drifts to ("Lyon" finding the calendar's Europe/London
timezone). A cut-off on each result alone must drop that answer or list those; measured
against the query's best, the answer stays in the list beside a hit that stands out. The
price: a query nothing answers whose best stray match reaches the cut-off lists that
match's near neighbours too (docs/BENCHMARKS.md counts them). Equal scores go to the memory
whose stronger side is stronger, then the older. The constants were chosen on the tuning
half of the recall set of `bench/recall_quality.py` (its even-numbered queries); the
figures, held-out half apart, are in docs/BENCHMARKS.md.

A small store (at most `SMALL_STORE` memories passing the filters) has no typical memory to
stand out from: among a dozen, "hot drink" scored its tea and coffee answers no higher above
the others than "Lyon" scored its stray matches, and nothing was listed. There a memory's
vector strength is how far its similarity stands above its own habit (its similarity to any
everyday question), against a floor measured per model (`stores.selectors.vectors`): a
memory past the floor answers the query, with a fused score reaching the cut-off, and the
answers are listed best first. A model with no measured floor is judged as a large store.

Only fresh vectors take part in the vector side: a record whose vector was computed from
an older text, or by another model, is left out of it (never ranked as if fresh) and can
still be found lexically; its hit says `vector_fresh=False`. If the embedding service
cannot answer, search falls back to the lexical side alone rather than failing.

`recall` is what the doors (REST, tools, MCP) call: the same ranking as one page of
previews with a total, and with an empty query the filtered memories newest first.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from stores import metrics
from stores.embeddings import EmbeddingError, EmbeddingUnavailable, get_backend
from stores.errors import Invalid
from stores.models import Agent, Memory
from stores.selectors.embeddings import fresh_filter
from stores.selectors.filters import MemoryFilters, filtered_memories, max_query_length
from stores.selectors.lexical import lexical_candidates, query_terms, query_words
from stores.selectors.records import preview
from stores.selectors.vectors import nearest, vector_side

logger = logging.getLogger("memoryadmin.search")

# Lexical strength = share covered ** LEXICAL_POWER: a partial match counts for much less.
LEXICAL_POWER = 3
# A memory holding more than this share of the query's weight answers it in words: it is
# not a typical memory for this query and stays out of the typical level. (In a small store
# one such memory would otherwise raise the level and the spread enough to hide the others.)
ANSWERS_SHARE = 0.5
# Once a query is answered (its best result reaches the cut-off), a result scoring at
# least this share of the best's is listed too, even under the cut-off.
RELATIVE_SCORE = 0.65


def _check_query(query: str) -> None:
    # Each word is a lexical term and the whole query is embedded: the cost of a search
    # grows with its query, so a longer one is refused here, whichever door it came by.
    limit = max_query_length()
    if len(query or "") > limit:
        raise Invalid(
            f"The search query is {len(query)} characters long; the limit is {limit}. "
            "Search with a few words or a sentence."
        )


def min_score() -> float:
    """The relevance cut-off: the least fused score the best result of an answered query
    has, and the least any result needs unless it is within `RELATIVE_SCORE` of the best."""
    return settings.MEMORYADMIN["SEARCH"]["MIN_SCORE"]


def relevance_floor(best: float, cut_off: float) -> float | None:
    """The least fused score a result of this query needs to be listed, None when the
    query's `best` score does not reach `cut_off` (nothing answers it)."""
    if best < cut_off:
        return None
    return min(cut_off, RELATIVE_SCORE * best)


@dataclass(frozen=True)
class SearchHit:
    """One result: the memory, its fused score, and what each side thought of it.

    `score` (0..1) is the mean of `lexical_strength` and `vector_strength`.
    `lexical_score` is the share of the query's weight the memory's words cover (0.0 when
    none matched); `vector_score` the cosine similarity, or None when the record has no
    fresh vector or the embedding service did not answer. The ranks (1-based) are the
    memory's places on each side's own list, None when it was not on it.
    """

    record: Memory
    score: float
    lexical_score: float
    vector_score: float | None
    lexical_strength: float = 0.0
    vector_strength: float = 0.0
    lexical_rank: int | None = None
    vector_rank: int | None = None
    vector_fresh: bool = True

    def explain(self) -> dict[str, object]:
        return {
            "score": self.score,
            "lexical_rank": self.lexical_rank,
            "lexical_score": self.lexical_score,
            "lexical_strength": self.lexical_strength,
            "vector_rank": self.vector_rank,
            "vector_score": self.vector_score,
            "vector_strength": self.vector_strength,
            "vector_fresh": self.vector_fresh,
        }


@dataclass(frozen=True)
class SimilarMemory:
    record: Memory
    similarity: float


def search_memories(
    *, agent: Agent, filters: MemoryFilters, limit: int = 20, offset: int = 0
) -> list[SearchHit]:
    """Memories of `agent` passing `filters` and relevant to `filters.query` (a fused score
    reaching the relevance floor: see `relevance_floor`), best first.

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

    - `filters.query`: free text, ranked as `search_memories` ranks it, with its fused
      `score` (0..1). With no words in it, every memory passing the filters, newest first,
      with `score` None.
    - `RecallPage.total`: how many memories match: for a query, those passing the filters
      whose score reaches the relevance floor (`relevance_floor`); otherwise every memory
      passing the filters.

    A query longer than `max_query_length()` is refused (Invalid).
    """
    with metrics.RECALL_SECONDS.time():
        return _recall(agent=agent, filters=filters, limit=limit, offset=offset)


def _recall(*, agent: Agent, filters: MemoryFilters, limit: int, offset: int) -> RecallPage:
    _check_query(filters.query)
    if not query_words(filters.query):
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
    return RecallPage(
        total=total, hits=[RecallHit(hit.record, round(hit.score, 4)) for hit in hits]
    )


@dataclass
class _Candidate:
    lexical_score: float = 0.0
    lexical_rank: int | None = None
    similarity: float | None = None
    vector_rank: int | None = None


def _ranked(
    *, agent: Agent, filters: MemoryFilters, limit: int, offset: int
) -> tuple[int, list[SearchHit]]:
    """(how many results reach the relevance floor, the page of them) for `filters.query`."""
    query = filters.query
    if not query_words(query) or limit <= 0:
        return 0, []
    memories = filtered_memories(agent=agent, filters=filters)
    config = settings.MEMORYADMIN["SEARCH"]
    wanted = offset + limit
    candidates: dict[int, _Candidate] = {}
    lexical = lexical_candidates(
        memories,
        query_terms(query),
        max(config["CANDIDATES"], wanted),
        agent_id=agent.pk,
        whole_store=filters == MemoryFilters(query=query),
    )
    for rank, (record_id, share) in enumerate(lexical, 1):
        candidates[record_id] = _Candidate(lexical_score=share, lexical_rank=rank)
    query_vector = _query_vector(query)
    baseline = None
    if query_vector is not None:
        vectors = vector_side(
            memories.filter(fresh_filter()),
            query_vector,
            depth=max(config["VECTOR_CANDIDATES"], wanted),
            also=list(candidates),
            leave_out={pk for pk, share in lexical if share > ANSWERS_SHARE},
        )
        for rank, (record_id, _) in enumerate(vectors.neighbours, 1):
            candidates.setdefault(record_id, _Candidate()).vector_rank = rank
        for record_id, similarity in vectors.similarity.items():
            candidates[record_id].similarity = similarity
        baseline = vectors.baseline
    scored = []
    cut_off = min_score()
    for record_id, candidate in candidates.items():
        lexical_strength = candidate.lexical_score**LEXICAL_POWER
        vector_strength = (
            baseline.strength(record_id, candidate.similarity)
            if baseline is not None and candidate.similarity is not None
            else 0.0
        )
        score = (lexical_strength + vector_strength) / 2
        if score > 0:
            scored.append((record_id, score, lexical_strength, vector_strength))
    floor = relevance_floor(max((item[1] for item in scored), default=0.0), cut_off)
    scored = [item for item in scored if floor is not None and item[1] >= floor]
    scored.sort(key=lambda item: (-item[1], -max(item[2], item[3]), item[0]))
    page = scored[offset : offset + limit]
    records = (
        Memory.objects.select_related("subject")
        .defer("embedding")
        .in_bulk([record_id for record_id, *_ in page])
    )
    model_name = get_backend().model_name
    hits = []
    for record_id, score, lexical_strength, vector_strength in page:
        record = records.get(record_id)
        if record is None:  # forgotten between the queries
            continue
        candidate = candidates[record_id]
        hits.append(
            SearchHit(
                record=record,
                score=score,
                lexical_score=candidate.lexical_score,
                vector_score=candidate.similarity,
                lexical_strength=lexical_strength,
                vector_strength=vector_strength,
                lexical_rank=candidate.lexical_rank,
                vector_rank=candidate.vector_rank,
                vector_fresh=bool(record.embedding_hash)
                and record.embedding_hash == record.text_hash
                and record.embedding_model == model_name,
            )
        )
    return len(scored), hits


# --- vector ----------------------------------------------------------------------------


def _query_vector(query: str) -> list[float] | None:
    try:
        return get_backend().embed_query(query)
    except (EmbeddingUnavailable, EmbeddingError) as error:
        logger.warning("search without vectors: %s", error)
        return None


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
