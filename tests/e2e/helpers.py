"""Reading what the stack stored, straight from its database, and logging in to its UI."""

from __future__ import annotations

import re
from dataclasses import dataclass

from stores.embeddings.fake import FakeBackend
from stores.models import Memory, text_fingerprint
from tests.e2e.stack import Stack


@dataclass(frozen=True)
class StoredMemory:
    id: int
    content: str
    tags: list[str]
    category: str
    version: int
    text_hash: str
    embedding_hash: str
    embedding_model: str
    embedding: list[float] | None

    @property
    def fresh(self) -> bool:
        return self.embedding is not None and self.embedding_hash == self.text_hash

    def vector_matches_text(self) -> bool:
        """The stored vector is the one the backend makes for the text it claims to be of."""
        assert self.embedding is not None
        text = Memory(content=self.content, tags=self.tags, category=self.category).embedding_text()
        expected = FakeBackend().embed_documents([text])[0]
        pairs = zip(self.embedding, expected, strict=True)
        return self.embedding_hash == text_fingerprint(text) and all(
            abs(stored - wanted) < 1e-5 for stored, wanted in pairs
        )


def stored_memories(stack: Stack, ids: list[int]) -> dict[int, StoredMemory]:
    rows = stack.query(
        "SELECT id, content, tags, category, version, text_hash, embedding_hash, embedding_model, "
        "embedding::text FROM stores_memory WHERE id = ANY(%s)",
        (ids,),
    )
    return {
        row[0]: StoredMemory(
            *row[:8],
            embedding=[float(x) for x in row[8].strip("[]").split(",")] if row[8] else None,
        )
        for row in rows
    }


def all_fresh(stack: Stack, ids: list[int]) -> dict[int, StoredMemory] | None:
    stored = stored_memories(stack, ids)
    if len(stored) == len(ids) and all(memory.fresh for memory in stored.values()):
        return stored
    return None


def log_in(stack: Stack) -> dict[str, str]:
    """Log in as the administrator through the login form; return the session cookies.

    The cookies are Secure (production), which a client only sends over HTTPS; the proxy
    in front is played by a header, so they are handed back by hand.
    """
    page = stack.get("/accounts/login/")
    assert page.status_code == 200
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token is not None
    cookies = {"csrftoken": page.cookies["csrftoken"]}
    answer = stack.request(
        "POST",
        "/accounts/login/",
        data={
            "username": "admin",
            "password": stack.admin_password,
            "csrfmiddlewaretoken": token.group(1),
        },
        cookies=cookies,
        headers={"Referer": f"https://127.0.0.1:{stack.http_port}/accounts/login/"},
    )
    assert answer.status_code == 302, answer.text[:500]
    return {**cookies, "sessionid": answer.cookies["sessionid"]}
