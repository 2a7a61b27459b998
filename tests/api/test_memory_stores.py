"""The memory stores API, driven by the official Anthropic SDK (`client.beta.memory_stores`)
over real HTTP to the test server (Django's live_server)."""

from __future__ import annotations

import hashlib

import anthropic
import pytest
from anthropic import Anthropic

from stores.models import MemoryFile, Revision
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
