"""LangGraph's BaseStore backed by memoryadmin, over real HTTP to the test server on loopback
(Django's live_server).

The cases are those of LangGraph's own tests of its stores (libs/checkpoint/tests/test_store.py
for InMemoryStore, libs/checkpoint-postgres/tests/test_store.py for PostgresStore), run
against this store; what differs is said where it does. Recall runs with no relevance floor
(`SEARCH.MIN_SCORE` 0) where a case expects every item ranked, as LangGraph's stores rank.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)

from memoryadmin.clients.langgraph_store import MemoryadminStore, MemoryadminStoreError
from stores.models import Memory, Revision
from stores.services.embeddings import reembed_sweep
from tests.factories import agent_token

# --- memoryadmin's side: every write a revision of the agent's token ---------------------


def test_each_put_and_delete_is_a_revision_of_the_agents_token(store, agent):
    store.put(("users", "alice"), "food", {"likes": "green tea"})
    store.put(("users", "alice"), "food", {"likes": "green tea", "sugar": False})
    store.delete(("users", "alice"), "food")

    revisions = list(Revision.objects.filter(agent=agent).order_by("pk"))
    assert [revision.op for revision in revisions] == ["create", "replace", "forget"]
    assert {revision.actor for revision in revisions} == {f"agent:{agent.name}/test"}
    assert {revision.channel for revision in revisions} == {"api"}
    assert revisions[1].after_text == '{"likes": "green tea", "sugar": false}'


def test_an_item_is_a_memory_a_person_can_read_and_correct(store, agent, person_corrects):
    store.put(("users", "alice"), "city", {"lives_in": "Paris"})
    memory = Memory.objects.get(agent=agent)
    assert memory.category == "langgraph"
    assert memory.tags == ["langgraph", "langgraph:users", "langgraph:users.alice"]
    assert memory.metadata == {"langgraph": {"namespace": ["users", "alice"], "key": "city"}}

    # A person fixes the text in memoryadmin; the agent reads the correction.
    person_corrects(agent, memory.pk, "Paris", "Lyon")
    assert store.get(("users", "alice"), "city").value == {"lives_in": "Lyon"}


def test_a_read_only_token_cannot_put(live_server, agent):
    read_only = agent_token(agent, read_only=True)[1]
    with (
        MemoryadminStore(live_server.url, token=read_only) as store,
        pytest.raises(MemoryadminStoreError) as refused,
    ):
        store.put(("users",), "x", {"a": 1})
    assert refused.value.http_status == 403
    assert not Memory.objects.filter(agent=agent).exists()


def test_closing_the_store_closes_its_own_connections_and_not_a_client_it_was_given(
    live_server, agent
):
    token = agent_token(agent)[1]
    with httpx.Client() as given:
        with MemoryadminStore(live_server.url, token=token, http=given) as store:
            store.put(("users",), "a", {"x": 1})
        assert not given.is_closed
    with MemoryadminStore(live_server.url, token=token) as own:
        own.put(("users",), "b", {"x": 2})
    with pytest.raises(RuntimeError, match="client has been closed"):
        own.get(("users",), "a")


def test_another_agents_items_are_not_seen(store, live_server, other_agent):
    store.put(("shared",), "k", {"a": 1})
    with MemoryadminStore(live_server.url, token=agent_token(other_agent)[1]) as other:
        assert other.get(("shared",), "k") is None
        assert other.search(("shared",)) == []
        assert other.list_namespaces() == []


# --- PostgresStore's cases -------------------------------------------------------------


def test_basic_store_ops(store):
    namespace = ("test", "documents")
    value = {"title": "Test Document", "content": "Hello, World!"}
    store.put(namespace, "doc1", value)
    item = store.get(namespace, "doc1")
    assert isinstance(item, Item)
    assert (item.namespace, item.key, item.value) == (namespace, "doc1", value)

    updated = {"title": "Updated Document", "content": "Hello, Updated!"}
    store.put(namespace, "doc1", updated)
    updated_item = store.get(namespace, "doc1")
    assert updated_item.value == updated
    assert updated_item.updated_at > item.updated_at
    assert updated_item.created_at == item.created_at

    assert store.get(("test", "other_documents"), "doc1") is None
    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None
    store.delete(namespace, "doc1")  # deleting what is not there is no error


def test_batch_order(store):
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})

    results = store.batch(
        [
            GetOp(namespace=("test", "foo"), key="key1"),
            PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
            SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            GetOp(namespace=("test",), key="key3"),
        ]
    )
    assert results[0].value == {"data": "value1"} and results[0].key == "key1"
    assert results[1] is None
    assert [item.key for item in results[2]] == ["key1"]
    assert sorted(results[3]) == [("test", "bar"), ("test", "foo")]
    assert results[4] is None

    reordered = store.batch(
        [
            SearchOp(namespace_prefix=("test",), filter=None, limit=5, offset=0),
            GetOp(namespace=("test", "bar"), key="key2"),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
            PutOp(namespace=("test",), key="key3", value={"data": "value3"}),
            GetOp(namespace=("test", "foo"), key="key1"),
        ]
    )
    assert {item.key for item in reordered[0]} == {"key1", "key2"}
    assert reordered[1].value == {"data": "value2"}
    assert len(reordered[2]) == 2
    assert reordered[3] is None
    assert reordered[4].value == {"data": "value1"}
    assert store.get(("test",), "key3").value == {"data": "value3"}


def test_batch_put_ops_with_a_delete(store):
    results = store.batch(
        [
            PutOp(namespace=("test",), key="key1", value={"data": "value1"}),
            PutOp(namespace=("test",), key="key2", value={"data": "value2"}),
            PutOp(namespace=("test",), key="key3", value=None),
        ]
    )
    assert results == [None, None, None]
    assert store.get(("test",), "key1").value == {"data": "value1"}
    assert store.get(("test",), "key2").value == {"data": "value2"}
    assert store.get(("test",), "key3") is None


def test_batch_search_ops(store):
    for namespace, key, value in [
        (("test", "foo"), "key1", {"data": "value1", "tag": "a"}),
        (("test", "bar"), "key2", {"data": "value2", "tag": "a"}),
        (("test", "baz"), "key3", {"data": "value3", "tag": "b"}),
    ]:
        store.put(namespace, key, value)

    tagged, first_two, foo = store.batch(
        [
            SearchOp(namespace_prefix=("test",), filter={"tag": "a"}, limit=10, offset=0),
            SearchOp(namespace_prefix=("test",), filter=None, limit=2, offset=0),
            SearchOp(namespace_prefix=("test", "foo"), filter=None, limit=10, offset=0),
        ]
    )
    assert sorted(item.key for item in tagged) == ["key1", "key2"]
    assert len(first_two) == 2
    assert [(item.namespace, item.key) for item in foo] == [(("test", "foo"), "key1")]


def test_search_by_namespace_value_and_page(store):
    for namespace, key, value in [
        (("test", "docs"), "doc1", {"title": "First Doc", "author": "Alice", "tags": ["x"]}),
        (("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["y"]}),
        (("test", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["z"]}),
    ]:
        store.put(namespace, key, value)

    assert len(store.search(("test",))) == 3
    docs = store.search(("test", "docs"))
    assert sorted(item.key for item in docs) == ["doc1", "doc2"]
    assert {item.namespace for item in docs} == {("test", "docs")}
    alice = store.search(("test",), filter={"author": "Alice"})
    assert sorted(item.key for item in alice) == ["doc1", "img1"]
    assert store.search(("test",), filter={"tags": ["y"]})[0].key == "doc2"
    assert len(store.search(("test",), limit=2)) == 2
    assert len(store.search(("test",), offset=2)) == 1
    # A prefix is whole labels: ("test", "doc") is not a prefix of ("test", "docs").
    assert store.search(("test", "doc")) == []


def test_numeric_comparison_filters(store):
    namespace = ("test", "scores")
    for key, score in [("a", 2), ("b", 9), ("c", 10), ("d", 11), ("e", 9.5)]:
        store.put(namespace, key, {"score": score})

    def scores(filter_: dict) -> list:
        return sorted(item.value["score"] for item in store.search(namespace, filter=filter_))

    assert scores({"score": {"$gte": 10}}) == [10, 11]
    assert scores({"score": {"$gt": 9}}) == [9.5, 10, 11]
    assert scores({"score": {"$lt": 10}}) == [2, 9, 9.5]
    assert scores({"score": {"$lte": 9}}) == [2, 9]
    assert scores({"score": {"$ne": 9}}) == [2, 9.5, 10, 11]
    store.put(("test", "names"), "a", {"name": "apple"})
    store.put(("test", "names"), "b", {"name": "banana"})
    found = store.search(("test", "names"), filter={"name": {"$gt": "apple"}})
    assert [item.value["name"] for item in found] == ["banana"]


def test_list_namespaces_with_prefix_suffix_depth_and_page(store):
    namespaces = [
        ("test", "documents", "public"),
        ("test", "documents", "private"),
        ("test", "images", "public"),
        ("test", "images", "private"),
        ("prod", "documents", "public"),
        ("prod", "documents", "private"),
    ]
    for namespace in namespaces:
        store.put(namespace, "dummy", {"content": "dummy"})

    assert sorted(store.list_namespaces()) == sorted(namespaces)
    assert len(store.list_namespaces(prefix=("test",))) == 4
    public = store.list_namespaces(suffix=("public",))
    assert sorted(public) == sorted(ns for ns in namespaces if ns[-1] == "public")
    assert sorted(store.list_namespaces(max_depth=2)) == [
        ("prod", "documents"),
        ("test", "documents"),
        ("test", "images"),
    ]
    assert len(store.list_namespaces(limit=3)) == 3
    listed = store.batch(
        [ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("public",)),))]
    )[0]
    assert all(ns[-1] == "public" for ns in listed)


# --- InMemoryStore's cases --------------------------------------------------------------


def test_list_namespaces_basic_and_wildcards(store):
    namespaces = [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
        ("users", "456", "settings"),
        ("admin", "users", "789"),
    ]
    for i, namespace in enumerate(namespaces):
        store.put(namespace, f"id_{i}", {"data": f"value_{i:02d}"})

    assert store.list_namespaces(prefix=("a", "b")) == [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(suffix=("f",)) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == [
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(suffix=("*", "f")) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]
    assert store.list_namespaces(prefix=("users", "*")) == [
        ("users", "123"),
        ("users", "456", "settings"),
    ]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []


def test_list_namespaces_pagination_and_empty_store(store):
    assert store.list_namespaces() == []
    for i in range(12):
        store.put(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": i})
    assert store.list_namespaces(prefix=("namespace",), limit=5) == [
        ("namespace", f"sub_{i:02d}") for i in range(5)
    ]
    assert store.list_namespaces(prefix=("namespace",), limit=5, offset=5) == [
        ("namespace", f"sub_{i:02d}") for i in range(5, 10)
    ]
    assert store.list_namespaces(prefix=("namespace",), limit=5, offset=10) == [
        ("namespace", "sub_10"),
        ("namespace", "sub_11"),
    ]


def test_invalid_namespaces_are_refused_and_langgraph_is_a_label_like_any(store, agent):
    doc = {"foo": "bar"}
    for namespace in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "foo", doc)
        with pytest.raises(InvalidNamespaceError):
            asyncio.run(store.aput(namespace, "foo", doc))
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("the", "thing.about"), "foo", doc)])
    assert not Memory.objects.filter(agent=agent).exists()

    for namespace in [("foo", "langgraph", "foo"), ("langgraph", "foo")]:
        # The public put refuses a "langgraph" root; a batch op goes past it, as LangGraph's.
        store.batch([PutOp(namespace, "bar", doc)])
        assert store.get(namespace, "bar").value == doc
        assert store.search(namespace)[0].value == doc
        store.delete(namespace, "bar")
        assert store.get(namespace, "bar") is None


def test_search_with_query_ranks_and_finds(store, rank_everything):
    docs = [
        ("doc1", {"text": "short text"}),
        ("doc2", {"text": "longer text document"}),
        ("doc3", {"text": "longest text document here"}),
        ("doc4", {"description": "text in description field"}),
        ("doc5", {"content": "text in content field"}),
        ("doc6", {"body": "text in body field"}),
    ]
    for key, value in docs:
        store.put(("test",), key, value)
    found = [item.key for item in store.search(("test",), query="text document")]
    assert found[:2] in (["doc2", "doc3"], ["doc3", "doc2"])
    assert all(item.score is not None for item in store.search(("test",), query="document"))
    assert all(item.score is None for item in store.search(("test",)))


def test_an_update_moves_the_items_rank(store, rank_everything):
    store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("test",), "doc2", {"text": "something about dogs"})
    store.put(("test",), "doc3", {"text": "text about birds"})
    initial = store.search(("test",), query="Zany Xerxes")
    assert initial[0].key == "doc1"

    store.put(("test",), "doc1", {"text": "new text about dogs"})
    after = store.search(("test",), query="Zany Xerxes")
    after_score = next((item.score for item in after if item.key == "doc1"), 0.0)
    assert after_score < initial[0].score
    renewed = store.search(("test",), query="new text about dogs")
    assert renewed[0].key == "doc1"
    assert renewed[0].score > after_score


def test_search_with_query_and_filters(store, rank_everything):
    for key, value in [
        ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
        ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
        ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
        ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ]:
        store.put(("test",), key, value)

    # Recall answers what the query is about: LangGraph's stores also list the red car for
    # "apple" (every item passing the filter, ranked); here it is found by what it is.
    apples = store.search(("test",), query="apple", filter={"color": "red"})
    assert [item.key for item in apples] == ["doc1"]
    cars = store.search(("test",), query="car", filter={"color": "red"})
    assert [item.key for item in cars] == ["doc2"]
    assert [item.key for item in store.search(("test",), query="apple")] in (
        ["doc1", "doc3"],
        ["doc3", "doc1"],
    )
    both = store.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    assert [item.key for item in both] == ["doc3"]
    # LangGraph's case asks "bbbbluuu", a word no item holds: recall's lexical side finds
    # none and its vector side (a bag-of-words model here) gives unrelated texts no strength,
    # so the filter alone is asked here.
    above = store.search(("test",), filter={"score": {"$gt": 3.2}})
    assert sorted(item.key for item in above) == ["doc1", "doc3", "doc4"]


def test_search_with_query_pages(store, rank_everything):
    for i in range(5):
        store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
    first = store.search(("test",), query="test", limit=2)
    second = store.search(("test",), query="test", limit=2, offset=2)
    assert len(first) == len(second) == 2
    assert {item.key for item in first}.isdisjoint(item.key for item in second)
    assert len(store.search(("test",), query="test", limit=10)) == 5


def test_search_query_edge_cases(store, rank_everything):
    store.put(("test",), "doc1", {"text": "test document"})
    for query in ["", None, "test " * 100, "test!@#$%^&*()"]:
        assert [item.key for item in store.search(("test",), query=query)] == ["doc1"]


# --- async ------------------------------------------------------------------------------


def test_the_async_methods_do_what_the_sync_ones_do(store, rank_everything):
    async def scenario():
        await store.aput(("test", "async"), "a", {"text": "red apple", "color": "red"})
        await store.aput(("test", "async"), "b", {"text": "blue car", "color": "blue"})
        await store.abatch([PutOp(("test", "many"), f"k{i}", {"index": i}) for i in range(5)])
        got = await store.aget(("test", "async"), "a")
        found = await store.asearch(("test",), query="apple", filter={"color": "red"})
        many = await store.asearch(("test", "many"), filter={"index": {"$gt": 2}})
        namespaces = await store.alist_namespaces(prefix=("test",))
        await store.adelete(("test", "async"), "a")
        gone = await store.aget(("test", "async"), "a")
        # The async client's connections belong to this event loop: closed before it ends.
        await store.aclose()
        return got, found, many, namespaces, gone

    got, found, many, namespaces, gone = asyncio.run(scenario())
    assert got.value == {"text": "red apple", "color": "red"}
    assert [item.key for item in found] == ["a"]
    assert sorted(item.value["index"] for item in many) == [3, 4]
    assert namespaces == [("test", "async"), ("test", "many")]
    assert gone is None


def test_search_by_meaning_over_two_items_finds_the_one_that_answers(store, settings):
    """Regression: over two items, "which colour scheme does the user like" found nothing."""
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "EMBEDDINGS": {"BACKEND": "stores.embeddings.local.LocalE5Backend", "OPTIONS": {}},
    }
    store.put(("prefs",), "office", {"content": "works from Lisbon on Fridays"})
    store.put(("prefs",), "editor", {"content": "prefers dark mode in every editor"})
    reembed_sweep()

    found = store.search(("prefs",), query="which colour scheme does the user like")

    assert [item.key for item in found][:1] == ["editor"]
