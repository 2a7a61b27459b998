"""Over the API, an edit that would grow a text past its limit is 400 invalid, never built."""

from __future__ import annotations

from django.conf import settings

from stores.editing import MAX_BATCH_EDITS
from stores.editing.limits import MAX_BATCH_WORK
from stores.models import Memory, Skill

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


def test_twenty_thousand_phrase_edits_are_refused_by_count_before_any_is_tried(api, agent, make):
    skill = make.skill(agent, content="# Notes\n" + "word " * 99_000)
    edits = [{"old_string": "missing", "new_string": "x"}] * 20_000
    answer = api.call("post", f"skills/{skill.pk}/edit/", {"edits": edits, "dry_run": True})
    assert (answer.status_code, answer.json()["status"]) == (400, "invalid")
    assert f"no more than {MAX_BATCH_EDITS}" in str(answer.json())


def test_a_batch_reading_too_much_of_a_long_skill_is_refused_with_the_bound(api, agent, make):
    content = "# Notes\n" + "x" * 499_000 + " tail"
    skill = make.skill(agent, content=content)
    edits = [
        {"old_string": "tail", "new_string": "end"},
        {"old_string": "end", "new_string": "tail"},
    ]
    answer = api.call("post", f"skills/{skill.pk}/edit/", {"edits": edits * 50})
    body = answer.json()
    assert (answer.status_code, body["status"]) == (400, "invalid")
    assert (body["limit"], body["work"], body["count"]) == (MAX_BATCH_WORK, 100 * len(content), 100)
    assert "send about 40 edits a batch" in body["message"]
    assert Skill.objects.get(pk=skill.pk).version == 1
    applied = api.call("post", f"skills/{skill.pk}/edit/", {"edits": [*edits * 19, edits[0]]})
    assert (applied.status_code, applied.json()["status"]) == (200, "updated")
    assert Skill.objects.get(pk=skill.pk).content.endswith(" end")
