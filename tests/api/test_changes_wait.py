"""Long polls of the change feed against the real ASGI application, and cursors over restarts."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx2
import pytest
import requests
from django.db import OperationalError, connections

from tests.factories import RecordMaker, agent_token
from tests.load.server import gunicorn
from tests.servers import asgi_server

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def served():
    with asgi_server() as base:
        yield base


def get_feed(base: str, raw: str, query: str = "", timeout: float = 60) -> tuple[dict, float]:
    """The feed's answer and when it arrived (time.monotonic)."""
    answer = requests.get(
        f"{base}/api/v1/changes/{query}",
        headers={"Authorization": f"Bearer {raw}"},
        timeout=timeout,
    )
    assert answer.status_code == 200, answer.text
    assert "X-Memoryadmin-Wait" not in answer.headers
    return answer.json(), time.monotonic()


def write_and_close(agent, text: str) -> None:
    """A write from a thread of its own, whose connection must not outlive it.

    On SQLite the test database lives in memory, shared by the threads' connections, where a
    held poll's read of the feed locks its table and a write that meets it is refused at once
    (no busy timeout applies there; the file database a server runs on, in WAL mode, lets
    readers and a writer pass). The write is then tried again: it was rolled back whole.
    """
    try:
        for attempt in range(50):
            try:
                RecordMaker().memory(agent, text)
                return
            except OperationalError as error:
                if "table is locked" not in str(error) or attempt == 49:
                    raise
                time.sleep(0.05)
    finally:
        connections.close_all()


class Poll(threading.Thread):
    """A long poll running in the background while the test writes."""

    def __init__(self, base: str, raw: str, query: str) -> None:
        super().__init__(daemon=True)
        self.args = (base, raw, query)
        self.answer: dict | None = None
        self.arrived = 0.0

    def run(self) -> None:
        self.answer, self.arrived = get_feed(*self.args)


def test_a_held_poll_answers_within_a_second_of_a_commit(served, agent):
    make = RecordMaker()
    make.memory(agent, "Read before the poll.")
    _token, raw = agent_token(agent)
    head, _ = get_feed(served, raw)
    poll = Poll(served, raw, f"?after={head['next']}&wait=20")
    poll.start()
    time.sleep(1.0)  # the poll is being held by now
    assert poll.is_alive(), "the poll came back with nothing to report"

    written = make.memory(agent, "Committed while the poll waits.")
    committed = time.monotonic()
    poll.join(20)

    assert poll.answer is not None
    assert [item["id"] for item in poll.answer["results"]] == [written.pk]
    assert poll.arrived - committed < 1.0


def test_a_held_poll_times_out_with_an_empty_page_and_the_same_cursor(served, agent):
    RecordMaker().memory(agent)
    _token, raw = agent_token(agent)
    head, _ = get_feed(served, raw)
    started = time.monotonic()

    answer, arrived = get_feed(served, raw, f"?after={head['next']}&wait=1")

    assert answer == {"status": "ok", "results": [], "next": head["next"]}
    assert arrived - started >= 1.0


def test_a_poll_with_changes_waiting_answers_at_once(served, agent):
    written = RecordMaker().memory(agent)
    _token, raw = agent_token(agent)

    answer, _ = get_feed(served, raw, "?wait=30", timeout=10)

    assert [item["id"] for item in answer["results"]] == [written.pk]


def test_another_agents_commit_does_not_answer_a_held_poll(served, agent, other_agent):
    make = RecordMaker()
    _token, raw = agent_token(agent)
    head, _ = get_feed(served, raw, "?after=now")
    started = time.monotonic()
    poll = Poll(served, raw, f"?after={head['next']}&wait=2")
    poll.start()
    time.sleep(0.5)
    make.memory(other_agent, "Someone else's memory.")
    poll.join(20)

    assert poll.answer == {"status": "ok", "results": [], "next": head["next"]}
    assert poll.arrived - started >= 2.0


def test_many_held_polls_hold_no_thread_each_and_all_wake(served, agent, settings):
    """Thirty-two polls held at once: a thread each would show in the server's process
    (this one), and asgiref would have run out of them before the last was answered."""
    _token, raw = agent_token(agent)
    head, _ = get_feed(served, raw, "?after=now")
    polls = 32
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "CHANGES": {**settings.MEMORYADMIN["CHANGES"], "MAX_HELD_POLLS": polls},
    }
    answers: list[dict] = []
    threads_while_held: list[int] = []
    url = f"{served}/api/v1/changes/?after={head['next']}&wait=20"

    async def hold_all() -> None:
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {raw}"}, timeout=30
        ) as client:
            pending = [asyncio.ensure_future(client.get(url)) for _ in range(polls)]
            await asyncio.sleep(1.5)
            threads_while_held.append(threading.active_count())
            await asyncio.to_thread(write_and_close, agent, "One write for everyone.")
            for response in await asyncio.gather(*pending):
                assert response.status_code == 200
                answers.append(response.json())

    before = threading.active_count()
    asyncio.run(hold_all())

    assert len(answers) == polls
    assert all(len(answer["results"]) == 1 for answer in answers)
    assert threads_while_held[0] - before < polls // 2


