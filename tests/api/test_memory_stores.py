"""The memory stores API, driven by the official Anthropic SDK (`client.beta.memory_stores`)
over real HTTP to the test server (Django's live_server)."""

from __future__ import annotations

import hashlib

import anthropic
import httpx2
import pytest
from anthropic import Anthropic
from django.test import Client
from django.urls import reverse

from stores.engine.actors import Actor
from stores.models import MemoryFile, Revision
from stores.services import record_edit
from stores.services.takeback import conversation_takeback
from tests.factories import agent_token


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sdk(live_server, raw: str, *, as_api_key: bool = False) -> Anthropic:
    credentials = {"api_key": raw} if as_api_key else {"auth_token": raw, "api_key": None}
    return Anthropic(base_url=f"{live_server.url}/api", max_retries=0, **credentials)


@pytest.fixture
def client(live_server, agent):
    with sdk(live_server, agent_token(agent)[1]) as client:
        yield client


@pytest.fixture
def stores(client):
    return client.beta.memory_stores


@pytest.fixture
def store(stores):
    return stores.create(name="User preferences", description="What the user likes.")


def test_a_memory_is_a_memory_file_below_its_stores_folder(stores, store, agent):
    memory = stores.memories.create(store.id, path="/notes/todo.md", content="Buy tea.\n")
    assert memory.type == "memory"
    assert memory.path == "/notes/todo.md"
    assert memory.content is None
    assert memory.content_sha256 == sha256("Buy tea.\n")
    assert memory.content_size_bytes == 9
    file = MemoryFile.objects.get(agent=agent)
    assert file.path == f"/memories/{store.id}/notes/todo.md"
    assert file.content == "Buy tea.\n"
    revision = Revision.objects.get(agent=agent, surface="file")
    assert memory.memory_version_id == f"memver_{revision.pk}"
    fetched = stores.memories.retrieve(memory.id, memory_store_id=store.id)
    assert fetched.content == "Buy tea.\n"


def error_of(raised: pytest.ExceptionInfo[anthropic.APIStatusError]) -> dict:
    body = raised.value.body
    assert isinstance(body, dict)
    return body


# --- stores ----------------------------------------------------------------------------


def test_a_store_is_created_retrieved_updated_and_listed(stores, store):
    assert store.type == "memory_store"
    assert store.id.startswith("memstore_")
    assert store.archived_at is None
    assert stores.retrieve(store.id).name == "User preferences"
    updated = stores.update(store.id, name="Preferences", metadata={"user": "ana", "team": "tea"})
    assert (updated.name, updated.description) == ("Preferences", "What the user likes.")
    again = stores.update(store.id, metadata={"team": None})
    assert again.metadata == {"user": "ana"}
    assert [listed.id for listed in stores.list()] == [store.id]


def test_stores_are_listed_over_several_pages(stores):
    made = [stores.create(name=f"store {n}").id for n in range(5)]
    first = stores.list(limit=2)
    assert len(first.data) == 2
    assert first.next_page
    assert sorted(listed.id for listed in stores.list(limit=2)) == sorted(made)
    assert sum(1 for _ in stores.list(limit=2).iter_pages()) == 3


def test_an_archived_store_is_read_only_and_archiving_again_keeps_the_first_time(stores, store):
    memory = stores.memories.create(store.id, path="/a.md", content="kept")
    archived = stores.archive(store.id)
    assert archived.archived_at is not None
    assert stores.archive(store.id).archived_at == archived.archived_at
    assert [listed.id for listed in stores.list()] == []
    assert [listed.id for listed in stores.list(include_archived=True)] == [store.id]
    with pytest.raises(anthropic.ConflictError) as raised:
        stores.memories.create(store.id, path="/b.md", content="refused")
    assert error_of(raised)["error"]["type"] == "conflict_error"
    with pytest.raises(anthropic.ConflictError):
        stores.memories.update(memory.id, memory_store_id=store.id, content="refused")
    with pytest.raises(anthropic.ConflictError):
        stores.update(store.id, name="refused")
    assert stores.memories.retrieve(memory.id, memory_store_id=store.id).content == "kept"
    assert stores.memories.delete(memory.id, memory_store_id=store.id).type == "memory_deleted"


