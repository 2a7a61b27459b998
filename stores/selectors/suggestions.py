"""Reads for suggestions: the candidate pairs of the pass, and an agent's inbox.

A memory's candidates are its nearest neighbours by embedding (pgvector's HNSW index on
PostgreSQL, an exact scan on SQLite) and the memories holding most of its words (the lexical
side of recall), among the still-true memories of the same bank: a memory about one subject
never duplicates or contradicts one about another.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection
from django.db.models import Count, F, OuterRef, Prefetch, Q, QuerySet, Subquery

from stores.editing import cut_preview
from stores.models import Agent, Memory, SuggestedRecord, Suggestion
from stores.selectors.filters import still_true
from stores.selectors.lexical import lexical_candidates, query_terms
from stores.selectors.vectors import EXACT_AT_MOST, nearest, nearest_to_each

# How many neighbours of each memory are compared with it, by each side.
NEIGHBOURS = 8
# The whole-agent pass reads memories this many at a time.
CHUNK = 500
# The HNSW search breadth (ef_search) of the whole-agent pass: pgvector's default. Recall
# searches wider for its deeper pages; the pass wants a memory's few nearest, a scan for each
# memory of the agent (at 10,000 memories 0.6 ms a memory at 40, 1.2 at 100, 5 at 300).
PASS_BREADTH = 40
# What the pass reads of a memory it compares.
_COMPARED = ("pk", "agent_id", "subject_id", "content", "version")


@dataclass(frozen=True)
class Candidate:
    """Another memory worth comparing with one, and how alike their embeddings are."""

    memory_id: int
    similarity: float | None


def comparable(agent: Agent) -> QuerySet[Memory]:
    """The memories the pass compares: still true, of `agent`."""
    return Memory.objects.filter(still_true(), agent=agent)


def candidates_of(
    memory: Memory, vector: list[float] | None, *, lexical: bool = True
) -> list[Candidate]:
    """The memories of `memory`'s bank to compare with it, nearest first, itself left out.

    The lexical side counts the bank's memories for each word's weight: right after one
    write, too slow once per memory of a whole pass (which groups equal words instead).
    """
    bank = comparable(memory.agent).filter(subject=memory.subject_id).exclude(pk=memory.pk)
    found: dict[int, float | None] = {}
    if vector is not None:
        embedded = bank.filter(embedding__isnull=False)
        for pk, similarity in nearest(embedded, vector, NEIGHBOURS):
            found[pk] = similarity
    if lexical:
        for pk, _share in lexical_candidates(
            bank, query_terms(memory.content), NEIGHBOURS, agent_id=memory.agent_id
        ):
            found.setdefault(pk, None)
    return [Candidate(pk, similarity) for pk, similarity in found.items()]


def comparable_memory(memory_id: int) -> Memory | None:
    return Memory.objects.filter(still_true(), pk=memory_id).defer("embedding").first()


def memories_by_id(ids: Collection[int]) -> dict[int, Memory]:
    """The memories as the pass compares them: their text, version, agent and bank."""
    return {m.pk: m for m in Memory.objects.filter(pk__in=ids).only(*_COMPARED)}


def text_hashes_of(ids: Collection[int]) -> dict[int, str]:
    """The fingerprints of the memories' texts, by id (a memory gone is not in it)."""
    return dict(Memory.objects.filter(pk__in=ids).values_list("pk", "text_hash"))


def memory_of(agent: Agent, ref: int | str) -> Memory | None:
    """The agent's memory by id or alias."""
    text = str(ref).strip()
    by = {"pk": int(text)} if text.isdecimal() and 0 < int(text) < 2**63 else {"alias": text}
    return Memory.objects.filter(agent=agent, **by).defer("embedding").first()


def vector_of(memory_id: int) -> list[float] | None:
    vector = Memory.objects.filter(pk=memory_id).values_list("embedding", flat=True).first()
    return None if vector is None else [float(value) for value in vector]


def vectors_of(ids: Collection[int]) -> dict[int, np.ndarray]:
    """The embedded memories' vectors, by id (one not embedded is not in it)."""
    found = Memory.objects.filter(pk__in=ids, embedding__isnull=False)
    return {
        pk: np.asarray(vector, dtype=float) for pk, vector in found.values_list("pk", "embedding")
    }


def agent_batches(agent: Agent) -> Iterator[list[Memory]]:
    """Every comparable memory of `agent` in id order, CHUNK at a time, with its text, not its
    vector: the whole pass holds one batch of texts at once, whatever the agent's size."""
    last = 0
    while True:
        batch = list(comparable(agent).filter(pk__gt=last).order_by("pk").only(*_COMPARED)[:CHUNK])
        if not batch:
            return
        for memory in batch:
            memory.agent = agent  # one agent for the whole pass: no query per memory for it
        yield batch
        last = batch[-1].pk


