"""Hybrid recall on SQLite and PostgreSQL: lexical and vector sides, fused."""

from __future__ import annotations

import pytest
from django.db import connection

from stores.embeddings import EmbeddingUnavailable
from stores.embeddings.fake import FakeBackend
from stores.engine.actors import Actor
from stores.errors import Invalid
from stores.models import Memory
from stores.selectors.filters import MemoryFilters
from stores.selectors.lexical import query_terms
from stores.selectors.search import min_score, search_memories, similar_memories
from stores.selectors.search import recall as recall_page
from stores.services import memory_invalidate, record_edit, record_forget
from stores.services.embeddings import reembed_sweep
from tests.factories import SubjectFactory, crowd_with_copies

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
    # Every word matched and the vector far above the others': both sides at full strength.
    assert hits[0].lexical_strength == hits[0].vector_strength == hits[0].score == 1.0
    assert hits[0].explain()["lexical_rank"] == 1


def test_lexical_search_stems_words(agent, recall):
    hits = search_memories(agent=agent, filters=MemoryFilters(query="deploy"))

    assert hits[0].record.pk == recall[1].pk and hits[0].lexical_rank == 1


def test_a_number_finds_the_code_that_holds_it(agent, make):
    """Regression (PostgreSQL): "INV-20933" was indexed as "inv" and "-20933", so the
    query "20933" matched nothing lexically."""
    invoice = make.memory(agent, "Invoice INV-20933 was paid on 3 March.")
    make.memory(agent, "Invoice INV-20934 is still open.")

    hits = search_memories(agent=agent, filters=MemoryFilters(query="invoice 20933"))

    assert hits[0].record.pk == invoice.pk and hits[0].lexical_rank == 1
    assert hits[0].lexical_score == 1.0


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

    from stores.selectors.lexical import MemoryDocument

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


BISCUIT = "Biscuit is the user's golden retriever."


def test_stopwords_make_no_lexical_match(agent, recall):
    """Regression: on SQLite every query word was a term, so "the" or
    "which" made memories lexical matches; PostgreSQL's english configuration drops the
    same words, and now both do."""
    assert query_terms("Which animal does THE user own?") == ["animal", "user"]
    hits = search_memories(agent=agent, filters=MemoryFilters(query="which of the does"))
    assert [hit.lexical_rank for hit in hits] == [None] * len(hits)


def test_a_question_ranks_its_answer_above_a_memory_sharing_only_common_words(
    local_model, agent, make, recall
):
    """Regression: both memories hold "the user"; PostgreSQL's lexical
    side put the allergy first, the vector side the dog, and the reciprocal-rank tie went
    to the lexical side (SQLite's BM25 happened to favour the shorter text). Now a word
    most memories hold weighs little, and the vector side's clear lead counts for what it
    is."""
    biscuit = make.memory(agent, BISCUIT)
    reembed_sweep()

    hits = search_memories(
        agent=agent, filters=MemoryFilters(query="which animal does the user own")
    )

    assert hits[0].record.pk == biscuit.pk
    peanuts = {hit.record.pk: hit for hit in hits}.get(recall[0].pk)
    assert peanuts is None or peanuts.score < hits[0].score


def test_the_score_says_how_much_of_the_query_a_memory_holds(agent, make, recall):
    """Regression: a fused score of 1/(k + rank) per side gave a memory
    holding one word of three 98% of the score of the one holding all three."""
    partial = make.memory(agent, "The orchestra tours in May.")
    reembed_sweep()

    hits = search_memories(agent=agent, filters=MemoryFilters(query="violin orchestra daughter"))

    assert [hit.record.pk for hit in hits[:2]] == [recall[2].pk, partial.pk]
    assert hits[0].score == 1.0
    assert hits[1].lexical_strength < 0.05  # a quarter of the query's weight, cubed
    assert hits[1].score < 0.75 * hits[0].score


def test_a_query_no_memory_answers_finds_nothing(local_model, agent, make, recall):
    """Regression: the vector side ranks every memory, so "Lyon" found
    all of them and recall counted them all; the relevance cut-off leaves them out."""
    make.memory(agent, BISCUIT)
    reembed_sweep()

    assert search_memories(agent=agent, filters=MemoryFilters(query="Lyon")) == []
    assert recall_page(agent=agent, filters=MemoryFilters(query="Lyon")).total == 0
    biscuit = recall_page(agent=agent, filters=MemoryFilters(query="golden retriever"))
    assert biscuit.hits[0].score == 1.0 and biscuit.hits[0].memory.content == BISCUIT
    assert biscuit.total == len(biscuit.hits) < len(MEMORIES)


