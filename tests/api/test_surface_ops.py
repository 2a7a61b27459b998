"""Every op of every surface over HTTP: the status word, the HTTP code, version and diff."""

from __future__ import annotations

import pytest

from stores.engine.actors import Actor
from stores.models import Memory, Revision, RulesDocument, Skill, WorkingMemoryEntry
from stores.services import rules_add

PATHS = {
    "memory": "memories",
    "working": "working-memory",
    "skill": "skills",
    "task": "tasks",
    "rules": "rules",
}


def _record(make, agent, surface_key):
    if surface_key == "rules":
        rules_add(agent=agent, actor=Actor.maintainer("tests"), rule="Be kind.")
        return RulesDocument.objects.get(agent=agent)
    maker = getattr(make, surface_key)
    return maker(agent)


def _phrase(surface_key):
    return {
        "memory": ("tea", "green tea"),
        "working": ("patrol log", "night log"),
        "skill": ("Run it.", "Run it twice."),
        "task": ("overnight", "weekend"),
        "rules": ("Be kind.", "Be very kind."),
    }[surface_key]


@pytest.mark.parametrize("surface_key", list(PATHS))
def test_list_create_read_edit_replace_revert_forget(api, agent, make, surface_key):
    record = _record(make, agent, surface_key)
    base = PATHS[surface_key]

    listed = api.call("get", f"{base}/")
    assert listed.status_code == 200
    assert listed.json()["status"] == "ok"
    assert [item["id"] for item in listed.json()["results"]] == [record.pk]

    read = api.call("get", f"{base}/{record.pk}/")
    assert read.status_code == 200
    assert read["ETag"] == f'"{record.version}"'
    full = read.json()["record"]

    old, new = _phrase(surface_key)
    edited = api.call("post", f"{base}/{record.pk}/edit/", {"old_string": old, "new_string": new})
    assert edited.status_code == 200, edited.json()
    body = edited.json()
    assert body["status"] == "updated"
    assert body["id"] == record.pk
    assert body["version"] == record.version + 1
    assert isinstance(body["revision"], int)
    assert f"+{new}" in body["diff"] or new in body["diff"]
    assert edited["ETag"] == f'"{body["version"]}"'

    text_field = {"working": "value", "task": "directive"}.get(surface_key, "content")
    replaced = api.call(
        "post",
        f"{base}/{record.pk}/replace/",
        {"text": full[text_field] + "\nOne more line.", "expected_version": body["version"]},
    )
    assert replaced.status_code == 200, replaced.json()
    assert replaced.json()["version"] == body["version"] + 1

    reverted = api.call(
        "post",
        f"{base}/{record.pk}/revert/",
        {"revision_id": body["revision"], "to": "before"},
    )
    assert reverted.status_code == 200, reverted.json()
    assert reverted.json()["status"] == "reverted"
    again = api.call("get", f"{base}/{record.pk}/").json()["record"]
    assert again[text_field] == full[text_field]

    forgotten = api.call("delete", f"{base}/{record.pk}/")
    assert forgotten.status_code == 200, forgotten.json()
    assert forgotten.json()["status"] == "deleted"
    assert api.call("get", f"{base}/{record.pk}/").status_code == 404


@pytest.mark.parametrize(
    ("surface_key", "body"),
    [
        ("memory", {"content": "The deploy key rotates monthly.", "tags": ["ops"]}),
        ("working", {"key": "focus", "value": "Triage", "ttl": 3600}),
        ("skill", {"name": "triage", "content": "# Triage\n"}),
        ("task", {"name": "nightly", "schedule": "0 2 * * *", "directive": "Back up."}),
        ("rules", {"content": "- Be brief.\n"}),
    ],
)
def test_create_answers_201_with_location(api, surface_key, body):
    created = api.call("post", f"{PATHS[surface_key]}/", body)
    assert created.status_code == 201, created.json()
    assert created.json()["status"] == "created"
    assert created.json()["version"] == 1
    assert created["Location"].endswith(f"/{created.json()['id']}/")


def test_patch_sets_fields_and_a_text_field_needs_a_precondition(api, agent, make):
    memory = make.memory(agent)
    patched = api.call("patch", f"memories/{memory.pk}/", {"category": "drinks", "tags": ["x"]})
    assert patched.status_code == 200, patched.json()
    assert set(patched.json()["fields"]) == {"category", "tags"}
    refused = api.call("patch", f"memories/{memory.pk}/", {"content": "Something else."})
    assert refused.status_code == 428
    assert refused.json()["status"] == "precondition_required"
    done = api.call(
        "patch", f"memories/{memory.pk}/", {"content": "Something else."}, if_match='"2"'
    )
    assert done.status_code == 200, done.json()


def test_record_is_found_by_alias(api, agent, make):
    memory = make.memory(agent, alias="6f1c-guid")
    read = api.call("get", "memories/6f1c-guid/")
    assert read.status_code == 200
    assert read.json()["record"]["id"] == memory.pk


