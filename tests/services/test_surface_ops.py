"""Ops of working memory, skills, scheduled tasks and rules through the one service."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import RulesDocument, ScheduledTask, Skill, WorkingMemoryEntry
from stores.services import (
    record_create,
    record_edit,
    record_update,
    rules_add,
    rules_remove,
    rules_replace,
    skill_append,
    skill_delete_section,
    skill_replace_section,
    working_set_ttl,
)

ME = Actor.maintainer("tests")


def test_set_ttl_is_the_only_way_to_move_expiry(agent, make):
    entry = make.working(agent)
    assert entry.expires_at is None
    result = working_set_ttl(agent=agent, ref=entry.pk, actor=ME, ttl=3600)
    entry.refresh_from_db()
    assert result.ok
    assert timezone.now() + dt.timedelta(minutes=59) < entry.expires_at
    cleared = working_set_ttl(agent=agent, ref=entry.pk, actor=ME, clear=True)
    entry.refresh_from_db()
    assert cleared.ok and entry.expires_at is None
    assert working_set_ttl(agent=agent, ref=entry.pk, actor=ME).status is Status.INVALID


def test_expired_entries_are_not_found(agent, make):
    entry = make.working(agent, ttl=60)
    WorkingMemoryEntry.objects.filter(pk=entry.pk).update(
        expires_at=timezone.now() - dt.timedelta(seconds=1)
    )
    result = record_edit(
        surface_key="working",
        agent=agent,
        ref=entry.pk,
        actor=ME,
        old_string="patrol",
        new_string="night",
    )
    assert result.status is Status.NOT_FOUND


def test_skill_section_ops_keep_summary_and_need_no_reembedding(agent, make):
    skill = make.skill(
        agent,
        summary="How to deploy.",
        content="# Deploy\n\n## Steps\nRun it.\n\n## Rollback\nRevert it.\n",
    )
    text_hash = skill.text_hash
    replaced = skill_replace_section(
        agent=agent, ref=skill.pk, actor=ME, heading="Steps", content="Run the pipeline."
    )
    appended = skill_append(
        agent=agent, ref=skill.pk, actor=ME, content="Tell the team.", heading="Rollback"
    )
    deleted = skill_delete_section(
        agent=agent, ref=skill.pk, actor=ME, heading="Steps", expected_version=3
    )
    skill.refresh_from_db()
    assert [r.status for r in (replaced, appended, deleted)] == [Status.UPDATED] * 3
    assert skill.content == "# Deploy\n\n## Rollback\nRevert it.\nTell the team.\n"
    assert skill.summary == "How to deploy." and skill.text_hash == text_hash
    assert skill.version == 4


def test_skill_summary_is_an_editable_text_field(agent, make):
    skill = make.skill(agent, summary="How to deploy.")
    result = record_edit(
        surface_key="skill",
        agent=agent,
        ref=skill.pk,
        actor=ME,
        field="summary",
        old_string="deploy",
        new_string="ship",
    )
    skill.refresh_from_db()
    assert result.ok and skill.summary == "How to ship."


def test_task_schedule_is_validated_and_directive_edited(agent, make):
    task = make.task(agent)
    bad = record_update(
        surface_key="task",
        agent=agent,
        ref=task.pk,
        actor=ME,
        changes={"schedule": "every morning"},
    )
    assert bad.status is Status.INVALID and "cron" in bad.message
    good = record_update(
        surface_key="task",
        agent=agent,
        ref=task.pk,
        actor=ME,
        changes={"schedule": "30 6 * * 1-5", "enabled": False},
    )
    edited = record_edit(
        surface_key="task",
        agent=agent,
        ref=task.pk,
        actor=ME,
        old_string="overnight alerts",
        new_string="overnight alerts and tickets",
    )
    task.refresh_from_db()
    assert good.ok and edited.ok
    assert (task.schedule, task.enabled) == ("30 6 * * 1-5", False)
    assert task.directive == "Summarise the overnight alerts and tickets."


def test_unknown_fields_are_refused_not_ignored(agent, make):
    task = make.task(agent)
    result = record_update(
        surface_key="task", agent=agent, ref=task.pk, actor=ME, changes={"version": 99}
    )
    assert result.status is Status.INVALID
    assert ScheduledTask.objects.get(pk=task.pk).version == 1


def test_duplicate_names_are_a_conflict(agent, make):
    make.skill(agent, name="deploy")
    result = record_create(surface_key="skill", agent=agent, actor=ME, values={"name": "deploy"})
    assert result.status is Status.CONFLICT and "already" in result.message
    assert Skill.objects.filter(agent=agent).count() == 1


def test_rules_document_is_created_on_first_rule_and_kept_byte_for_byte(agent):
    document = "# Rules\r\n<!-- keep me -->\r\n\r\n* Be brief.\r\n"
    created = record_create(
        surface_key="rules", agent=agent, actor=ME, values={"content": document}
    )
    added = rules_add(agent=agent, actor=ME, rule="Cite sources.")
    rules = RulesDocument.objects.get(agent=agent)
    assert created.ok and added.ok
    assert rules.content == document + "* Cite sources.\r\n"
    replaced = rules_replace(
        agent=agent, actor=ME, rule="Cite sources.", new_rule="Cite sources inline."
    )
    removed = rules_remove(agent=agent, actor=ME, rule="Cite sources inline.")
    rules.refresh_from_db()
    assert replaced.ok and removed.ok
    assert rules.content == document and rules.version == 4


def test_first_rule_of_an_agent_creates_its_document(agent):
    result = rules_add(agent=agent, actor=ME, rule="Be kind.")
    assert result.ok and result.version == 2
    assert RulesDocument.objects.get(agent=agent).content == "- Be kind.\n"