def test_deleting_a_store_forgets_its_memories_and_keeps_their_history(stores, store, agent):
    stores.memories.create(store.id, path="/a.md", content="one")
    stores.memories.create(store.id, path="/b/c.md", content="two")
    deleted = stores.delete(store.id)
    assert (deleted.type, deleted.id) == ("memory_store_deleted", store.id)
    assert not MemoryFile.objects.filter(agent=agent).exists()
    assert Revision.objects.filter(agent=agent, surface="file", op="forget").count() == 2
    with pytest.raises(anthropic.NotFoundError):
        stores.retrieve(store.id)


# --- memories --------------------------------------------------------------------------


def test_a_path_in_use_or_overlapping_is_a_path_conflict(stores, store):
    memory = stores.memories.create(store.id, path="/notes/todo.md", content="x")
    for path in ("/notes/todo.md", "/notes", "/notes/todo.md/deeper.md"):
        with pytest.raises(anthropic.ConflictError) as raised:
            stores.memories.create(store.id, path=path, content="y")
        error = error_of(raised)["error"]
        assert error["type"] == "memory_path_conflict_error"
        assert error["conflicting_path"] == path
    same = stores.memories.create
    with pytest.raises(anthropic.ConflictError) as raised:
        same(store.id, path="/notes/todo.md", content="y")
    assert error_of(raised)["error"]["conflicting_memory_id"] == memory.id


def test_a_bad_path_is_an_invalid_request_naming_what_is_wrong(stores, store):
    for path, words in (
        ("notes.md", "starting with /"),
        ("/a/../b.md", "escape"),
        ("/a//b.md", "empty segment"),
        ("/" + "/".join("s" * 21), "more than 20 segments"),
        ("/cafe\u0301.md", "Normalization Form C"),
    ):
        with pytest.raises(anthropic.BadRequestError) as raised:
            stores.memories.create(store.id, path=path, content="x")
        error = error_of(raised)["error"]
        assert error["type"] == "invalid_request_error"
        assert words in error["message"]
        assert "memstore_" not in error["message"]


def test_list_matches_whole_segments_rolls_up_deeper_folders_and_pages(stores, store):
    for path in ("/notes/a.md", "/notes/b/c.md", "/notes/b/d.md", "/notes-archive/e.md", "/f.md"):
        stores.memories.create(store.id, path=path, content=path)
    listed = stores.memories.list(store.id, path_prefix="/notes/")
    assert [item.path for item in listed] == ["/notes/a.md", "/notes/b/c.md", "/notes/b/d.md"]
    assert all(item.content is None for item in listed)
    shallow = stores.memories.list(store.id, depth=1)
    assert [(item.type, item.path) for item in shallow] == [
        ("memory", "/f.md"),
        ("memory_prefix", "/notes-archive/"),
        ("memory_prefix", "/notes/"),
    ]
    full = stores.memories.list(store.id, path_prefix="/notes/", depth=1, view="full")
    assert [(item.path, getattr(item, "content", None)) for item in full] == [
        ("/notes/a.md", "/notes/a.md"),
        ("/notes/b/", None),
    ]
    pages = list(stores.memories.list(store.id, limit=2).iter_pages())
    assert [len(page.data) for page in pages] == [2, 2, 1]
    with pytest.raises(anthropic.BadRequestError):
        stores.memories.list(store.id, path_prefix="/notes")


def test_an_update_with_a_stale_precondition_writes_nothing(stores, store, agent):
    memory = stores.memories.create(store.id, path="/a.md", content="first")
    updated = stores.memories.update(
        memory.id,
        memory_store_id=store.id,
        content="second",
        precondition={"type": "content_sha256", "content_sha256": sha256("first")},
        view="full",
    )
    assert (updated.content, updated.content_sha256) == ("second", sha256("second"))
    assert updated.memory_version_id != memory.memory_version_id
    with pytest.raises(anthropic.ConflictError) as raised:
        stores.memories.update(
            memory.id,
            memory_store_id=store.id,
            content="third",
            precondition={"type": "content_sha256", "content_sha256": sha256("first")},
        )
    assert error_of(raised)["error"]["type"] == "memory_precondition_failed_error"
    assert MemoryFile.objects.get(agent=agent).content == "second"
    revisions = Revision.objects.filter(agent=agent, surface="file").count()
    unchanged = stores.memories.update(
        memory.id,
        memory_store_id=store.id,
        content="second",
        precondition={"type": "content_sha256", "content_sha256": sha256("first")},
    )
    assert unchanged.memory_version_id == updated.memory_version_id
    assert Revision.objects.filter(agent=agent, surface="file").count() == revisions


