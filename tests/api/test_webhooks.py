"""POST/GET/PATCH/DELETE /api/v1/webhooks/: a write token or a writer manages them."""

from __future__ import annotations

import json

import pytest

from stores.models import IdempotentRequest, Webhook
from tests.api.conftest import client_for
from tests.factories import UserFactory

URL = "https://hooks.example.com/memoryadmin/abc123"


def test_a_write_token_adds_lists_reads_switches_and_deletes_a_webhook(api, agent):
    added = api.call("post", "webhooks/", {"url": URL, "events": ["memory.*"], "name": "sync"})
    assert added.status_code == 201, added.content
    body = added.json()
    assert body["status"] == "created" and body["secret"].startswith("whsec_")
    assert added["Cache-Control"] == "no-store"
    webhook_id = body["id"]

    listed = api.call("get", "webhooks/").json()
    assert listed["status"] == "ok"
    (shown,) = listed["results"]
    assert shown["url"] == "https://hooks.example.com/memoryadmin…"  # the token stays hidden
    assert shown["events"] == ["memory.*"] and shown["format"] == "standard"
    assert "secret" not in shown

    read = api.call("get", f"webhooks/{webhook_id}/").json()
    assert read["record"]["deliveries"] == [] and read["record"]["name"] == "sync"

    switched = api.call("patch", f"webhooks/{webhook_id}/", {"enabled": False})
    assert switched.status_code == 200 and switched.json()["webhook"]["enabled"] is False
    again = api.call("patch", f"webhooks/{webhook_id}/", {"enabled": False})
    assert again.status_code == 422 and again.json()["status"] == "no_change"

    deleted = api.call("delete", f"webhooks/{webhook_id}/")
    assert deleted.status_code == 200 and deleted.json()["status"] == "deleted"
    assert not Webhook.objects.filter(pk=webhook_id).exists()


def test_a_webhook_may_hear_of_suggestions_only(api):
    events = ["suggestion.accepted", "suggestion.dismissed"]
    added = api.call("post", "webhooks/", {"url": URL, "events": events})
    assert added.status_code == 201, added.content
    assert added.json()["webhook"]["events"] == events


def test_a_discord_webhook_has_no_secret(api):
    added = api.call("post", "webhooks/", {"url": URL, "format": "discord"}).json()
    assert added["status"] == "created" and "secret" not in added


def test_a_read_only_token_can_neither_read_nor_manage_webhooks(api, read_only_api, agent):
    webhook_id = api.call("post", "webhooks/", {"url": URL}).json()["id"]

    for method, path, data in [
        ("get", "webhooks/", None),
        ("get", f"webhooks/{webhook_id}/", None),
        ("post", "webhooks/", {"url": URL}),
        ("patch", f"webhooks/{webhook_id}/", {"enabled": False}),
        ("delete", f"webhooks/{webhook_id}/", None),
    ]:
        answer = read_only_api.call(method, path, data)
        assert answer.status_code == 403, (method, path)
        assert answer.json()["status"] == "forbidden"


def test_another_agents_webhook_is_not_found(api, other_api):
    theirs = other_api.call("post", "webhooks/", {"url": URL}).json()["id"]

    assert api.call("get", f"webhooks/{theirs}/").status_code == 404
    assert api.call("delete", f"webhooks/{theirs}/").status_code == 404
    assert api.call("get", "webhooks/").json()["results"] == []


def test_people_with_write_access_manage_and_viewers_do_not(agent):
    editor, viewer = UserFactory(), UserFactory()
    editor.agent_grants.create(agent=agent, role="editor")
    viewer.agent_grants.create(agent=agent, role="viewer")
    as_editor, as_viewer = client_for(), client_for()
    as_editor.force_authenticate(editor)
    as_viewer.force_authenticate(viewer)

    assert as_editor.call("post", f"webhooks/?agent={agent.name}", {"url": URL}).status_code == 201
    assert as_viewer.call("get", f"webhooks/?agent={agent.name}").status_code == 403
    assert Webhook.objects.get(agent=agent).created_by == editor


@pytest.mark.parametrize(
    "body",
    [
        {"url": "ftp://example.com/"},
        {"url": "http://127.0.0.1:8000/hook"},
        {"url": URL, "events": ["memory"]},
        {"url": URL, "events": ["suggestion.updated"]},
        {"url": URL, "format": "slack"},
        {},
    ],
)
def test_a_bad_webhook_is_refused_with_a_message(api, body):
    answer = api.call("post", "webhooks/", body)
    assert answer.status_code == 400
    assert answer.json()["status"] == "invalid" and answer.json()["message"]


def test_the_schema_documents_the_webhook_endpoints(api):
    schema = client_for().get("/api/schema/?format=json").json()
    paths = schema["paths"]
    assert set(paths["/api/v1/webhooks/"]) == {"get", "post"}
    assert set(paths["/api/v1/webhooks/{id}/"]) == {"get", "patch", "delete"}
    assert {"201", "400", "401", "403", "404", "429"} <= set(
        paths["/api/v1/webhooks/"]["post"]["responses"]
    )


def test_a_retried_add_never_stores_nor_shows_the_secret_again(api):
    """Regression: the signing secret was kept in clear in the idempotency table's saved
    answer and shown again to whoever retried with the key."""
    body = {"url": URL, "events": ["memory.*"]}
    first = api.call("post", "webhooks/", body, idempotency_key="hook-1")
    again = api.call("post", "webhooks/", body, idempotency_key="hook-1")

    secret = first.json()["secret"]
    assert first.status_code == again.status_code == 201
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert "secret" not in again.json()
    assert "shown only once" in again.json()["message"]
    assert Webhook.objects.count() == 1
    stored = list(IdempotentRequest.objects.values_list("body", flat=True))
    assert stored and secret not in json.dumps(stored)
