"""The reads a 100,000-memory agent waits on are served by indexes (PostgreSQL pass).

Each test forbids sequential scans (`enable_seqscan = off` makes the planner take any usable
index) and asserts the index PostgreSQL chose: without that index it falls back to reading
every memory of the agent, which is what cost the web list and its search their time
(bench/edit_path.py has the figures).
"""

from __future__ import annotations

import pytest
from django.db import connection
from pgvector.django import CosineDistance

from memoryadmin.web.selectors import memory_categories, record_list
from memoryadmin.web.surfaces import surface_ui
from stores.embeddings.fake import FakeBackend
from stores.engine.actors import Actor
from stores.models import Memory
from stores.selectors.embeddings import fresh_filter
from stores.selectors.filters import MemoryFilters, filtered_memories
from stores.selectors.lexical import lexical_candidates
from stores.selectors.vectors import nearest, vector_side
from stores.services import record_edit


@pytest.fixture
def no_seqscan(postgres_only):
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")


def seed(agent, count: int, invalidated: int = 0) -> None:
    """`count` plain memories and `invalidated` ones no longer true, inserted in one statement
    each, then the planner's statistics."""
    with connection.cursor() as cursor:
        # Autovacuum sees none of this test's uncommitted rows: an ANALYZE of its own meanwhile
        # would write the table's size back as it was, and the planner would price the plan for
        # an empty table (on a busy machine only). Holding the lock its passes take keeps them
        # off the table until the test's transaction ends.
        cursor.execute("LOCK TABLE stores_memory IN SHARE UPDATE EXCLUSIVE MODE")
        cursor.execute(
            """
            INSERT INTO stores_memory (agent_id, store, category, tags, content, importance,
                importance_floor, pinned, last_seen_at, reinforcement_count, metadata,
                version, created_at, updated_at, text_hash, embedding_model, embedding_hash)
            SELECT %s, 'working', 'cat-' || (n %% 20), '[]', 'Seeded memory number ' || n,
                0.5, 0, false, now(), 1, '{}', 1, now(), now(), md5(n::text), '', ''
            FROM generate_series(1, %s) AS n
            """,
            [agent.pk, count],
        )
        cursor.execute(
            """
            INSERT INTO stores_memory (agent_id, store, category, tags, content, importance,
                importance_floor, pinned, last_seen_at, reinforcement_count, metadata,
                version, created_at, updated_at, text_hash, embedding_model, embedding_hash,
                invalidated_at)
            SELECT %s, 'working', 'cat-' || (n %% 20), '[]', 'Outdated memory number ' || n,
                0.5, 0, false, now(), 1, '{}', 1, now(), now(), md5(n::text), '', '', now()
            FROM generate_series(1, %s) AS n
            """,
            [agent.pk, invalidated],
        )
        # As autovacuum leaves them: the GIN indexes' pending entries moved into the index.
        # Left pending, they made the planner price the trigram match above reading every
        # memory of the agent, in a fresh database only (a flaky plan).
        for index in ("memory_content_trigram", "memory_category_trigram", "memory_alias_trigram"):
            cursor.execute("SELECT gin_clean_pending_list(%s::regclass)", [index])
        cursor.execute("ANALYZE stores_memory")


def plan_of(sql: str, params) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_the_list_counts_its_pager_from_the_still_true_index(no_seqscan, agent):
    # With every memory still true, the agent's own index costs the same and the planner may
    # take either; an agent whose store has outgrown half its memories is where it matters.
    seed(agent, 5000, invalidated=5000)
    records = record_list(surface_ui("memory"), agent, {})
    assert "memory_still_true" in plan_of(*records.order_by().values("pk").query.sql_with_params())
    assert records.count() == 5000


def test_the_list_search_matches_substrings_through_trigram_indexes(no_seqscan, agent, make):
    seed(agent, 20000)
    make.memory(agent, "The user drinks tea.")
    with connection.cursor() as cursor:  # the agent's other indexes would read every row
        cursor.execute("SET LOCAL enable_indexscan = off")
    records = record_list(surface_ui("memory"), agent, {"q": "rinks te", "sort": "updated"})
    plan = records.explain()
    assert "memory_content_trigram" in plan
    assert "memory_category_trigram" in plan
    assert [memory.content for memory in records] == ["The user drinks tea."]