def test_an_update_renames_keeping_the_id_and_refuses_a_path_in_use(stores, store):
    memory = stores.memories.create(store.id, path="/a.md", content="x")
    stores.memories.create(store.id, path="/b.md", content="y")
    moved = stores.memories.update(memory.id, memory_store_id=store.id, path="/c/a.md")
    assert (moved.id, moved.path) == (memory.id, "/c/a.md")
    with pytest.raises(anthropic.ConflictError) as raised:
        stores.memories.update(memory.id, memory_store_id=store.id, path="/b.md")
    assert error_of(raised)["error"]["type"] == "memory_path_conflict_error"


def test_a_delete_checks_the_expected_content(stores, store, agent):
    memory = stores.memories.create(store.id, path="/a.md", content="x")
    with pytest.raises(anthropic.ConflictError) as raised:
        stores.memories.delete(
            memory.id, memory_store_id=store.id, expected_content_sha256=sha256("other")
        )
    assert error_of(raised)["error"]["type"] == "memory_precondition_failed_error"
    assert MemoryFile.objects.filter(agent=agent).exists()
    deleted = stores.memories.delete(
        memory.id, memory_store_id=store.id, expected_content_sha256=sha256("x")
    )
    assert (deleted.type, deleted.id) == ("memory_deleted", memory.id)
    with pytest.raises(anthropic.NotFoundError):
        stores.memories.retrieve(memory.id, memory_store_id=store.id)


def test_content_sha256_is_of_the_exact_bytes_sent(stores, store):
    content = "Caf\u00e9\r\n  trailing  \n"
    memory = stores.memories.create(store.id, path="/a.md", content=content, view="full")
    assert memory.content == content
    assert memory.content_sha256 == sha256(content)
    assert memory.content_size_bytes == len(content.encode("utf-8"))


# --- versions --------------------------------------------------------------------------


def test_versions_record_each_change_and_a_deleted_memorys_history_stays(stores, store):
    memory = stores.memories.create(store.id, path="/a.md", content="one")
    stores.memories.update(memory.id, memory_store_id=store.id, content="two")
    stores.memories.delete(memory.id, memory_store_id=store.id)
    versions = list(stores.memory_versions.list(store.id, memory_id=memory.id, view="full"))
    assert [version.operation for version in versions] == ["deleted", "modified", "created"]
    deleted, modified, created = versions
    assert (created.content, created.path, created.content_sha256) == (
        "one",
        "/a.md",
        sha256("one"),
    )
    assert modified.content == "two"
    assert (deleted.content, deleted.content_sha256, deleted.content_size_bytes) == (
        None,
        None,
        None,
    )
    assert deleted.path == "/a.md"
    assert all(version.memory_id == memory.id for version in versions)
    assert created.id == memory.memory_version_id
    basic = stores.memory_versions.retrieve(created.id, memory_store_id=store.id, view="basic")
    assert (basic.content, basic.content_sha256) == (None, sha256("one"))
    assert stores.memory_versions.retrieve(created.id, memory_store_id=store.id).content == "one"
    only_created = stores.memory_versions.list(store.id, operation="created")
    assert [version.id for version in only_created] == [created.id]
    assert len(list(stores.memory_versions.list(store.id, limit=1).iter_pages())) == 3


def test_a_version_says_who_wrote_it(stores, store, agent, staff_user):
    memory = stores.memories.create(store.id, path="/a.md", content="tea with sugar")
    file_id = int(memory.id.removeprefix("mem_"))
    person = Actor.for_user(staff_user)
    record_edit(
        surface_key="file",
        agent=agent,
        ref=file_id,
        actor=person,
        old_string="with",
        new_string="without",
    )
    record_edit(
        surface_key="file",
        agent=agent,
        ref=file_id,
        actor=Actor.background("tidy"),
        old_string="tea",
        new_string="Tea",
    )
    by_job, by_person, by_token = stores.memory_versions.list(store.id, memory_id=memory.id)
    assert by_token.created_by.type == "api_actor"
    assert by_token.created_by.api_key_id.startswith(f"agent:{agent.name}/")
    assert (by_person.created_by.type, by_person.created_by.user_id) == (
        "user_actor",
        person.label,
    )
    assert (by_job.created_by.type, by_job.created_by.service_account_id) == (
        "service_account_actor",
        "task:tidy",
    )


