"""Recall: which memories of an agent answer a query, ranked, as previews.

`search_memories` is the one entry point every door uses. Its ranking today is
lexical and portable (SQLite and PostgreSQL): each query word found in the content
counts fully, found in the tags or category counts half, and the whole phrase found
in the content counts once more; the sum is scaled to 0..1. Ties go to the more
important, then the more recently updated memory. A vector (hybrid) ranking can
replace `_lexical_ranking` behind the same signature; the filters stay as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.db.models import (
    Case,
    F,
    FloatField,
    Q,
    QuerySet,
    TextField,
    Value,
    When,
)
from django.db.models.functions import Cast

from stores.models import Agent, Memory
from stores.selectors.records import preview

SHARED_SUBJECT = "shared"
MAX_QUERY_WORDS = 12
CONTENT_WEIGHT = 1.0
LABEL_WEIGHT = 0.5
PHRASE_WEIGHT = 1.0


@dataclass(frozen=True)
class RecallHit:
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


def search_memories(
    *,
    agent: Agent,
    query: str = "",
    category: str | None = None,
    store: str | None = None,
    tag: str | None = None,
    subject: str | None = None,
    importance_min: float | None = None,
    importance_max: float | None = None,
    include_invalidated: bool = False,
    limit: int = 20,
    offset: int = 0,
) -> RecallPage:
    """Memories of `agent` matching `query` and the filters, best first, one page of them.

    - `query`: free text; empty lists every memory that passes the filters, newest first,
      with `score` None.
    - `category`, `store`: exact values; `tag`: one tag the memory carries;
      `subject`: a subject's external id, or "shared" for the agent-wide bank.
    - `importance_min` / `importance_max`: inclusive bounds.
    - `include_invalidated`: also superseded memories (hidden by default).
    - `limit` / `offset`: the page; `RecallPage.total` counts every match.
    """
    memories = _filtered(
        agent,
        category=category,
        store=store,
        tag=tag,
        subject=subject,
        importance_min=importance_min,
        importance_max=importance_max,
        include_invalidated=include_invalidated,
    )
    words = query_words(query)
    if not words:
        ordered = memories.order_by("-updated_at", "-id")
        return RecallPage(
            total=ordered.count(),
            hits=[RecallHit(memory, None) for memory in ordered[offset : offset + limit]],
        )
    ranked = _lexical_ranking(memories, words, phrase=" ".join(query.split()))
    return RecallPage(
        total=ranked.count(),
        hits=[
            RecallHit(memory, round(memory.score, 4)) for memory in ranked[offset : offset + limit]
        ],
    )


def query_words(query: str) -> list[str]:
    words = [word for word in re.findall(r"\w+", query.lower()) if len(word) > 1]
    if not words:
        words = re.findall(r"\w+", query.lower())
    return list(dict.fromkeys(words))[:MAX_QUERY_WORDS]


def _filtered(
    agent: Agent,
    *,
    category: str | None,
    store: str | None,
    tag: str | None,
    subject: str | None,
    importance_min: float | None,
    importance_max: float | None,
    include_invalidated: bool,
) -> QuerySet[Memory]:
    memories = Memory.objects.filter(agent=agent).select_related("subject")
    if not include_invalidated:
        memories = memories.filter(invalidated_at__isnull=True)
    if category:
        memories = memories.filter(category=category)
    if store:
        memories = memories.filter(store=store)
    if subject:
        if subject == SHARED_SUBJECT:
            memories = memories.filter(subject__isnull=True)
        else:
            memories = memories.filter(subject__external_id=subject)
    if importance_min is not None:
        memories = memories.filter(importance__gte=importance_min)
    if importance_max is not None:
        memories = memories.filter(importance__lte=importance_max)
    if tag:
        # JSON containment is not portable to SQLite; the serialised list is: a tag is a
        # quoted string inside it.
        memories = memories.annotate(tags_text=Cast("tags", TextField())).filter(
            tags_text__icontains=f'"{tag.strip()}"'
        )
    return memories


def _lexical_ranking(memories: QuerySet[Memory], words: list[str], phrase: str) -> QuerySet:
    labels = Cast("tags", TextField())
    memories = memories.annotate(labels_text=labels)
    parts: list[Any] = []
    for word in words:
        parts.append(_weight(Q(content__icontains=word), CONTENT_WEIGHT))
        parts.append(
            _weight(Q(labels_text__icontains=word) | Q(category__icontains=word), LABEL_WEIGHT)
        )
    best = (CONTENT_WEIGHT + LABEL_WEIGHT) * len(words)
    if len(words) > 1:
        parts.append(_weight(Q(content__icontains=phrase), PHRASE_WEIGHT))
        best += PHRASE_WEIGHT
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return (
        memories.annotate(score=total / Value(best, output_field=FloatField()))
        .filter(score__gt=0)
        .order_by(F("score").desc(), "-importance", "-updated_at", "-id")
    )


def _weight(condition: Q, weight: float) -> Case:
    return Case(
        When(condition, then=Value(weight)),
        default=Value(0.0),
        output_field=FloatField(),
    )