def neighbours_of_each(agent: Agent, batch: list[Memory]) -> dict[int, list[Candidate]]:
    """The NEIGHBOURS nearest memories of each memory of `batch` (the agent's, from
    `agent_batches`) that has a vector, among the embedded ones of its bank, itself left out,
    nearest first; a memory without a vector has no entry.

    PostgreSQL finds them in a statement or three: through the HNSW index for the memories
    of large banks, measuring every vector of the bank for those of small ones (EXACT_AT_MOST),
    the shared bank's apart (its NULL subject matches by no `=`). SQLite scans the bank's
    vectors once per memory (it has no index).
    """
    neighbours = comparable(agent).filter(embedding__isnull=False)
    ids = [memory.pk for memory in batch]
    if connection.vendor == "postgresql":
        sizes = _bank_sizes(neighbours, {memory.subject_id for memory in batch})
        small = [memory for memory in batch if sizes.get(memory.subject_id, 0) <= EXACT_AT_MOST]
        small_ids = {memory.pk for memory in small}
        large = [pk for pk in ids if pk not in small_ids]
        found = nearest_to_each(
            neighbours, large, NEIGHBOURS, breadth=PASS_BREADTH, alike=["subject_id"]
        )
        found |= nearest_to_each(
            neighbours,
            [memory.pk for memory in small if memory.subject_id is not None],
            NEIGHBOURS,
            breadth=None,
            alike=["subject_id"],
        )
        found |= nearest_to_each(
            neighbours.filter(subject__isnull=True),
            [memory.pk for memory in small if memory.subject_id is None],
            NEIGHBOURS,
            breadth=None,
        )
    else:
        vectors = dict(
            Memory.objects.filter(pk__in=ids, embedding__isnull=False).values_list(
                "pk", "embedding"
            )
        )
        found = {
            memory.pk: nearest(
                neighbours.filter(subject=memory.subject_id).exclude(pk=memory.pk),
                np.asarray(vectors[memory.pk], dtype=float).tolist(),
                NEIGHBOURS,
            )
            for memory in batch
            if memory.pk in vectors
        }
    return {
        pk: [Candidate(other, similarity) for other, similarity in near]
        for pk, near in found.items()
    }


def _bank_sizes(embedded: QuerySet[Memory], subject_ids: set[int | None]) -> dict[int | None, int]:
    """How many memories of `embedded` each bank of `subject_ids` holds (None: the shared one)."""
    banks = Q(subject__in=[subject_id for subject_id in subject_ids if subject_id is not None])
    if None in subject_ids:
        banks |= Q(subject__isnull=True)
    return dict(
        embedded.filter(banks)
        .values("subject_id")
        .annotate(count=Count("pk"))
        .values_list("subject_id", "count")
    )


def suggestions_of(
    agent: Agent, *, kind: str | None = None, status: str | None = None
) -> QuerySet[Suggestion]:
    """The agent's suggestions, newest first, with their records."""
    found = Suggestion.objects.filter(agent=agent)
    if kind:
        found = found.filter(kind=kind)
    if status:
        found = found.filter(status=status)
    return found.prefetch_related(
        Prefetch("records", queryset=SuggestedRecord.objects.order_by("id"))
    )


def moved_open(
    *, agent: Agent | None = None, memory_ids: Collection[int] | None = None
) -> list[int]:
    """The open suggestions (of `agent`, or holding any of `memory_ids`: their records among
    those) a record of which moved since it was pinned: its memory is at another version
    now, or gone. One query, however many suggestions are open."""
    records = SuggestedRecord.objects.filter(suggestion__status=Suggestion.State.OPEN)
    if agent is not None:
        records = records.filter(suggestion__agent=agent)
    if memory_ids is not None:
        records = records.filter(memory_id__in=memory_ids)
    now = Memory.objects.filter(pk=OuterRef("memory_id")).values("version")[:1]
    return list(
        records.annotate(now=Subquery(now))
        .filter(Q(now__isnull=True) | ~Q(now=F("version")))
        .order_by("suggestion_id")
        .values_list("suggestion_id", flat=True)
        .distinct()
    )


def count_open(agent: Agent) -> int:
    return Suggestion.objects.filter(agent=agent, status=Suggestion.State.OPEN).count()


def open_by_kind(agent: Agent | None = None) -> list[tuple[str, str, int]]:
    """(kind, label, how many are open) for each kind of suggestion, of `agent` (None: of
    every agent), in one query."""
    open_ones = Suggestion.objects.filter(status=Suggestion.State.OPEN)
    if agent is not None:
        open_ones = open_ones.filter(agent=agent)
    counts = dict(
        open_ones.values_list("kind")
        .annotate(open=Count("id"))
        .values_list("kind", "open")
        .order_by()
    )
    return [(kind, label, counts.get(kind, 0)) for kind, label in Suggestion.Kind.choices]


def suggestion_rows(suggestions: list[Suggestion]) -> list[dict[str, Any]]:
    """Each suggestion as every door shows it: its words, and its records with the version
    each was found at, the version it is at now (None: forgotten) and a preview."""
    ids = {record.memory_id for s in suggestions for record in s.records.all()}
    memories = {
        m.pk: m
        for m in Memory.objects.filter(pk__in=ids).only(
            "pk", "version", "content", "store", "updated_at", "invalidated_at"
        )
    }
    rows = []
    for suggestion in suggestions:
        records = []
        for record in suggestion.records.all():
            memory = memories.get(record.memory_id)
            records.append(
                {
                    "id": record.memory_id,
                    "version": record.version,
                    "current_version": memory.version if memory else None,
                    "preview": cut_preview(memory.content) if memory else "",
                    "store": memory.store if memory else None,
                    "updated_at": memory.updated_at.isoformat() if memory else None,
                }
            )
        rows.append(
            {
                "id": suggestion.pk,
                "kind": suggestion.kind,
                "status": suggestion.status,
                "score": suggestion.score,
                "reason": suggestion.reason,
                "proposal": suggestion.proposal,
                "found_by": suggestion.found_by,
                "created_at": suggestion.created_at.isoformat(),
                "settled_at": suggestion.settled_at.isoformat() if suggestion.settled_at else None,
                "settled_by": suggestion.settled_by,
                "records": records,
            }
        )
    return rows
