"""Redacting a revision over the API: a person's call; the revision then reads as tombstones."""

from __future__ import annotations

import hashlib

from rest_framework.test import APIClient

from stores.models import Revision

SECRET = "The vault word is zebra-quartz-77."


def test_a_person_redacts_and_the_revision_reads_as_tombstones(api, agent, make, staff_user):
    memory = make.memory(agent, content=SECRET)
    edited = api.call(
        "post", f"memories/{memory.pk}/replace/", {"content": "Rotated.", "expected_version": 1}
    ).json()
    human = APIClient()
    human.force_login(staff_user)
    path = f"/api/v1/revisions/{edited['revision']}/redact/?agent={agent.name}"

    answer = human.post(path, {"reason": "a leaked word", "sides": ["before"]}, format="json")

    assert (answer.status_code, answer.json()["status"]) == (200, "updated")
    read = human.get(f"/api/v1/revisions/{edited['revision']}/?agent={agent.name}").json()
    record = read["record"]
    assert record["before_text"] == "" and record["diff"] == "redacted"
    assert record["redacted"]["before"]["sha256"] == hashlib.sha256(SECRET.encode()).hexdigest()
    assert record["redacted"]["before"]["reason"] == "a leaked word"
    assert "zebra" not in str(read)
    first = Revision.objects.get(surface="memory", record_id=memory.pk, version_after=1)
    assert first.after_text == "" and "after" in first.redacted


def test_an_agent_token_cannot_redact_and_bad_input_is_refused(api, agent, make, staff_user):
    memory = make.memory(agent, content=SECRET)
    revision = Revision.objects.get(surface="memory", record_id=memory.pk)
    assert api.call("post", f"revisions/{revision.pk}/redact/", {"reason": "x"}).status_code == 404
    human = APIClient()
    human.force_login(staff_user)
    path = f"/api/v1/revisions/{revision.pk}/redact/?agent={agent.name}"
    unknown_side = human.post(path, {"reason": "x", "sides": ["middle"]}, format="json")
    assert unknown_side.status_code == 400
    live = human.post(path, {"reason": "leak"}, format="json")
    assert (live.status_code, live.json()["status"]) == (409, "conflict")
    assert "still holds this text" in live.json()["message"]
    revision.refresh_from_db()
    assert revision.after_text == SECRET and not revision.redacted


def test_a_redacted_text_cannot_be_brought_back_by_a_revert(api, agent, make, staff_user):
    memory = make.memory(agent, content=SECRET)
    rotate = {"content": "Rotated.", "expected_version": 1}
    api.call("post", f"memories/{memory.pk}/replace/", rotate)
    first = Revision.objects.get(surface="memory", record_id=memory.pk, version_after=1)
    human = APIClient()
    human.force_login(staff_user)
    path = f"/api/v1/revisions/{first.pk}/redact/?agent={agent.name}"
    human.post(path, {"reason": "leak"}, format="json")
    back = api.call("post", f"memories/{memory.pk}/revert/", {"revision_id": first.pk})
    assert (back.status_code, back.json()["status"]) == (400, "invalid")
    assert "was redacted" in back.json()["message"]