def test_memory_ops(api, agent, make):
    memory = make.memory(agent)
    successor = make.memory(agent, "The user now prefers coffee.")
    importance = api.call("post", f"memories/{memory.pk}/set_importance/", {"importance": 7})
    assert importance.status_code == 200
    assert importance.json()["importance"] == 1.0
    assert importance.json()["clamped"] is True

    reinforced = api.call("post", f"memories/{memory.pk}/reinforce/", {})
    assert reinforced.status_code == 200
    assert reinforced.json()["reinforcement_count"] == 2

    invalidated = api.call(
        "post", f"memories/{memory.pk}/invalidate/", {"replacement_id": str(successor.pk)}
    )
    assert invalidated.status_code == 200
    assert invalidated.json()["status"] == "invalidated"
    memory.refresh_from_db()
    assert memory.superseded_by_id == successor.pk


def test_working_memory_set_ttl(api, agent, make):
    entry = make.working(agent)
    answered = api.call("post", f"working-memory/{entry.pk}/set_ttl/", {"ttl": 60})
    assert answered.status_code == 200, answered.json()
    entry.refresh_from_db()
    assert entry.expires_at is not None
    cleared = api.call("post", f"working-memory/{entry.pk}/set_ttl/", {"clear": True})
    assert cleared.status_code == 200
    assert WorkingMemoryEntry.objects.get(pk=entry.pk).expires_at is None


def test_skill_section_ops(api, agent, make):
    skill = make.skill(agent, content="# Deploy\n\n## Steps\nRun it.\n\n## Notes\nOld.\n")
    appended = api.call(
        "post", f"skills/{skill.pk}/append/", {"content": "Check logs.", "heading": "Steps"}
    )
    assert appended.status_code == 200, appended.json()
    replaced = api.call(
        "post",
        f"skills/{skill.pk}/replace_section/",
        {"heading": "Notes", "content": "New notes.\n"},
    )
    assert replaced.status_code == 200, replaced.json()
    deleted = api.call("post", f"skills/{skill.pk}/delete_section/", {"heading": "Notes"})
    assert deleted.status_code == 200, deleted.json()
    content = Skill.objects.get(pk=skill.pk).content
    assert "Check logs." in content
    assert "## Notes" not in content


def test_rules_ops_keep_the_document_byte_for_byte(api, agent):
    created = api.call("post", "rules/", {"content": "# Rules\n\n<!-- hand -->\n* Be kind.\n"})
    document = created.json()["id"]
    added = api.call("post", f"rules/{document}/add_rule/", {"rule": "Be brief."})
    assert added.status_code == 200, added.json()
    swapped = api.call(
        "post", f"rules/{document}/replace_rule/", {"rule": "Be brief.", "new_rule": "Be short."}
    )
    assert swapped.status_code == 200, swapped.json()
    removed = api.call("post", f"rules/{document}/remove_rule/", {"rule": "Be kind."})
    assert removed.status_code == 200, removed.json()
    assert RulesDocument.objects.get(pk=document).content == (
        "# Rules\n\n<!-- hand -->\n* Be short.\n"
    )


def test_batch_edits_apply_all_or_nothing(api, agent, make):
    memory = make.memory(agent, "one two three")
    refused = api.call(
        "post",
        f"memories/{memory.pk}/edit/",
        {
            "edits": [
                {"old_string": "one", "new_string": "1"},
                {"old_string": "four", "new_string": "4"},
            ]
        },
    )
    assert refused.status_code == 422
    assert Memory.objects.get(pk=memory.pk).content == "one two three"
    done = api.call(
        "post",
        f"memories/{memory.pk}/edit/",
        {
            "edits": [
                {"old_string": "one", "new_string": "1"},
                {"old_string": "three", "new_string": "3"},
            ]
        },
    )
    assert done.status_code == 200
    assert Memory.objects.get(pk=memory.pk).content == "1 two 3"


def test_revisions_list_read_and_the_writes_are_recorded_as_api(api, agent, make):
    memory = make.memory(agent)
    api.call("post", f"memories/{memory.pk}/edit/", {"old_string": "tea", "new_string": "mate"})
    listed = api.call("get", f"revisions/?surface=memory&record_id={memory.pk}")
    assert listed.status_code == 200
    assert [r["op"] for r in listed.json()["results"]] == ["edit", "create"]
    latest = listed.json()["results"][0]
    assert latest["channel"] == "api"
    read = api.call("get", f"revisions/{latest['id']}/")
    assert read.status_code == 200
    assert read.json()["record"]["after_text"] == "The user prefers mate over coffee."
    assert "+The user prefers mate over coffee." in read.json()["record"]["diff"]
    assert Revision.objects.get(pk=latest["id"]).actor_token is not None
