"""Every op that replaces a text whole asks for the proof of a full read, not just replace:
a merge's text (REST, the merge_memories tool), a proposal's merged text and the text an
accept sets. A 500-character preview of a 4,154-character memory never replaces it."""

from __future__ import annotations

import hashlib

import pytest

from stores.editing import PREVIEW_LENGTH, Status
from stores.engine.actors import Actor
from stores.models import Memory, Suggestion
from stores.selectors.records import preview
from stores.services.suggestions import suggestion_accept, suggestion_propose
from tests.api.conftest import client_for
from tests.factories import agent_token

ME = Actor.maintainer("tests")
LONG = " ".join(
    f"Entry {i}: the user's allotment plot {i} grows leeks, beans and chard in rotation."
    for i in range(60)
)[:4154]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def merged_from_preview() -> str:
    return preview(LONG)["preview"].removesuffix("…")[: PREVIEW_LENGTH - 20] + " Also kale."


@pytest.fixture
def pair(agent, make):
    return make.memory(agent, content=LONG), make.memory(agent, content="Leeks in the plot.")


def test_a_rest_merge_of_a_preview_needs_the_version_and_the_hash(agent, pair):
    kept, other = pair
    api = client_for(agent_token(agent)[1])
    body = {"from": [other.pk], "content": merged_from_preview()}
    refused = api.call("post", f"memories/{kept.pk}/merge/", body)
    assert (refused.status_code, refused.json()["status"]) == (428, "precondition_required")
    with_version = api.call("post", f"memories/{kept.pk}/merge/", {**body, "expected_version": 1})
    assert with_version.json()["status"] == "precondition_required"
    assert "content_sha256" in with_version.json()["message"]
    kept.refresh_from_db()
    other.refresh_from_db()
    assert (kept.content, kept.version, other.superseded_by_id) == (LONG, 1, None)
    whole = LONG + " Also kale."
    proved = {"from": [other.pk], "content": whole, "expected_version": 1}
    proved["expected_sha256"] = sha(LONG)
    merged = api.call("post", f"memories/{kept.pk}/merge/", proved)
    assert merged.json()["status"] == "updated", merged.json()
    assert Memory.objects.get(pk=kept.pk).content == whole


def test_a_merge_without_new_text_needs_no_proof(agent, pair):
    kept, other = pair
    api = client_for(agent_token(agent)[1])
    merged = api.call("post", f"memories/{kept.pk}/merge/", {"from": [other.pk]})
    assert merged.json()["status"] == "updated"
    assert Memory.objects.get(pk=kept.pk).content == LONG


def test_the_merge_memories_tool_refuses_a_preview(agent, pair):
    kept, other = pair
    api = client_for(agent_token(agent)[1])
    body = {"id": kept.pk, "from": [other.pk], "content": merged_from_preview()}
    refused = api.call("post", "tools/merge_memories/", {**body, "expected_version": 1}).json()
    assert refused["status"] == "precondition_required"
    assert Memory.objects.get(pk=kept.pk).content == LONG


def test_a_proposal_of_a_preview_is_refused_and_one_with_the_hash_is_accepted(agent, pair):
    kept, other = pair
    refused = suggestion_propose(
        agent=agent, actor=ME, kind="merge", records=[kept.pk, other.pk],
        content=merged_from_preview(),
    )  # fmt: skip
    assert refused.status is Status.PRECONDITION_REQUIRED
    assert not Suggestion.objects.exists()
    whole = LONG + " Also kale."
    proposed = suggestion_propose(
        agent=agent, actor=ME, kind="merge", records=[kept.pk, other.pk],
        content=whole, expected_sha256=sha(LONG),
    )  # fmt: skip
    assert proposed.status is Status.CREATED
    number = proposed.details["suggestion"]
    accepted = suggestion_accept(agent=agent, actor=ME, suggestion_id=number)
    assert accepted.ok, accepted
    assert Memory.objects.get(pk=kept.pk).content == whole


def test_an_accept_setting_text_needs_the_hash_of_the_kept_text(agent, pair):
    kept, other = pair
    proposed = suggestion_propose(agent=agent, actor=ME, kind="merge", records=[kept.pk, other.pk])
    number = proposed.details["suggestion"]
    refused = suggestion_accept(
        agent=agent, actor=ME, suggestion_id=number, content=merged_from_preview()
    )
    assert refused.status is Status.PRECONDITION_REQUIRED
    assert Memory.objects.get(pk=kept.pk).content == LONG
    whole = LONG + " Also kale."
    accepted = suggestion_accept(
        agent=agent, actor=ME, suggestion_id=number, content=whole, expected_sha256=sha(LONG)
    )
    assert accepted.ok, accepted
    assert Memory.objects.get(pk=kept.pk).content == whole


# The feed lists what committed, on PostgreSQL as the transaction commits.
@pytest.mark.django_db(transaction=True)
def test_the_feeds_fingerprint_is_no_proof_and_a_full_reads_hash_is(agent, make):
    memory = make.memory(agent, content=LONG)
    api = client_for(agent_token(agent)[1])
    item = api.call("get", "changes/").json()["results"][-1]
    assert item["id"] == memory.pk and len(item["preview"]) < len(LONG)
    assert item["fingerprint"] != sha(LONG) and "hash" not in item
    cut = item["preview"].removesuffix("…") + " Also kale."
    body = {"text": cut, "expected_version": 1, "allow_shorter": True}
    refused = api.call(
        "post", f"memories/{memory.pk}/replace/", {**body, "expected_sha256": item["fingerprint"]}
    )
    assert (refused.status_code, refused.json()["status"]) == (409, "conflict")
    assert Memory.objects.get(pk=memory.pk).content == LONG
    read = api.call("get", f"memories/{memory.pk}/").json()["record"]
    # A cache holding the whole text recognises the fingerprint from the full read's hash.
    assert item["fingerprint"] == hashlib.sha256(read["content_sha256"].encode()).hexdigest()
    whole = LONG + " Also kale."
    body = {"text": whole, "expected_version": 1, "expected_sha256": read["content_sha256"]}
    assert api.call("post", f"memories/{memory.pk}/replace/", body).json()["status"] == "updated"
    assert Memory.objects.get(pk=memory.pk).content == whole