def test_lexical_recall_ranks_the_stored_document(no_seqscan, agent, make):
    memory = make.memory(agent, "The courier code word is zanzibarite.")
    memories = filtered_memories(agent=agent, filters=MemoryFilters())
    with connection.cursor() as cursor:
        cursor.execute("SELECT search_document::text FROM stores_memory WHERE id = %s", [memory.pk])
        assert "'zanzibarit'" in cursor.fetchone()[0]
    assert lexical_candidates(memories, ["zanzibarite"], 10, agent_id=agent.pk)[0][0] == memory.pk

    with connection.execute_wrapper(_capture):
        lexical_candidates(memories, ["zanzibarite"], 10, agent_id=agent.pk)
    assert '"search_document"' in _captured[-1]
    assert "to_tsvector" not in _captured[-1]  # no document is parsed again at query time


def test_the_stored_document_follows_every_write_of_the_text(postgres_only, agent, make):
    memory = make.memory(agent, "The courier code word is zanzibarite.")
    assert record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=Actor.maintainer("tests"),
        old_string="zanzibarite",
        new_string="marmalade",
    ).ok
    memories = filtered_memories(agent=agent, filters=MemoryFilters())
    assert lexical_candidates(memories, ["zanzibarite"], 10, agent_id=agent.pk) == []
    assert [pk for pk, _ in lexical_candidates(memories, ["marmalade"], 10, agent_id=agent.pk)] == [
        memory.pk
    ]
    # A write that leaves the text alone (a decay pass, an importance) parses nothing.
    Memory.objects.filter(pk=memory.pk).update(importance=0.2)
    with connection.cursor() as cursor:
        cursor.execute("SELECT search_document::text FROM stores_memory WHERE id = %s", [memory.pk])
        assert "'marmalad'" in cursor.fetchone()[0]


def test_an_agent_without_vectors_is_not_scanned_for_them(no_seqscan, agent):
    seed(agent, 5000)  # as an import leaves them, before the sweep
    memories = filtered_memories(agent=agent, filters=MemoryFilters())
    fresh = memories.filter(fresh_filter())
    assert nearest(fresh, [0.1] * 384, 40) == []
    ordered = fresh.order_by(CosineDistance("embedding", [0.1] * 384))
    assert "memory_embedded" in ordered[:40].explain()


def test_categories_are_listed_once_each_in_order(agent, other_agent, make):
    for category in ["work", "home", "work", "health", "home"]:
        make.memory(agent, f"A {category} memory.", category=category)
    make.memory(other_agent, "Elsewhere.", category="zoo")
    assert memory_categories(agent) == ["health", "home", "work"]


_captured: list[str] = []


def _capture(execute, sql, params, many, context):
    _captured.append(sql)
    return execute(sql, params, many, context)


def test_the_planner_knows_how_many_vectors_are_fresh(postgres_only, agent):
    seed(agent, 5000)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE stores_memory SET embedding = array_fill(0.1, ARRAY[384])::vector, "
            "embedding_hash = text_hash, embedding_model = %s",
            [FakeBackend.model_name],
        )
        cursor.execute("ANALYZE stores_memory")
    plan = Memory.objects.filter(fresh_filter(FakeBackend.model_name)).explain()
    estimated = int(plan.split("rows=", 1)[1].split()[0])
    # It guessed 25 (0.5%) and so sorted an agent's vectors exactly instead of asking HNSW.
    assert estimated > 4000, plan


def test_the_baseline_sample_reads_recent_memories_in_index_order(no_seqscan, agent):
    """Regression: the sample sorted every fresh memory of the agent, computing each one's
    distance first (350 ms at 100,000 memories that shared one updated_at)."""
    seed(agent, 5000)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE stores_memory SET embedding = array_fill(0.1, ARRAY[384])::vector, "
            "embedding_hash = text_hash, embedding_model = %s, updated_at = now()",
            [FakeBackend.model_name],
        )
        cursor.execute("ANALYZE stores_memory")
    fresh = filtered_memories(agent=agent, filters=MemoryFilters()).filter(
        fresh_filter(FakeBackend.model_name)
    )
    statements: list[tuple[str, object]] = []

    def capture(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        vector_side(fresh, [0.1] * 384, depth=40, also=[], leave_out=[])
    sample = [(sql, params) for sql, params in statements if '"updated_at" DESC' in sql]
    assert len(sample) == 1
    plan = plan_of(*sample[0])
    assert "memory_updated" in plan
    assert "Sort" not in plan, plan
