from __future__ import annotations

import os

os.environ.setdefault("MEMORYADMIN_EMBEDDING_BACKEND", "stores.embeddings.fake.FakeBackend")

import pytest

from tests.factories import AgentFactory, RecordMaker, UserFactory


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def agent(db):
    return AgentFactory()


@pytest.fixture
def other_agent(db):
    return AgentFactory()


@pytest.fixture
def make(db) -> RecordMaker:
    return RecordMaker()


@pytest.fixture
def staff_user(db):
    return UserFactory(is_staff=True)


@pytest.fixture
def postgres_only(db):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (run with MEMORYADMIN_DATABASE_URL set)")