def test_a_cursor_outlives_the_server(agent):
    make = RecordMaker()
    first = make.memory(agent, "Before the restart.")
    _token, raw = agent_token(agent)
    with asgi_server() as base:
        page, _ = get_feed(base, raw)
    assert [item["id"] for item in page["results"]] == [first.pk]

    later = [make.memory(agent, f"While it was down, {n}.") for n in range(3)]

    with asgi_server() as base:
        resumed, _ = get_feed(base, raw, f"?after={page['next']}")
    assert [item["id"] for item in resumed["results"]] == [record.pk for record in later]


def test_another_process_wakes_on_a_commit_here_and_its_cursor_survives_a_restart(
    postgres_only, agent
):
    """The web server is another process (gunicorn with uvicorn workers): the commit made here
    reaches its held poll through PostgreSQL's NOTIFY, and a restart keeps the cursor."""
    make = RecordMaker()
    make.memory(agent, "Already there.")
    _token, raw = agent_token(agent)
    with gunicorn(workers=2) as base:
        head, _ = get_feed(base, raw)
        poll = Poll(base, raw, f"?after={head['next']}&wait=20")
        poll.start()
        time.sleep(1.0)
        assert poll.is_alive()
        woke = make.memory(agent, "Committed by another process.")
        committed = time.monotonic()
        poll.join(20)
        assert [item["id"] for item in poll.answer["results"]] == [woke.pk]
        assert poll.arrived - committed < 1.0
        cursor = poll.answer["next"]

    while_down = make.memory(agent, "Written while the server was stopped.")

    with gunicorn(workers=1) as base:
        resumed, _ = get_feed(base, raw, f"?after={cursor}")
    assert [item["id"] for item in resumed["results"]] == [while_down.pk]


def test_a_token_holds_at_most_its_share_of_polls_and_the_rest_are_told_when_to_retry(
    served, agent, settings
):
    """Regression: 300 polls of one token, within its rate limit, slowed every other request
    (median 12 -> 78 ms) and came back late themselves."""
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "CHANGES": {**settings.MEMORYADMIN["CHANGES"], "MAX_HELD_POLLS": 3},
    }
    _token, raw = agent_token(agent)
    _other, other_raw = agent_token(agent)
    head, _ = get_feed(served, raw, "?after=now")
    url = f"{served}/api/v1/changes/?after={head['next']}&wait=20"
    answers: list = []

    async def hold_too_many() -> None:
        async with httpx2.AsyncClient(timeout=30) as client:
            mine = {"Authorization": f"Bearer {raw}"}
            held = [asyncio.ensure_future(client.get(url, headers=mine)) for _ in range(3)]
            await asyncio.sleep(1.5)
            answers.append(await client.get(url, headers=mine))
            theirs = asyncio.ensure_future(
                client.get(url, headers={"Authorization": f"Bearer {other_raw}"})
            )
            await asyncio.sleep(0.5)
            await asyncio.to_thread(write_and_close, agent, "One write for everyone.")
            answers.extend(await asyncio.gather(*held, theirs))
            answers.append(await client.get(url, headers=mine))  # the held ones are gone

    asyncio.run(hold_too_many())

    refused, *held, theirs, again = answers
    assert refused.status_code == 429
    assert refused.json()["code"] == "too_many_polls"
    assert refused.json()["retry_after"] >= 1
    assert refused.headers["Retry-After"] == str(refused.json()["retry_after"])
    assert "3" in refused.json()["message"]
    assert [answer.status_code for answer in held] == [200, 200, 200]
    assert all(len(answer.json()["results"]) == 1 for answer in held)
    assert theirs.status_code == 200 and len(theirs.json()["results"]) == 1
    assert again.status_code == 200


def test_a_poll_after_now_answers_with_the_change_that_wakes_it(served, agent):
    """Regression: `now` was read again when the poll woke, past the change that woke it, so
    the poll answered empty after its whole wait with a `next` beyond that change."""
    make = RecordMaker()
    make.memory(agent, "Before the poll.")
    _token, raw = agent_token(agent)
    poll = Poll(served, raw, "?after=now&wait=20")
    started = time.monotonic()
    poll.start()
    time.sleep(1.0)
    assert poll.is_alive(), "the poll came back with nothing to report"

    written = make.memory(agent, "Committed while the poll waits.")
    poll.join(20)

    assert poll.answer is not None
    assert [item["id"] for item in poll.answer["results"]] == [written.pk]
    assert poll.arrived - started < 10
    resumed, _ = get_feed(served, raw, f"?after={poll.answer['next']}")
    assert resumed["results"] == []