def test_a_search_runs_a_few_queries_whatever_its_words_and_rows(agent, make, recall):
    """Each side's cost is a fixed number of queries: not one per term, nor per memory."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries(text: str) -> int:
        with CaptureQueriesContext(connection) as captured:
            search_memories(agent=agent, filters=MemoryFilters(query=text))
        return len(captured)

    few = queries("violin")
    many = queries(" ".join(f"word{n}" for n in range(40)) + " violin orchestra daughter")
    for n in range(30):
        make.memory(agent, f"Patrol note {n} about the harbour and the violin.")
    reembed_sweep()
    # PostgreSQL: 2 lexical, the HNSW search in its savepoint, 2 more vector reads, the page.
    assert max(few, many, queries("violin")) <= 10


# Cosine similarities to the query, placed exactly: 31 memories spread evenly around a
# typical 0.72, one that stands out, and the answer, a little less far above them.
TYPICAL = {f"Background note {n}.": 0.69 + 0.002 * n for n in range(31)}
STANDS_OUT = "The kids leave for school at 8:15."
ANSWER = "Her alarm rings at 6:15 on weekdays."
PLACED = {**TYPICAL, STANDS_OUT: 0.785, ANSWER: 0.775}


class PlacedBackend(FakeBackend):
    """The query is the first axis; each memory of PLACED (the first line of the text
    embedded: its content) leans towards it by its similarity and is otherwise on an axis
    of its own."""

    def _embed_documents(self, texts):
        order = list(PLACED)
        vectors = []
        for text in texts:
            content = text.split("\n")[0]
            similarity = PLACED[content]
            vector = [0.0] * self.dimensions
            vector[0], vector[1 + order.index(content)] = similarity, (1 - similarity**2) ** 0.5
            vectors.append(vector)
        return vectors

    def _embed_query(self, text):
        return [1.0] + [0.0] * (self.dimensions - 1)


def test_an_answer_sharing_no_word_stays_listed_beside_a_hit_that_stands_out(agent, make, settings):
    """Regression: a cut-off on each result alone dropped an answer
    whose only evidence is a vector a little over 2.5 standard deviations above the
    typical memory (as "when does the user wake up on workdays" for the alarm memory):
    only the memory standing out more was listed, and the vector side alone ranked the
    answer in its top five. Now, the query being answered by its best result, a result
    within reach of that best is listed and counted too."""
    use_backend(settings, f"{__name__}.PlacedBackend")
    for text in PLACED:
        make.memory(agent, text)
    reembed_sweep()
    query = MemoryFilters(query="when does she wake up on workdays")

    hits = search_memories(agent=agent, filters=query)

    assert [hit.record.content for hit in hits] == [STANDS_OUT, ANSWER]
    assert [hit.lexical_rank for hit in hits] == [None, None]  # no word in common
    assert hits[1].score < min_score() <= hits[0].score
    assert recall_page(agent=agent, filters=query).total == 2


TEA_STORE = [
    "She takes her tea without sugar.",
    "The Wi-Fi password is on the fridge.",
    "Her brother lives in Porto.",
    "The car is due for its MOT in March.",
]


DOZEN = [
    "She drinks green tea every morning.",
    "He takes his coffee black, without sugar.",
    "The user flew to Toronto and Vancouver last summer.",
    "They are planning a week in Montreal in October.",
    "The user's daughter plays violin in the school orchestra.",
    "The car is due for its MOT in March.",
    "Her brother lives in Porto.",
    "The Wi-Fi password is on the fridge.",
    "The user is allergic to peanuts.",
    "He works night shifts at the hospital.",
    "The dog is called Biscuit.",
    "The office wifi password rotates every month.",
]


@pytest.mark.parametrize(
    ("query", "answers"),
    [
        ("hot drink", DOZEN[:2]),
        ("beverage", DOZEN[:2]),
        ("trip to Canada", DOZEN[2:4]),
    ],
)
def test_a_small_store_ranks_by_meaning(local_model, agent, make, query, answers):
    """Regression: in a dozen memories a query sharing no word with its answers found
    nothing, the answers standing no further above the others than stray matches do. (A
    second answer standing far below the first is not listed: "beverage" lists the coffee,
    "trip to Canada" the trip made; see SMALL_STORE_GAP.)"""
    for text in DOZEN:
        make.memory(agent, text)
    reembed_sweep()

    page = recall_page(agent=agent, filters=MemoryFilters(query=query))

    assert page.hits[0].memory.content in answers
    assert set(answers) >= {hit.memory.content for hit in page.hits}


def test_two_memories_rank_by_meaning(local_model, agent, make):
    """Regression: over two items "which colour scheme does the user like" found nothing."""
    make.memory(agent, "works from Lisbon on Fridays")
    dark = make.memory(agent, "prefers dark mode in every editor")
    reembed_sweep()

    page = recall_page(
        agent=agent, filters=MemoryFilters(query="which colour scheme does the user like")
    )

    assert [hit.memory.pk for hit in page.hits] == [dark.pk]


@pytest.mark.parametrize("query", ["Lyon", "quarterly tax filing", "nuclear submarine"])
def test_a_small_store_lists_nothing_for_a_query_nothing_answers(local_model, agent, make, query):
    for text in TEA_STORE:
        make.memory(agent, text)
    reembed_sweep()

    assert recall_page(agent=agent, filters=MemoryFilters(query=query)).total == 0


def test_a_small_store_finds_the_answer_that_stands_out(local_model, agent, make):
    for text in TEA_STORE:
        make.memory(agent, text)
    reembed_sweep()

    page = recall_page(agent=agent, filters=MemoryFilters(query="where does her brother live"))

    assert [hit.memory.content for hit in page.hits][:1] == [TEA_STORE[2]]


def test_a_small_agents_memory_is_found_by_meaning_among_many_alike_of_other_agents(
    postgres_only, agent, other_agent, recall
):
    # Past hnsw.max_scan_tuples (20,000): an index scan gives up before reaching the agent's.
    crowd_with_copies(recall[0], other_agent, 25_000)

    hits = search_memories(agent=agent, filters=MemoryFilters(query="allergic to peanuts"))

    assert hits[0].record.pk == recall[0].pk
    assert hits[0].vector_rank == 1
