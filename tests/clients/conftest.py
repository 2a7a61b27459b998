from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from memoryadmin.clients.langgraph_store import MemoryadminStore
from stores.engine.actors import Actor
from stores.models import Agent
from stores.services import record_edit
from tests.factories import agent_token


@pytest.fixture
def store(live_server, agent) -> Iterator[MemoryadminStore]:
    """The agent's LangGraph store on the test server, closed after the test: a connection
    left open keeps the server's request thread, and its database session, alive."""
    with MemoryadminStore(live_server.url, token=agent_token(agent)[1]) as store:
        yield store


@pytest.fixture
def rank_everything(settings):
    """Recall with no relevance floor: every candidate ranked, as LangGraph's stores rank."""
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "SEARCH": {**settings.MEMORYADMIN["SEARCH"], "MIN_SCORE": 0.0},
    }


@pytest.fixture
def person_corrects() -> Callable[[Agent, int, str, str], None]:
    """A person's phrase edit of a memory in memoryadmin, as the web UI makes it."""

    def correct(agent: Agent, memory_id: int, old: str, new: str) -> None:
        result = record_edit(
            surface_key="memory",
            agent=agent,
            ref=memory_id,
            actor=Actor.maintainer("reviewer"),
            old_string=old,
            new_string=new,
        )
        assert result.ok, result

    return correct
