"""Edges an agent developer runs into: header/body preconditions, expiry, reviews, DB errors."""

from __future__ import annotations

import datetime as dt

from django.db import DatabaseError
from django.utils import timezone
from rest_framework.test import APIClient

from stores.models import Agent, Revision, WorkingMemoryEntry
from stores.tools import tomori
from tests.factories import agent_token


def test_if_match_and_expected_version_must_agree(api, agent, make):
    # Two different versions: at most one is the current one, so the write is a conflict.
    memory = make.memory(agent)
    answer = api.call(
        "post",
        f"memories/{memory.pk}/replace/",
        {"text": "New.", "expected_version": 1},
        if_match='"2"',
    )
    assert (answer.status_code, answer.json()["status"]) == (409, "conflict")
    assert memory.__class__.objects.get(pk=memory.pk).version == 1


def test_a_version_from_the_future_is_said_never_to_have_existed(api, agent, make):
    memory = make.memory(agent)

    answer = api.call("post", f"memories/{memory.pk}/replace/", {"text": "New."}, if_match='"7"')

    assert answer.status_code == 412
    assert answer.json()["message"].startswith(
        "Version 7 of this record never existed: it is at version 1."
    )
    stale = api.call("post", f"memories/{memory.pk}/replace/", {"text": "B."}, if_match='"1"')
    assert stale.status_code == 200
    behind = api.call("post", f"memories/{memory.pk}/replace/", {"text": "C."}, if_match='"1"')
    assert behind.json()["message"].startswith(
        "The record changed since version 1; it is now at version 2."
    )


def test_a_token_sent_without_bearer_is_told_the_expected_form(agent):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=agent_token(agent)[1])

    answer = client.get("/api/v1/memories/")

    assert answer.status_code == 401
    assert "must read 'Bearer <token>'" in answer.json()["message"]


def test_a_malformed_if_match_is_invalid(api, agent, make):
    memory = make.memory(agent)
    answer = api.call("post", f"memories/{memory.pk}/replace/", {"text": "New."}, if_match="v2")
    assert (answer.status_code, answer.json()["status"]) == (400, "invalid")


def test_delete_honours_if_match(api, agent, make):
    memory = make.memory(agent)
    stale = api.call("delete", f"memories/{memory.pk}/", if_match='"9"')
    assert (stale.status_code, stale.json()["current_version"]) == (412, 1)
    assert api.call("delete", f"memories/{memory.pk}/", if_match='"1"').status_code == 200


def test_expired_working_memory_is_not_found(api, agent, make):
    entry = make.working(agent)
    WorkingMemoryEntry.objects.filter(pk=entry.pk).update(
        expires_at=timezone.now() - dt.timedelta(seconds=1)
    )
    assert api.call("get", f"working-memory/{entry.pk}/").status_code == 404
    assert api.call("get", "working-memory/").json()["count"] == 0
    edit = api.call(
        "post", f"working-memory/{entry.pk}/edit/", {"old_string": "patrol", "new_string": "x"}
    )
    assert edit.status_code == 404


def test_an_agent_is_told_its_write_awaits_review_at_every_door(api, agent, make):
    memory = make.memory(agent, "Likes tea and cake.")
    plain = api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "cake", "new_string": "pie"}
    )
    assert "review" not in plain.json()
    Agent.objects.filter(pk=agent.pk).update(review_mode=Agent.ReviewMode.ALL)

    rest = api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "tea", "new_string": "mate"}
    )
    tool = api.call(
        "post", "tools/edit_memory/", {"id": memory.pk, "old_string": "pie", "new_string": "tart"}
    )

    for answer in (rest.json(), tool.json()):
        assert answer["status"] == "updated"
        assert answer["review"] == "pending"
        assert "It awaits review: a person may approve it or revert it." in answer["message"]


def test_a_human_approves_what_an_agent_wrote(api, agent, make, staff_user):
    Agent.objects.filter(pk=agent.pk).update(review_mode=Agent.ReviewMode.ALL)
    memory = make.memory(agent)
    edited = api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "tea", "new_string": "mate"}
    ).json()
    assert Revision.objects.get(pk=edited["revision"]).review == Revision.Review.PENDING
    by_token = api.call("post", f"revisions/{edited['revision']}/approve/", {})
    assert by_token.status_code == 404
    human = APIClient()
    human.force_login(staff_user)
    approved = human.post(
        f"/api/v1/revisions/{edited['revision']}/approve/?agent={agent.name}", {}, format="json"
    )
    assert (approved.status_code, approved.json()["status"]) == (200, "approved")


def test_tomori_reports_a_database_failure(api, agent, make, monkeypatch):
    memory = make.memory(agent)

    def broken(**kwargs):
        raise DatabaseError("disk full")

    monkeypatch.setattr(tomori, "record_replace", broken)
    answer = api.call(
        "post",
        "tools/update_long_term_memory/",
        {"memory_id": memory.pk, "memory_content": "New text."},
    ).json()
    assert answer["status"] == "memory_update_failed_db_error"
    assert answer["success"] is False


def test_tomori_refuses_a_truncated_preview_in_its_own_words(api, agent, make):
    memory = make.memory(agent, "Long memory. " * 60)
    preview = api.call("get", "memories/?q=long").json()["results"][0]["preview"]
    answer = api.call(
        "post",
        "tools/update_long_term_memory/",
        {"memory_id": memory.pk, "memory_content": preview},
    ).json()
    assert answer["status"] == "memory_update_failed_precondition_required"


def test_a_surface_text_goes_under_one_name_in_create_and_replace(api, agent):
    created = api.call("post", "working-memory/", {"key": "route", "value": "North gate."})
    assert created.status_code == 201, created.json()
    entry = created.json()

    replaced = api.call(
        "post",
        f"working-memory/{entry['id']}/replace/",
        {"value": "South gate.", "expected_version": entry["version"]},
    )

    assert (replaced.status_code, replaced.json()["status"]) == (200, "updated")
    assert WorkingMemoryEntry.objects.get(pk=entry["id"]).value == "South gate."
