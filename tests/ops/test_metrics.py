"""GET /metrics: refused without its token, and counters that move by what was done."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from stores.models import Agent, Memory
from stores.selectors.embeddings import stale_filter
from stores.services.suggestions import suggestion_create
from tests.factories import agent_token

TOKEN = "scrape-secret-4f1c"


@pytest.fixture
def metrics_token(settings):
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "METRICS_TOKEN": TOKEN}
    return TOKEN


def scrape(client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of one scrape, by name and labels, parsed by prometheus-client."""
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def value(samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def agent_client(agent: Agent) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_token(agent)[1]}")
    return client


def test_metrics_are_not_there_without_a_token_configured(client, db):
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer anything").status_code == 404


@pytest.mark.parametrize(
    "authorization", [None, "Bearer wrong", f"Basic {TOKEN}", "Bearer", f"Bearer {TOKEN}x"]
)
def test_metrics_refuse_a_request_without_the_token(client, db, metrics_token, authorization):
    headers = {} if authorization is None else {"HTTP_AUTHORIZATION": authorization}
    response = client.get("/metrics", **headers)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert b"memoryadmin_writes" not in response.content


def test_writes_refusals_and_requests_move_by_what_was_done(client, agent, make, metrics_token):
    memory = make.memory(agent, "The user prefers tea over coffee.")
    fact = make.memory(agent, "The user was born in Lyon.", store="fact")
    api = agent_client(agent)
    before = scrape(client)

    for old, new in (("tea", "green tea"), ("coffee", "espresso")):
        answer = api.post(
            f"/api/v1/memories/{memory.pk}/edit/",
            {"old_string": old, "new_string": new},
            format="json",
        )
        assert answer.json()["status"] == "updated"
    refused = api.post(
        f"/api/v1/memories/{fact.pk}/edit/",
        {"old_string": "Lyon", "new_string": "Paris"},
        format="json",
    )
    assert refused.json()["status"] == "not_editable"
    missing = api.post(
        "/api/v1/memories/999999/edit/", {"old_string": "a", "new_string": "b"}, format="json"
    )
    assert missing.json()["status"] == "not_found"
    assert api.get("/api/v1/memories/?q=tea").status_code == 200

    after = scrape(client)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("memoryadmin_writes_total", op="record_edit", status="updated", door="api") == 2
    assert (
        moved("memoryadmin_writes_total", op="record_edit", status="not_editable", door="api") == 1
    )
    assert moved("memoryadmin_writes_total", op="record_edit", status="not_found", door="api") == 1
    assert moved("memoryadmin_refusals_total", status="not_editable") == 1
    assert moved("memoryadmin_refusals_total", status="not_found") == 1
    assert moved("memoryadmin_refusals_total", status="updated") == 0
    assert moved("memoryadmin_recall_seconds_count") == 1
    # django-prometheus: the API's requests by route and status (404 for the missing record).
    requests = "django_http_responses_total_by_status_view_method_total"
    edits = {
        labels: count - before.get((name, labels), 0.0)
        for (name, labels), count in after.items()
        if name == requests and ("method", "POST") in labels
    }
    assert sum(edits.values()) == 4
    assert sum(n for labels, n in edits.items() if ("status", "404") in labels) == 1


def test_gauges_read_the_database_at_each_scrape(client, agent, make, metrics_token):
    agent.review_mode = Agent.ReviewMode.ALL
    agent.save()
    api = agent_client(agent)
    kept = make.memory(agent, "Embedded as it was written.")
    before = scrape(client)
    created = api.post("/api/v1/memories/", {"content": "Pending review."}, format="json")
    assert created.json()["status"] == "created"
    Memory.objects.filter(pk=kept.pk).update(embedding_hash="")
    other = make.memory(agent, "Embedded as it was written, twice.")
    suggestion_create(agent=agent, kind="conflict", memories=[kept, other], reason="differ")
    after = scrape(client)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("memoryadmin_reviews_pending") == 1
    assert moved("memoryadmin_suggestions_open", kind="conflict") == 1
    assert moved("memoryadmin_suggestions_open", kind="duplicate") == 0
    assert moved("memoryadmin_stale_vectors", surface="memory") >= 1
    stale = Memory.objects.filter(stale_filter()).count()
    assert value(after, "memoryadmin_stale_vectors", surface="memory") == stale
