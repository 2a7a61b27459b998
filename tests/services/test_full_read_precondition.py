"""A full replace of a text longer than a preview proves a full read: the text's SHA-256.

The version alone proves only that some read was seen, and every preview carries it; a
preview whose start was rewritten beats any shape heuristic and, sent back with the version,
silently dropped the rest of the text. Every door takes the proof the same way.
"""

from __future__ import annotations

import hashlib

import pytest

from stores.editing import PREVIEW_LENGTH, Status
from stores.engine.actors import Actor
from stores.models import Memory
from stores.selectors.records import preview
from stores.services import record_replace, record_update
from stores.tools.registry import ToolContext, call_tool
from tests.api.conftest import client_for
from tests.factories import agent_token

ME = Actor.maintainer("tests")
# About 3,000 characters, as the memory the attack cut down to its preview.
LONG = " ".join(
    f"Note {i}: the balcony tomatoes in Lisbon need water every evening in July." for i in range(40)
)[:3019]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def rewritten_preview(text: str, shown: int = PREVIEW_LENGTH) -> str:
    """A preview whose first 100 characters were rewritten: no shape guard can tell it from
    a deliberate rewrite, yet it drops everything the preview did not show."""
    cut = text[: shown - 1]
    return "Tomatoes on the balcony: water them each July evening, and the basil too. " + cut[100:]


def test_an_edited_preview_sent_with_only_the_version_is_refused_and_nothing_is_lost(agent, make):
    memory = make.memory(agent, content=LONG)
    for shown in (PREVIEW_LENGTH, 200):  # recall's preview, and the feed's
        for replacement in (
            rewritten_preview(LONG, shown),
            preview(LONG)["preview"].removesuffix("…") + " Also water the ferns.",
        ):
            result = record_replace(
                surface_key="memory",
                agent=agent,
                ref=memory.pk,
                actor=ME,
                text=replacement,
                expected_version=1,
            )
            assert result.status is Status.PRECONDITION_REQUIRED
            assert "content_sha256" in result.message and "expected_sha256" in result.message
            assert f"GET /api/v1/memories/{memory.pk}/" in result.message
            patched = record_update(
                surface_key="memory",
                agent=agent,
                ref=memory.pk,
                actor=ME,
                changes={"content": replacement},
                expected_version=1,
                allow_shorter=True,
            )
            assert patched.status is Status.PRECONDITION_REQUIRED
    memory.refresh_from_db()
    assert (memory.content, memory.version) == (LONG, 1)


def test_the_sha256_of_a_full_read_lets_a_whole_rewrite_through(agent, make):
    memory = make.memory(agent, content=LONG)
    rewritten = LONG.replace("balcony", "terrace")
    result = record_replace(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        text=rewritten,
        expected_version=1,
        expected_sha256=sha(LONG).upper(),
    )
    assert result.status is Status.UPDATED
    memory.refresh_from_db()
    assert memory.content == rewritten


def test_the_shape_guard_is_the_second_line_after_the_proof(agent, make):
    memory = make.memory(agent, content=LONG)
    result = record_replace(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        text=preview(LONG)["preview"],
        expected_version=1,
        expected_sha256=sha(LONG),
    )
    assert result.status is Status.SUSPECTED_TRUNCATION


def test_a_hash_of_another_text_is_a_conflict(agent, make):
    memory = make.memory(agent, content=LONG)
    result = record_replace(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        text=LONG + " More.",
        expected_version=1,
        expected_sha256=sha(LONG[:500]),
    )
    assert result.status is Status.CONFLICT
    assert "read the record in full again" in result.message.lower()


def test_a_text_no_longer_than_a_preview_needs_only_the_version(agent, make):
    memory = make.memory(agent, content=LONG[:PREVIEW_LENGTH])
    result = record_replace(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        text="Tomatoes: water each evening.",
        expected_version=1,
    )
    assert result.status is Status.UPDATED


# --- every door ------------------------------------------------------------------------------


def test_a_full_read_gives_the_hash_and_a_list_never_does(agent, make):
    memory = make.memory(agent, content=LONG)
    api = client_for(agent_token(agent)[1])
    record = api.call("get", f"memories/{memory.pk}/").json()["record"]
    assert record["content_sha256"] == sha(LONG)
    tool = api.call("post", "tools/read_record/", {"surface": "memory", "id": memory.pk}).json()
    assert tool["record"]["content_sha256"] == sha(LONG)
    listed = api.call("get", "memories/").json()["results"][0]
    assert "content_sha256" not in listed and listed["truncated"] is True
    recalled = api.call("post", "tools/recall_memories/", {}).json()["results"][0]
    assert "content_sha256" not in recalled


@pytest.mark.parametrize("door", ["replace", "patch", "replace_record", "update_record"])
def test_every_rest_and_tool_door_refuses_without_the_hash_and_takes_it(agent, make, door):
    memory = make.memory(agent, content=LONG)
    api = client_for(agent_token(agent)[1])
    rewritten = LONG.replace("Lisbon", "Porto")

    def send(**proof: object):
        if door == "replace":
            body = {"text": rewritten, "expected_version": 1, **proof}
            return api.call("post", f"memories/{memory.pk}/replace/", body)
        if door == "patch":
            body = {"content": rewritten, "expected_version": 1, **proof}
            return api.call("patch", f"memories/{memory.pk}/", body)
        text = "text" if door == "replace_record" else "content"
        body = {"surface": "memory", "id": memory.pk, text: rewritten, "expected_version": 1}
        return api.call("post", f"tools/{door}/", {**body, **proof})

    refused = send(allow_shorter=True)
    assert refused.json()["status"] == "precondition_required"
    assert Memory.objects.get(pk=memory.pk).version == 1
    assert send(expected_sha256=sha(LONG)).json()["status"] == "updated"
    assert Memory.objects.get(pk=memory.pk).content == rewritten


def test_the_reference_tools_take_the_hash(agent, make):
    memory = make.memory(agent, content=LONG)
    context = ToolContext(agent=agent, actor=Actor.for_token(agent_token(agent)[0]))
    cut = rewritten_preview(LONG)
    refused = call_tool("memory_edit", {"op": "update", "id": memory.pk, "content": cut}, context)
    assert refused["details"]["status"] == "precondition_required"
    tomori = call_tool(
        "update_long_term_memory", {"memory_id": memory.pk, "memory_content": cut}, context
    )
    assert tomori["status"] == "memory_update_failed_precondition_required"
    assert Memory.objects.get(pk=memory.pk).content == LONG
    whole = LONG.replace("July", "August")
    edited = call_tool(
        "memory_edit",
        {"op": "update", "id": memory.pk, "content": whole, "expected_sha256": sha(LONG)},
        context,
    )
    assert edited["details"]["status"] == "updated"
    again = whole.replace("August", "September")
    tomori = call_tool(
        "update_long_term_memory",
        {"memory_id": memory.pk, "memory_content": again, "expected_sha256": sha(whole)},
        context,
    )
    assert tomori["status"] == "memory_updated_successfully"
    assert Memory.objects.get(pk=memory.pk).content == again
