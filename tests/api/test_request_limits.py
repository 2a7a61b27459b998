"""Bodies past the API's limits are refused as JSON `invalid`, never a 500 or an HTML page.

Size: a body over DATA_UPLOAD_MAX_MEMORY_SIZE answers 413 with the limit. Depth: JSON nested
past MAX_JSON_DEPTH answers 400 `too_deep` (Python's parser raised RecursionError near 990
levels, a 500), and a memory's metadata has a smaller depth and a size limit of its own,
which hold at the service, so the shell and the importer are bounded as well.
"""

from __future__ import annotations

import json

import pytest
from django.conf import settings as django_settings

from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import Memory
from stores.services import record_create, record_update

JSON_DEPTH = django_settings.MEMORYADMIN["MAX_JSON_DEPTH"]
METADATA_DEPTH = django_settings.MEMORYADMIN["MAX_METADATA_DEPTH"]
METADATA_SIZE = django_settings.MEMORYADMIN["MAX_METADATA_SIZE"]
UPLOAD_LIMIT = django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE
me = Actor.maintainer("tests")


def nested(depth: int) -> str:
    """JSON text of objects nested `depth` deep."""
    return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)


def post(api, path: str, body: str):
    return api.post(f"/api/v1/{path}", body, content_type="application/json")


@pytest.mark.parametrize("path", ["memories/", "memories/{id}/edit/", "tools/recall_memories/"])
def test_a_body_over_the_upload_limit_is_a_json_413_naming_the_limit(api, agent, make, path):
    """Regression: Django's HTML error page (400) answered instead of the API's JSON."""
    memory = make.memory(agent, "The user likes tea.")
    body = json.dumps({"content": "x" * UPLOAD_LIMIT})
    answer = post(api, path.format(id=memory.pk), body)
    assert answer.status_code == 413
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["status"] == "invalid"
    assert answer.json()["code"] == "too_large"
    assert answer.json()["max_bytes"] == UPLOAD_LIMIT
    assert str(UPLOAD_LIMIT) in answer.json()["message"]
    assert Memory.objects.filter(agent=agent).count() == 1


def test_a_full_length_skill_outside_ascii_fits_the_upload_limit(api, agent):
    """Python clients escape every non-ASCII character; Django's 2.5 MiB refused this skill."""
    limit = django_settings.MEMORYADMIN["MAX_TEXT_LENGTH"]["skill"]
    content = "\U0001f600" * limit
    body = json.dumps({"name": "emoji", "content": content})
    assert len(body) > 2.5 * 1024 * 1024
    answer = post(api, "skills/", body)
    assert answer.status_code == 201, answer.content[:200]
    assert answer.json()["status"] == "created"


@pytest.mark.parametrize("depth", [JSON_DEPTH + 1, 995, 100_000])
@pytest.mark.parametrize("path", ["memories/", "tools/recall_memories/"])
def test_json_nested_past_the_depth_limit_is_a_400_naming_the_limit(api, agent, path, depth):
    """Regression: at ~990 levels json.loads raised RecursionError, a 500."""
    body = '{"content": "x", "metadata": ' + nested(depth) + "}"
    answer = post(api, path, body)
    assert answer.status_code == 400, answer.content[:200]
    assert answer.json()["status"] == "invalid"
    assert answer.json()["code"] == "too_deep"
    assert answer.json()["max_depth"] == JSON_DEPTH
    assert not Memory.objects.filter(agent=agent).exists()


def test_metadata_past_its_depth_or_size_is_refused_and_within_them_kept(api, agent):
    """Regression: metadata nested ~900 deep was stored, and broke its admin page."""
    deep = post(api, "memories/", '{"content": "x", "metadata": ' + nested(21) + "}")
    assert deep.status_code == 400
    assert deep.json()["status"] == "invalid"
    assert f"the limit is {METADATA_DEPTH}" in deep.json()["message"]
    big = api.call("post", "memories/", {"content": "x", "metadata": {"k": "v" * METADATA_SIZE}})
    assert big.status_code == 400
    assert f"the limit is {METADATA_SIZE}" in big.json()["message"]
    assert not Memory.objects.filter(agent=agent).exists()

    kept = post(api, "memories/", '{"content": "x", "metadata": ' + nested(METADATA_DEPTH) + "}")
    assert kept.status_code == 201, kept.json()
    memory = Memory.objects.get(pk=kept.json()["id"])
    assert json.dumps(memory.metadata, separators=(",", ":")) == nested(METADATA_DEPTH)


def test_the_service_bounds_metadata_whichever_door_calls_it(agent, make):
    """The shell and the importer call the service, not the API: the limits hold there."""
    deep = json.loads(nested(200))
    created = record_create(
        surface_key="memory", agent=agent, actor=me, values={"content": "x", "metadata": deep}
    )
    assert created.status is Status.INVALID
    assert f"the limit is {METADATA_DEPTH}" in created.message
    memory = make.memory(agent, "The user likes tea.")
    refused = {
        "deep": (deep, f"the limit is {METADATA_DEPTH}"),
        "big": ({"k": "v" * METADATA_SIZE}, f"the limit is {METADATA_SIZE}"),
        "not JSON": ({"nan": float("nan")}, "only JSON values"),
    }
    for name, (metadata, message) in refused.items():
        result = record_update(
            surface_key="memory",
            agent=agent,
            ref=memory.pk,
            actor=me,
            changes={"metadata": metadata},
        )
        assert result.status is Status.INVALID, name
        assert message in result.message, name
    memory.refresh_from_db()
    assert (memory.metadata, memory.version) == ({}, 1)
    assert Memory.objects.filter(agent=agent).count() == 1


def test_a_wrong_method_names_the_methods_the_address_takes(api, agent, make):
    """Regression: a GET on a POST-only address said only that GET was not allowed."""
    record = make.memory(agent, "Prefers tea.")
    answer = api.get(f"/api/v1/memories/{record.pk}/edit/")
    assert answer.status_code == 405
    body = answer.json()
    assert body["status"] == "invalid" and body["allowed"] == ["POST"]
    assert body["message"].endswith("This address takes POST.")


def test_an_empty_if_match_is_refused_as_invalid_and_writes_nothing(api, agent, make):
    """Regression: an empty If-Match was taken as no precondition and the write went ahead."""
    record = make.memory(agent, "Prefers tea.")
    answer = api.post(
        f"/api/v1/memories/{record.pk}/edit/",
        {"old_string": "tea", "new_string": "coffee"},
        content_type="application/json",
        headers={"If-Match": ""},
    )
    assert (answer.status_code, answer.json()["status"]) == (400, "invalid")
    assert "If-Match is empty" in answer.json()["message"]
    record.refresh_from_db()
    assert record.content == "Prefers tea."
