"""A write retried with the same Idempotency-Key is applied once and answered the same."""

from __future__ import annotations

from stores.models import Memory, Revision


def test_a_retried_write_is_applied_once(api, agent, make):
    memory = make.memory(agent, "tea tea")
    body = {"old_string": "tea", "new_string": "tea and cake", "replace_all": True}
    first = api.call("post", f"memories/{memory.pk}/edit/", body, idempotency_key="k-1")
    again = api.call("post", f"memories/{memory.pk}/edit/", body, idempotency_key="k-1")
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert again["ETag"] == first["ETag"]
    assert Memory.objects.get(pk=memory.pk).content == "tea and cake tea and cake"
    assert Revision.objects.filter(record_id=memory.pk, op="edit").count() == 1


def test_a_retried_create_creates_one_record(api, agent):
    body = {"content": "Remember the milk."}
    first = api.call("post", "memories/", body, idempotency_key="create-1")
    again = api.call("post", "memories/", body, idempotency_key="create-1")
    assert first.status_code == again.status_code == 201
    assert again.json()["id"] == first.json()["id"]
    assert Memory.objects.filter(agent=agent).count() == 1


def test_the_same_key_with_a_different_body_is_invalid(api, agent, make):
    memory = make.memory(agent)
    api.call("post", f"memories/{memory.pk}/reinforce/", {}, idempotency_key="k-2")
    other = api.call(
        "post", f"memories/{memory.pk}/set_importance/", {"importance": 1}, idempotency_key="k-2"
    )
    assert (other.status_code, other.json()["status"]) == (400, "invalid")
    assert Memory.objects.get(pk=memory.pk).importance == 0.5


def test_keys_belong_to_their_token(api, other_api, agent, other_agent, make):
    mine = make.memory(agent)
    theirs = make.memory(other_agent)
    assert api.call("post", f"memories/{mine.pk}/reinforce/", {}, idempotency_key="same")
    answer = other_api.call("post", f"memories/{theirs.pk}/reinforce/", {}, idempotency_key="same")
    assert answer.status_code == 200
    assert Memory.objects.get(pk=theirs.pk).reinforcement_count == 2
