"""Every text op previews with `dry_run`: the same checks and answer as the write, nothing
written — no version bump, no revision, no re-embed, no settled review."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.conf import settings

from stores.engine.actors import Actor
from stores.engine.documents import rules_document
from stores.models import AgentAccess, Memory, Revision, RulesDocument
from stores.services import (
    record_edit,
    record_forget,
    record_insert,
    record_prepend,
    record_replace,
    record_revert,
    record_undo,
    rules_add,
    rules_remove,
    rules_replace,
    skill_append,
    skill_delete_section,
    skill_insert_after_section,
    skill_insert_before_section,
    skill_replace_section,
)
from tests.factories import UserFactory, agent_token

pytestmark = pytest.mark.django_db

MAINTAINER = Actor.maintainer("tests")
MEMORY_LIMIT = settings.MEMORYADMIN["MAX_TEXT_LENGTH"]["memory"]


@dataclass
class Case:
    """One text op on a record made for it: the service function and its arguments."""

    surface: str
    record: Any
    call: Any
    kwargs: dict[str, Any]

    def run(self, actor: Actor = MAINTAINER, **extra: Any) -> Any:
        return self.call(agent=self.record.agent, actor=actor, **{**self.kwargs, **extra})


def _memory(agent, make):
    return make.memory(agent, "The user likes tea.\nThey drink it at noon.")


def _edited_memory(agent, make):
    memory = _memory(agent, make)
    assert record_edit(
        surface_key="memory", agent=agent, ref=memory.pk, actor=MAINTAINER,
        old_string="tea", new_string="mate",
    ).ok  # fmt: skip
    memory.refresh_from_db()
    return memory


def _skill(agent, make):
    return make.skill(agent, content="# Deploy\n\n## Steps\nRun it.\n\n## Notes\nOld.\n")


def _rules(agent, make):
    document = rules_document(agent=agent, actor=MAINTAINER)
    assert record_replace(
        surface_key="rules", agent=agent, ref=document.pk, actor=MAINTAINER,
        text="# Rules\n\n* Be kind.\n* Be brief.\n", expected_version=1,
    ).ok  # fmt: skip
    document.refresh_from_db()
    return document


def _revert_kwargs(memory):
    edit = Revision.objects.get(record_id=memory.pk, surface="memory", op="edit")
    return {"surface_key": "memory", "ref": memory.pk, "revision_id": edit.pk, "to": "before"}


def _undo_kwargs(memory):
    edit = Revision.objects.get(record_id=memory.pk, surface="memory", op="edit")
    return {"surface_key": "memory", "ref": memory.pk, "revision_id": edit.pk}


OPS = {
    "record_edit": lambda agent, make: (
        "memory", record := _memory(agent, make), record_edit,
        {"surface_key": "memory", "ref": record.pk, "old_string": "tea", "new_string": "mate"},
    ),
    "record_replace": lambda agent, make: (
        "memory", record := _memory(agent, make), record_replace,
        {"surface_key": "memory", "ref": record.pk, "text": "The user likes coffee, a lot.",
         "expected_version": 1},
    ),
    "skill_append": lambda agent, make: (
        "skill", record := _skill(agent, make), skill_append,
        {"ref": record.pk, "content": "Ask first.", "heading": "Notes"},
    ),
    "skill_replace_section": lambda agent, make: (
        "skill", record := _skill(agent, make), skill_replace_section,
        {"ref": record.pk, "heading": "Steps", "content": "Run it twice."},
    ),
    "skill_delete_section": lambda agent, make: (
        "skill", record := _skill(agent, make), skill_delete_section,
        {"ref": record.pk, "heading": "Notes"},
    ),
    "rules_add": lambda agent, make: (
        "rules", _rules(agent, make), rules_add, {"rule": "Cite sources."},
    ),
    "rules_remove": lambda agent, make: (
        "rules", _rules(agent, make), rules_remove, {"rule": "Be brief."},
    ),
    "rules_replace": lambda agent, make: (
        "rules", _rules(agent, make), rules_replace,
        {"rule": "Be kind.", "new_rule": "Be kind and honest."},
    ),
    "record_revert": lambda agent, make: (
        "memory", record := _edited_memory(agent, make), record_revert, _revert_kwargs(record),
    ),
    "record_undo": lambda agent, make: (
        "memory", record := _edited_memory(agent, make), record_undo, _undo_kwargs(record),
    ),
    "record_edit expected_replacements": lambda agent, make: (
        "memory", record := _memory(agent, make), record_edit,
        {"surface_key": "memory", "ref": record.pk, "old_string": "t", "new_string": "T",
         "expected_replacements": 3},
    ),
    "record_insert": lambda agent, make: (
        "memory", record := _memory(agent, make), record_insert,
        {"surface_key": "memory", "ref": record.pk, "insert_line": 1, "content": "Often."},
    ),
    "record_prepend": lambda agent, make: (
        "memory", record := _memory(agent, make), record_prepend,
        {"surface_key": "memory", "ref": record.pk, "content": "Note:"},
    ),
    "skill_insert_before_section": lambda agent, make: (
        "skill", record := _skill(agent, make), skill_insert_before_section,
        {"ref": record.pk, "heading": "Notes", "content": "Ask first."},
    ),
    "skill_insert_after_section": lambda agent, make: (
        "skill", record := _skill(agent, make), skill_insert_after_section,
        {"ref": record.pk, "heading": "Notes", "content": "Ask first."},
    ),
    "skill_replace_section keep_subsections": lambda agent, make: (
        "skill", record := _skill(agent, make), skill_replace_section,
        {"ref": record.pk, "heading": "Deploy", "content": "Intro.", "keep_subsections": True},
    ),
}  # fmt: skip


@pytest.fixture(params=sorted(OPS))
def case(request, agent, make) -> Case:
    return Case(*OPS[request.param](agent, make))


def _state(case: Case) -> tuple[Any, ...]:
    record = type(case.record).objects.get(pk=case.record.pk)
    text_field = "content"
    return (
        record.version,
        getattr(record, text_field),
        record.updated_at,
        Revision.objects.count(),
        list(Revision.objects.values_list("review", flat=True).order_by("pk")),
    )


def test_a_dry_run_writes_nothing_and_enqueues_nothing(case, django_capture_on_commit_callbacks):
    before = _state(case)
    with django_capture_on_commit_callbacks() as callbacks:
        result = case.run(dry_run=True)
    assert result.ok, result
    assert result.details["dry_run"] is True
    assert result.revision is None
    assert callbacks == []  # no re-embed
    assert _state(case) == before


def test_a_dry_run_answers_what_the_write_then_does(case):
    preview = case.run(dry_run=True)
    written = case.run()
    assert written.ok, written
    assert preview.status == written.status
    assert preview.diff == written.diff
    assert preview.version == written.version - 1  # the version it was computed against
    record = type(case.record).objects.get(pk=case.record.pk)
    assert preview.details["text"] == getattr(record, preview.details["field"])
    shared = {k: v for k, v in preview.details.items() if k not in ("dry_run", "field", "text")}
    assert shared == written.details


def _viewer(agent) -> Actor:
    user = UserFactory()
    AgentAccess.objects.create(user=user, agent=agent, role=AgentAccess.Role.VIEWER)
    return Actor.for_user(user)


def test_a_dry_run_refuses_a_viewer_and_a_read_only_token_as_the_write_does(case, agent):
    read_only = Actor.for_token(agent_token(agent, read_only=True)[0])
    for actor in (_viewer(agent), read_only):
        preview = case.run(actor=actor, dry_run=True)
        written = case.run(actor=actor)
        assert preview.status == written.status == "forbidden"
        assert preview.message == written.message


def test_a_dry_run_refuses_a_stale_version_as_the_write_does(case):
    preview = case.run(dry_run=True, expected_version=case.record.version + 1)
    written = case.run(expected_version=case.record.version + 1)
    assert preview.status == written.status == "conflict"
    assert preview.details == written.details


def _same_refusal(**kwargs: Any) -> Any:
    preview = record_edit(dry_run=True, **kwargs)
    written = record_edit(**kwargs)
    assert not written.ok
    assert (preview.status, preview.message, preview.details) == (
        written.status,
        written.message,
        written.details,
    )
    return preview


def test_store_rules_refuse_a_preview_as_they_refuse_the_edit(agent, make):
    fact = make.memory(agent, "Water boils at 100 C.", store="fact")
    staff = Actor.for_user(UserFactory(is_staff=True))
    refused = _same_refusal(
        surface_key="memory", agent=agent, ref=fact.pk, actor=staff,
        old_string="100", new_string="90",
    )  # fmt: skip
    assert refused.status == "not_editable"


def test_a_preview_past_the_size_limit_is_refused_as_the_edit_is(agent, make):
    memory = make.memory(agent, "a" * (MEMORY_LIMIT // 2 + 1))
    refused = _same_refusal(
        surface_key="memory", agent=agent, ref=memory.pk, actor=MAINTAINER,
        old_string="a", new_string="bb", replace_all=True,
    )  # fmt: skip
    assert refused.status == "invalid"
    assert refused.details["limit"] == MEMORY_LIMIT


def test_a_preview_with_no_match_names_the_same_near_miss(agent, make):
    memory = _memory(agent, make)
    refused = _same_refusal(
        surface_key="memory", agent=agent, ref=memory.pk, actor=MAINTAINER,
        old_string="likes tee", new_string="likes mate",
    )  # fmt: skip
    assert refused.status == "no_match"
    assert refused.details["near_miss"]["line"] == 1


def test_a_viewer_preview_is_refused_before_the_text_engine_runs(agent, make, monkeypatch):
    memory = make.memory(agent, "a" * MEMORY_LIMIT)

    def never(*args, **kwargs):
        raise AssertionError("the edit was built for a caller who may not make it")

    monkeypatch.setattr("stores.ops.records.edit.apply_edits", never)
    result = record_edit(
        surface_key="memory", agent=agent, ref=memory.pk, actor=_viewer(agent),
        old_string="a", new_string="b" * 2000, replace_all=True, dry_run=True,
    )  # fmt: skip
    assert result.status == "forbidden"


def test_a_first_rule_previews_without_creating_the_document(agent):
    result = rules_add(agent=agent, actor=MAINTAINER, rule="Be kind.", dry_run=True)
    assert result.ok and result.details["text"].strip().endswith("Be kind.")
    assert result.version == 1  # the empty document the write creates first
    assert not RulesDocument.objects.filter(agent=agent).exists()
    assert not Revision.objects.exists()


def test_restoring_a_forgotten_record_previews_without_bringing_it_back(agent, make):
    memory = _memory(agent, make)
    forgotten = record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=MAINTAINER)
    revisions = Revision.objects.count()
    kwargs = {
        "surface_key": "memory", "agent": agent, "ref": memory.pk, "actor": MAINTAINER,
        "revision_id": forgotten.revision, "to": "before",
    }  # fmt: skip
    preview = record_revert(dry_run=True, **kwargs)
    assert preview.ok and preview.details["restored"] is True
    assert preview.details["text"] == memory.content
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert Revision.objects.count() == revisions
    restored = record_revert(**kwargs)
    assert restored.ok and restored.version == preview.version + 1


def test_a_dry_run_is_logged_as_a_preview_not_a_write(agent, make, caplog):
    memory = _memory(agent, make)
    caplog.clear()
    with caplog.at_level("INFO", logger="memoryadmin.writes"):
        record_edit(
            surface_key="memory", agent=agent, ref=memory.pk, actor=MAINTAINER,
            old_string="tea", new_string="mate", dry_run=True,
        )  # fmt: skip
    (entry,) = [r for r in caplog.records if r.name == "memoryadmin.writes"]
    assert entry.getMessage().startswith("preview record_edit updated")
    assert entry.dry_run is True
