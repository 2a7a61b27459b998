"""The suggestion pass's optional model judge, against a fake OpenAI-compatible chat endpoint
on loopback: its verdicts find and veto pairs, any failure leaves the rule's verdicts, and
with no judge set no request leaves the server."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.core.cache import cache

from stores.models import Agent, Memory, Suggestion
from stores.services.suggestions import suggest_for_agent
from tests.factories import SubjectFactory

RELIES = ("The user keeps the data in PostgreSQL.", "The user stores the data in PostgreSQL.")
PARIS = ("The user lives in Paris.", "The user lives in Lyon.")
# A conflict the rule finds on meaning alone (its words share only the subject): unsure.
BREAKFAST = ("The user never eats breakfast.", "The user has porridge every morning.")
DRINK = ("The user's favourite drink is tea.", "The user's favourite drink is coffee.")


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def pairs(self) -> list[dict[str, Any]]:
        return json.loads(self.body["messages"][-1]["content"])["pairs"]


@dataclass
class JudgeServer:
    """Answers each pair with the verdict scripted for its two texts, else the rule's, in
    the shape of OpenAI's chat completions; `failure` makes it answer badly instead."""

    url: str = ""
    verdicts: dict[frozenset[str], tuple[str, str]] = field(default_factory=dict)
    failure: str = ""
    requests: list[Request] = field(default_factory=list)

    def rule(self, texts: tuple[str, str], verdict: str, reason: str) -> None:
        self.verdicts[frozenset(texts)] = (verdict, reason)

    def answer(self, body: dict[str, Any]) -> tuple[int, bytes]:
        if self.failure == "status 500":
            return 500, b'{"error": {"message": "overloaded"}}'
        if self.failure == "not JSON":
            return 200, b"<html>Bad gateway</html>"
        verdicts = []
        for pair in json.loads(body["messages"][-1]["content"])["pairs"]:
            verdict, reason = self.verdicts.get(
                frozenset((pair["a"], pair["b"])), (pair["rule"], "as the rule says")
            )
            number = pair["pair"] + (100 if self.failure == "verdicts for unknown pairs" else 0)
            verdicts.append({"pair": number, "verdict": verdict, "reason": reason})
        content = json.dumps({"verdicts": verdicts})
        if self.failure == "prose instead of JSON":
            content = "Both pairs look like conflicts to me."
        completion = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
        return 200, json.dumps(completion).encode()


@pytest.fixture
def fake_judge() -> Iterator[JudgeServer]:
    state = JudgeServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(
                Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            if state.failure == "too slow":
                time.sleep(1.0)
            status, payload = state.answer(body)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # a client that gave up waiting ("too slow")

        def log_message(self, format: str, *args: object) -> None:
            pass

    # Port 0: the system picks a free one, so parallel runs and workers never collide.
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _no_remembered_verdicts() -> Iterator[None]:
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def judge_at(settings):
    def set_judge(url: str, **options: Any) -> None:
        settings.MEMORYADMIN = {
            **settings.MEMORYADMIN,
            "JUDGE": {**settings.MEMORYADMIN["JUDGE"], "URL": url, **options},
        }

    return set_judge


@pytest.fixture
def meaning_trusted(settings) -> None:
    """The rule trusts any similarity of the test's bag-of-words vectors for a negation: a
    pair one of which negates, whose words share only their subject, is flagged on meaning,
    and so unsure."""
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "SUGGEST_SIMILARITY": {"*": {"NEGATION": 0.0, "VALUE": 1.0, "REWORDED": 1.0, "SAME": 1.0}},
    }


@pytest.fixture
def embedded(django_capture_on_commit_callbacks):
    """Writes whose vectors are stored once they commit, as they are outside a test."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def pass_off(settings) -> None:
    """Writes without the pass after each: the tests run the whole-agent pass themselves."""
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "SUGGEST_AFTER_WRITE": False}


def pairs_of(agent: Agent, make, *pairs: tuple[str, str]) -> list[tuple[Memory, Memory]]:
    """Each pair about a subject of its own: the pass never pairs memories across them."""
    made = []
    for first, second in pairs:
        subject = SubjectFactory(agent=agent)
        made.append(
            (
                make.memory(agent, content=first, subject=subject),
                make.memory(agent, content=second, subject=subject),
            )
        )
    return made


def found(agent: Agent) -> dict[frozenset[str], Suggestion]:
    """The agent's suggestions by the texts of their memories."""
    texts = dict(Memory.objects.filter(agent=agent).values_list("pk", "content"))
    return {
        frozenset(texts[record.memory_id] for record in suggestion.records.all()): suggestion
        for suggestion in Suggestion.objects.filter(agent=agent).prefetch_related("records")
    }


