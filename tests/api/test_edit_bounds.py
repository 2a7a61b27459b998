"""Over the API, an edit that would grow a text past its limit is 400 invalid, never built."""

from __future__ import annotations

from django.conf import settings

from stores.models import Memory

MEMORY_LIMIT = settings.MEMORYADMIN["MAX_TEXT_LENGTH"]["memory"]


def test_replace_all_past_the_limit_is_400_invalid_with_limit_and_length(api, agent, make):
    memory = make.memory(agent, "a" * MEMORY_LIMIT)
    answer = api.call(
        "post",
        f"memories/{memory.pk}/edit/",
        {"old_string": "a", "new_string": "b" * 2000, "replace_all": True},
    )
    assert answer.status_code == 400
    body = answer.json()
    assert body["status"] == "invalid"
    assert (body["limit"], body["length"]) == (MEMORY_LIMIT, 200_000_000)
    assert f"{MEMORY_LIMIT} occurrences" in body["message"]
    assert Memory.objects.get(pk=memory.pk).version == 1


def test_ten_doubling_edits_are_refused_at_the_first(api, agent, make):
    memory = make.memory(agent, "a" * MEMORY_LIMIT)
    edit = {"old_string": "a", "new_string": "aa", "replace_all": True}
    answer = api.call("post", f"memories/{memory.pk}/edit/", {"edits": [edit] * 10})
    assert (answer.status_code, answer.json()["status"]) == (400, "invalid")
    assert answer.json()["length"] == 2 * MEMORY_LIMIT
    assert answer.json()["message"].startswith("Edit 1 of 10:")
    assert Memory.objects.get(pk=memory.pk).version == 1