# --- the caller ------------------------------------------------------------------------


def test_another_agents_token_sees_nothing_of_the_store(live_server, stores, store, other_agent):
    memory = stores.memories.create(store.id, path="/a.md", content="mine")
    with sdk(live_server, agent_token(other_agent)[1]) as other:
        assert list(other.beta.memory_stores.list()) == []
        with pytest.raises(anthropic.NotFoundError) as raised:
            other.beta.memory_stores.retrieve(store.id)
        assert error_of(raised) == {
            "type": "error",
            "error": {"type": "not_found_error", "message": f"No memory store {store.id}."},
        }
        with pytest.raises(anthropic.NotFoundError):
            other.beta.memory_stores.memories.retrieve(memory.id, memory_store_id=store.id)
        with pytest.raises(anthropic.NotFoundError):
            other.beta.memory_stores.delete(store.id)


def test_a_wrong_token_is_an_authentication_error(live_server):
    with (
        sdk(live_server, "not-a-token") as stranger,
        pytest.raises(anthropic.AuthenticationError) as raised,
    ):
        stranger.beta.memory_stores.list()
    assert error_of(raised)["error"]["type"] == "authentication_error"


def test_the_token_may_come_as_x_api_key(live_server, agent):
    with sdk(live_server, agent_token(agent)[1], as_api_key=True) as client:
        made = client.beta.memory_stores.create(name="by api key")
        assert [store.id for store in client.beta.memory_stores.list()] == [made.id]


def test_a_read_only_token_reads_and_may_not_write(live_server, stores, store, agent):
    with sdk(live_server, agent_token(agent, read_only=True)[1]) as reader:
        assert reader.beta.memory_stores.retrieve(store.id).id == store.id
        with pytest.raises(anthropic.PermissionDeniedError) as raised:
            reader.beta.memory_stores.memories.create(store.id, path="/a.md", content="x")
    assert error_of(raised)["error"]["type"] == "permission_error"


# --- ordinary writes -------------------------------------------------------------------


def test_in_review_mode_a_write_applies_and_waits_for_a_person(stores, store, agent):
    agent.review_mode = agent.ReviewMode.ALL
    agent.save()
    memory = stores.memories.create(store.id, path="/a.md", content="pending", view="full")
    assert memory.content == "pending"
    revision = Revision.objects.get(agent=agent, surface="file")
    assert revision.review == Revision.Review.PENDING
    assert revision.channel == "api"


def test_a_conversations_writes_are_taken_back_like_any_other(stores, store, agent):
    memory = stores.memories.create(
        store.id,
        path="/a.md",
        content="from a bad conversation",
        extra_headers={"Memory-Source": "conversation=c-81; platform=discord"},
    )
    revision = Revision.objects.get(agent=agent, surface="file")
    assert (revision.source_conversation, revision.source_platform) == ("c-81", "discord")

    taken = conversation_takeback(agent=agent, actor=Actor.maintainer(), conversation="c-81")

    assert taken.count == 1
    with pytest.raises(anthropic.NotFoundError):
        stores.memories.retrieve(memory.id, memory_store_id=store.id)
    operations = [v.operation for v in stores.memory_versions.list(store.id, memory_id=memory.id)]
    assert operations == ["deleted", "created"]


# --- redaction -------------------------------------------------------------------------