def test_a_pair_the_rule_calls_fine_is_a_conflict_when_the_judge_says_so(
    agent, make, fake_judge, judge_at, pass_off
):
    fake_judge.rule(DRINK, "conflict", "a favourite drink is one drink")
    judge_at(fake_judge.url)
    pairs_of(agent, make, DRINK)

    assert suggest_for_agent(agent) == Counter({"conflict": 1})

    suggestion = found(agent)[frozenset(DRINK)]
    assert suggestion.kind == Suggestion.Kind.CONFLICT
    assert suggestion.reason == "judged a conflict by the model: a favourite drink is one drink"
    assert suggestion.status == Suggestion.State.OPEN


def test_the_judge_finds_a_duplicate_after_each_write_too(
    agent, make, fake_judge, judge_at, django_capture_on_commit_callbacks
):
    fake_judge.rule(RELIES, "duplicate", "relying on a database is using it")
    judge_at(fake_judge.url)
    with django_capture_on_commit_callbacks(execute=True):
        pairs_of(agent, make, RELIES)

    suggestion = found(agent)[frozenset(RELIES)]
    assert suggestion.kind == Suggestion.Kind.DUPLICATE
    assert suggestion.reason.startswith("judged a duplicate by the model: relying on")


def test_a_pair_the_judge_vetoes_is_not_suggested(
    agent, make, fake_judge, judge_at, pass_off, meaning_trusted, embedded
):
    fake_judge.rule(BREAKFAST, "fine", "porridge may be a late snack; both can be true")
    judge_at(fake_judge.url)
    with embedded():
        pairs_of(agent, make, BREAKFAST)

    assert suggest_for_agent(agent) == Counter()
    assert not Suggestion.objects.filter(agent=agent).exists()
    # The verdict is remembered for these texts: the next pass does not ask again.
    assert len(fake_judge.requests) == 1
    assert suggest_for_agent(agent) == Counter()
    assert len(fake_judge.requests) == 1


def test_the_judge_hears_only_the_pairs_the_rule_is_unsure_of(
    agent, make, fake_judge, judge_at, pass_off, meaning_trusted, embedded
):
    judge_at(fake_judge.url, MIN_SIMILARITY=1.01)
    with embedded():
        pairs_of(
            agent,
            make,
            BREAKFAST,  # flagged on meaning: the judge may veto it
            PARIS,  # flagged on its words, one value swapped: certain
            DRINK,  # fine by the rule, half its words shared: the judge may flag it
            ("The user has a cat named Tom.", "The user has a cat named Tom."),  # certain
            ("The user plays chess on Mondays.", "The user swims on Fridays."),  # far apart
        )

    suggest_for_agent(agent)

    heard = {frozenset((p["a"], p["b"])) for r in fake_judge.requests for p in r.pairs}
    assert heard == {frozenset(BREAKFAST), frozenset(DRINK)}
    asked = next(p for r in fake_judge.requests for p in r.pairs if p["a"] in BREAKFAST)
    assert asked["rule"] == "conflict" and asked["rule_reason"].startswith("about one subject")
    assert asked["similarity"] is not None
    # What the judge did not hear stays the rule's.
    assert found(agent)[frozenset(BREAKFAST)].reason.startswith("judged a conflict by the model")
    assert found(agent)[frozenset(PARIS)].reason == "differ only in 'Paris' → 'Lyon'"
    duplicate = next(s for texts, s in found(agent).items() if len(texts) == 1)
    assert duplicate.reason == "the same text"


def test_pairs_go_in_batches_and_no_more_than_the_bound_per_pass(
    agent, make, fake_judge, judge_at, pass_off, meaning_trusted, embedded
):
    judge_at(fake_judge.url, BATCH_SIZE=2, MAX_PAIRS=3)
    pairs = [
        (f"Team {n} never meets in person.", f"Team {n} gathers at the office every Friday.")
        for n in range(5)
    ]
    with embedded():
        pairs_of(agent, make, *pairs)

    counts = suggest_for_agent(agent)

    assert [len(request.pairs) for request in fake_judge.requests] == [2, 1]
    # Past the bound the rule decides: every conflict is still found.
    assert counts == Counter({"conflict": 5})
    reasons = [s.reason for s in found(agent).values()]
    assert sum(reason.startswith("judged a conflict by the model") for reason in reasons) == 3
    assert sum(reason.startswith("about one subject") for reason in reasons) == 2


