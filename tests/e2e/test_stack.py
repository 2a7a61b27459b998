"""Agents write and edit memories over HTTP; the worker re-embeds them; recall finds them."""

from __future__ import annotations

from tests.e2e.helpers import all_fresh, log_in
from tests.e2e.stack import Stack, wait_for

REEMBED_DEADLINE = 30


def create_memory(stack: Stack, token: str, content: str) -> int:
    answer = stack.request("POST", "/api/v1/memories/", token=token, json={"content": content})
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def test_probes_report_every_dependency_up(stack):
    assert stack.get("/healthz").json() == {"status": "ok"}
    ready = stack.get("/readyz")
    assert ready.status_code == 200
    assert {name: check["status"] for name, check in ready.json()["checks"].items()} == {
        "database": "ok",
        "broker": "ok",
        "embeddings": "ok",
    }


def test_agents_write_edit_and_recall_with_vectors_made_by_the_worker(stack):
    rockbot = stack.create_token("e2e-rockbot")
    tomori = stack.create_token("e2e-tomori")
    ids = [
        create_memory(stack, rockbot, "The user keeps bees on the roof in Marseille."),
        create_memory(stack, rockbot, "Deploys happen on Tuesdays after the standup."),
    ]
    other = create_memory(stack, tomori, "Tomori's user collects vintage synthesizers.")

    edited = stack.request(
        "POST",
        f"/api/v1/memories/{ids[0]}/edit/",
        token=rockbot,
        json={"old_string": "in Marseille", "new_string": "in Lyon"},
        headers={"X-Request-ID": "e2e-edit-1"},
    )

    assert edited.status_code == 200, edited.text
    assert edited.json()["status"] == "updated"
    assert edited.headers["X-Request-ID"] == "e2e-edit-1"
    stored = wait_for(
        lambda: all_fresh(stack, [*ids, other]), "the worker to re-embed", timeout=REEMBED_DEADLINE
    )
    assert stored[ids[0]].content == "The user keeps bees on the roof in Lyon."
    assert stored[ids[0]].version == 2
    assert all(memory.vector_matches_text() for memory in stored.values())
    assert {memory.embedding_model for memory in stored.values()} == {"fake/bag-of-words"}

    recall = stack.get("/api/v1/memories/?q=bees Lyon", token=rockbot)
    assert recall.status_code == 200
    assert recall.json()["results"][0]["id"] == ids[0]
    # A token sees only its own agent's memories.
    assert ids[0] not in [
        hit["id"] for hit in stack.get("/api/v1/memories/?q=bees", token=tomori).json()["results"]
    ]


def test_the_ui_logs_in_and_serves_its_static_files(stack):
    cookies = log_in(stack)

    # Every agent, whatever the other tests made: with exactly one, "/" goes to its dashboard.
    page = stack.get("/?all=1", cookies=cookies)
    stylesheet = stack.get("/static/web/app.css")

    assert page.status_code == 200
    assert "Content-Security-Policy" in page.headers
    assert page.headers["Strict-Transport-Security"].startswith("max-age=")
    assert stylesheet.status_code == 200
    assert "text/css" in stylesheet.headers["Content-Type"]


def test_the_mcp_endpoint_is_served_by_the_same_web_processes(stack):
    answer = stack.request("POST", "/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})

    assert answer.status_code == 401  # there, and asking for an agent token


def test_plain_http_is_redirected_to_https(stack):
    answer = stack.request("GET", "/", headers={"X-Forwarded-Proto": "http"})

    assert answer.status_code == 301
    assert answer.headers["Location"].startswith("https://")
