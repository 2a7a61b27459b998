"""A token never sees another agent's records: every read and write answers 404 not_found."""

from __future__ import annotations

import pytest

from stores.engine.actors import Actor
from stores.models import Memory, RulesDocument, ScheduledTask, Skill, WorkingMemoryEntry
from stores.services import rules_add

OPS = {
    "memories": {
        "edit": {"old_string": "tea", "new_string": "x"},
        "replace": {"text": "x", "expected_version": 1},
        "revert": {"revision_id": 1},
        "set_importance": {"importance": 0.9},
        "reinforce": {},
        "invalidate": {},
    },
    "working-memory": {
        "edit": {"old_string": "patrol", "new_string": "x"},
        "replace": {"text": "x", "expected_version": 1},
        "revert": {"revision_id": 1},
        "set_ttl": {"ttl": 60},
    },
    "skills": {
        "edit": {"old_string": "Run", "new_string": "x"},
        "replace": {"text": "x", "expected_version": 1},
        "revert": {"revision_id": 1},
        "append": {"content": "x"},
        "replace_section": {"heading": "Steps", "content": "x"},
        "delete_section": {"heading": "Steps"},
    },
    "tasks": {
        "edit": {"old_string": "alerts", "new_string": "x"},
        "replace": {"text": "x", "expected_version": 1},
        "revert": {"revision_id": 1},
    },
    "rules": {
        "edit": {"old_string": "kind", "new_string": "x"},
        "replace": {"text": "x", "expected_version": 2},
        "revert": {"revision_id": 1},
        "add_rule": {"rule": "x"},
        "remove_rule": {"rule": "Be kind."},
        "replace_rule": {"rule": "Be kind.", "new_rule": "x"},
    },
}
PATCHES = {
    "memories": {"category": "x"},
    "working-memory": {"category": "x"},
    "skills": {"name": "x"},
    "tasks": {"enabled": False},
    "rules": {"content": "x", "expected_version": 2},
}
MODELS = {
    "memories": Memory,
    "working-memory": WorkingMemoryEntry,
    "skills": Skill,
    "tasks": ScheduledTask,
    "rules": RulesDocument,
}


@pytest.fixture
def foreign_records(other_agent, make):
    rules_add(agent=other_agent, actor=Actor.maintainer("tests"), rule="Be kind.")
    return {
        "memories": make.memory(other_agent, alias="shared-alias"),
        "working-memory": make.working(other_agent),
        "skills": make.skill(other_agent),
        "tasks": make.task(other_agent),
        "rules": RulesDocument.objects.get(agent=other_agent),
    }


def _snapshot(foreign_records):
    return {
        base: MODELS[base].objects.filter(pk=record.pk).values().first()
        for base, record in foreign_records.items()
    }


@pytest.mark.parametrize("base", list(OPS))
def test_reads_and_every_write_on_another_agents_record_are_not_found(api, foreign_records, base):
    before = _snapshot(foreign_records)
    record = foreign_records[base]
    answers = [
        api.call("get", f"{base}/{record.pk}/"),
        api.call("patch", f"{base}/{record.pk}/", PATCHES[base]),
        api.call("delete", f"{base}/{record.pk}/"),
    ]
    answers += [
        api.call("post", f"{base}/{record.pk}/{op}/", body) for op, body in OPS[base].items()
    ]
    for answer in answers:
        assert answer.status_code == 404, (answer.request, answer.json())
        assert answer.json()["status"] == "not_found"
    assert _snapshot(foreign_records) == before


def test_lists_recall_and_revisions_show_only_the_tokens_agent(api, agent, make, foreign_records):
    mine = make.memory(agent, "The user prefers tea.")
    recalled = api.call("get", "memories/?q=tea").json()["results"]
    assert [hit["id"] for hit in recalled] == [mine.pk]
    assert api.call("get", "skills/").json()["count"] == 0
    revisions = api.call("get", "revisions/").json()["results"]
    assert {r["record_id"] for r in revisions} == {mine.pk}
    # another agent's alias resolves to nothing here
    assert api.call("get", "memories/shared-alias/").status_code == 404


def test_a_token_cannot_choose_another_agent(api, other_agent):
    answer = api.call("get", f"memories/?agent={other_agent.name}")
    assert (answer.status_code, answer.json()["status"]) == (404, "not_found")


def test_tools_cannot_reach_another_agents_records(api, foreign_records):
    memory = foreign_records["memories"]
    for name, arguments in [
        ("read_record", {"surface": "memory", "id": memory.pk}),
        ("edit_memory", {"id": memory.pk, "old_string": "tea", "new_string": "x"}),
        ("memory_edit", {"op": "forget", "id": str(memory.pk)}),
        ("update_long_term_memory", {"memory_id": memory.pk, "memory_content": ""}),
    ]:
        answer = api.call("post", f"tools/{name}/", arguments)
        assert answer.status_code == 200
        assert "not_found" in answer.json()["status"], (name, answer.json())
    assert Memory.objects.filter(pk=memory.pk).exists()