@pytest.mark.parametrize(
    "failure",
    [
        "status 500",
        "not JSON",
        "prose instead of JSON",
        "verdicts for unknown pairs",
        "too slow",
    ],
)
def test_a_judge_answering_badly_leaves_the_rules_verdicts(
    agent, make, fake_judge, judge_at, pass_off, failure, caplog
):
    fake_judge.rule(PARIS, "fine", "vetoed")
    fake_judge.rule(DRINK, "conflict", "flagged")
    fake_judge.failure = failure
    judge_at(fake_judge.url, TIMEOUT=0.2)
    pairs_of(agent, make, PARIS, DRINK)

    assert suggest_for_agent(agent) == Counter({"conflict": 1})

    suggestion = found(agent)[frozenset(PARIS)]
    assert suggestion.reason == "differ only in 'Paris' → 'Lyon'"
    assert frozenset(DRINK) not in found(agent)
    assert len(fake_judge.requests) == 1
    assert any("the judge at" in r.getMessage() for r in caplog.records if r.levelname == "WARNING")


def test_a_judge_that_is_down_leaves_the_rules_verdicts(agent, make, judge_at, pass_off, caplog):
    closed = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = closed.server_address[1]
    closed.server_close()  # nothing listens there now: the connection is refused
    judge_at(f"http://127.0.0.1:{port}/v1", BATCH_SIZE=1)
    pairs_of(agent, make, PARIS, DRINK)

    assert suggest_for_agent(agent) == Counter({"conflict": 1})
    assert found(agent)[frozenset(PARIS)].reason == "differ only in 'Paris' → 'Lyon'"
    # One refusal, one warning: the rest of the pass does without the judge.
    warnings = [r for r in caplog.records if r.getMessage().startswith("the judge at")]
    assert len(warnings) == 1
    assert "the rest of this pass" in warnings[0].getMessage()


def test_after_a_failure_the_rest_of_the_pass_does_without_the_judge(
    agent, make, fake_judge, judge_at, pass_off
):
    fake_judge.failure = "status 500"
    judge_at(fake_judge.url, BATCH_SIZE=1)
    pairs_of(agent, make, PARIS, DRINK, RELIES)

    suggest_for_agent(agent)

    assert len(fake_judge.requests) == 1


def test_with_no_judge_set_no_request_is_made(agent, make, judge_at, pass_off, monkeypatch):
    judge_at("")
    asked: list[object] = []

    def no_network(*args: object, **kwargs: object) -> None:
        asked.append(args)
        raise AssertionError("the pass asked the network with no judge set")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    pairs_of(agent, make, PARIS, DRINK)

    assert suggest_for_agent(agent) == Counter({"conflict": 1})
    assert asked == []


def test_the_request_is_an_openai_chat_completion_with_the_key(
    agent, make, fake_judge, judge_at, pass_off
):
    judge_at(fake_judge.url + "/", MODEL="judge-model-7b", API_KEY="sk-test-123")
    pairs_of(agent, make, DRINK)

    suggest_for_agent(agent)

    (request,) = fake_judge.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test-123"
    assert request.headers["content-type"] == "application/json"
    assert request.body["model"] == "judge-model-7b"
    assert [message["role"] for message in request.body["messages"]] == ["system", "user"]
    assert all(isinstance(message["content"], str) for message in request.body["messages"])
    assert request.pairs == [
        {
            "pair": 1,
            "a": DRINK[0],
            "b": DRINK[1],
            "rule": "fine",
            "rule_reason": "",
            "similarity": None,
        }
    ]


def test_without_a_key_no_authorization_is_sent(agent, make, fake_judge, judge_at, pass_off):
    judge_at(fake_judge.url, API_KEY="")
    pairs_of(agent, make, DRINK)

    suggest_for_agent(agent)

    (request,) = fake_judge.requests
    assert "authorization" not in request.headers


def test_a_verdict_fenced_as_markdown_is_read(agent, make, fake_judge, judge_at, pass_off):
    fake_judge.rule(DRINK, "conflict", "one favourite drink")
    judge_at(fake_judge.url)
    original = fake_judge.answer

    def fenced(body: dict[str, Any]) -> tuple[int, bytes]:
        status, payload = original(body)
        completion = json.loads(payload)
        message = completion["choices"][0]["message"]
        message["content"] = f"```json\n{message['content']}\n```"
        return status, json.dumps(completion).encode()

    fake_judge.answer = fenced  # type: ignore[method-assign]
    pairs_of(agent, make, DRINK)

    assert suggest_for_agent(agent) == Counter({"conflict": 1})