def test_a_redacted_version_loses_its_text_here_and_in_the_ui_history(
    stores, store, agent, staff_user
):
    memory = stores.memories.create(store.id, path="/a.md", content="The vault word is zebra.")
    stores.memories.update(memory.id, memory_store_id=store.id, content="Rotated.")

    redacted = stores.memory_versions.redact(memory.memory_version_id, memory_store_id=store.id)

    assert redacted.id == memory.memory_version_id
    assert (redacted.content, redacted.path) == (None, None)
    assert (redacted.content_sha256, redacted.content_size_bytes) == (None, None)
    assert redacted.redacted_at is not None
    assert redacted.redacted_by.type == "api_actor"
    assert redacted.operation == "created"
    again = stores.memory_versions.retrieve(memory.memory_version_id, memory_store_id=store.id)
    assert (again.content, again.redacted_at) == (None, redacted.redacted_at)
    file_id = int(memory.id.removeprefix("mem_"))
    assert not any(
        "zebra" in text
        for revision in Revision.objects.filter(surface="file", record_id=file_id)
        for text in (revision.before_text, revision.after_text)
    )
    browser = Client()
    browser.force_login(staff_user)
    history = browser.get(reverse("web:record_history", args=[agent.name, "file", file_id]))
    page = history.content.decode()
    assert history.status_code == 200
    assert "zebra" not in page
    assert "Redacted" in page


def test_the_version_holding_the_current_content_is_not_redacted(stores, store, agent):
    memory = stores.memories.create(store.id, path="/a.md", content="still here")
    with pytest.raises(anthropic.BadRequestError) as raised:
        stores.memory_versions.redact(memory.memory_version_id, memory_store_id=store.id)
    assert error_of(raised)["error"]["type"] == "invalid_request_error"
    assert Revision.objects.get(agent=agent, surface="file").after_text == "still here"


def test_a_deleted_memorys_versions_are_redacted(stores, store):
    memory = stores.memories.create(store.id, path="/a.md", content="gone soon")
    stores.memories.delete(memory.id, memory_store_id=store.id)
    deleted = next(iter(stores.memory_versions.list(store.id, memory_id=memory.id)))
    assert deleted.operation == "deleted"
    stores.memory_versions.redact(deleted.id, memory_store_id=store.id)
    created = stores.memory_versions.retrieve(memory.memory_version_id, memory_store_id=store.id)
    assert (created.content, created.redacted_at is not None) == (None, True)


def test_bad_parameters_are_invalid_requests_and_write_nothing(stores, store, agent):
    memory = stores.memories.create(store.id, path="/a.md", content="x")
    refused = (
        lambda: stores.create(name=""),
        lambda: stores.update(store.id, metadata={"k" * 65: "v"}),
        lambda: stores.list(limit=0),
        lambda: stores.list(page="not-a-page"),
        lambda: stores.memories.retrieve(memory.id, memory_store_id=store.id, view="most"),
        lambda: stores.memories.list(store.id, depth=-1),
        lambda: stores.memory_versions.list(store.id, operation="renamed"),
        lambda: stores.memories.update(
            memory.id,
            memory_store_id=store.id,
            content="y",
            precondition={"type": "version", "content_sha256": sha256("x")},
        ),
    )
    for call in refused:
        with pytest.raises(anthropic.BadRequestError) as raised:
            call()
        assert error_of(raised)["error"]["type"] == "invalid_request_error"
    assert [listed.name for listed in stores.list()] == ["User preferences"]
    assert MemoryFile.objects.get(agent=agent).content == "x"


def test_its_writes_are_in_the_change_feed_with_the_token_as_actor(
    live_server, client, stores, store
):
    memory = stores.memories.create(store.id, path="/a.md", content="one")
    stores.memories.update(memory.id, memory_store_id=store.id, content="two")
    answer = httpx2.get(
        f"{live_server.url}/api/v1/changes/",
        headers={"Authorization": f"Bearer {client.auth_token}"},
    )
    items = answer.json()["results"]
    file_id = int(memory.id.removeprefix("mem_"))
    assert [(item["surface"], item["id"], item["op"], item["channel"]) for item in items] == [
        ("file", file_id, "create", "api"),
        ("file", file_id, "replace", "api"),
    ]
    assert all(item["actor"].startswith("agent:") for item in items)


def test_a_redacted_version_stays_listed_when_its_text_was_part_of_its_path(stores, store):
    memory = stores.memories.create(store.id, path="/tea.md", content="tea")
    stores.memories.update(memory.id, memory_store_id=store.id, content="coffee")
    stores.memory_versions.redact(memory.memory_version_id, memory_store_id=store.id)
    listed = list(stores.memory_versions.list(store.id, memory_id=memory.id))
    assert [(version.operation, version.redacted_at is not None) for version in listed] == [
        ("modified", False),
        ("created", True),
    ]
