from __future__ import annotations

import pytest

from tests.factories import AgentFactory, RecordMaker, UserFactory

FAKE_EMBEDDINGS = {"BACKEND": "stores.embeddings.fake.FakeBackend", "OPTIONS": {}}


@pytest.fixture(autouse=True)
def _test_settings(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # The deterministic fake embedder; tests of the real model ask for it explicitly.
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "EMBEDDINGS": FAKE_EMBEDDINGS}


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
