"""Peers' editing vocabulary through the service: insert at a line and
prepend on every surface's text, a numbered view, an expected replacement count on phrase
edits, and on a skill's markdown inserting beside a heading and replacing a section's own text
while keeping its subsections."""

from __future__ import annotations

import pytest
from django.conf import settings

from stores.editing import Status, TextEditError
from stores.engine.actors import Actor
from stores.engine.documents import rules_document
from stores.errors import Invalid
from stores.models import Revision, RulesDocument
from stores.selectors.records import record_lines
from stores.services import (
    record_edit,
    record_insert,
    record_prepend,
    record_replace,
    skill_insert_after_section,
    skill_insert_before_section,
    skill_replace_section,
)
from tests.factories import agent_token

pytestmark = pytest.mark.django_db

ME = Actor.maintainer("tests")
SKILL_BODY = "# Deploy\n\n## Steps\nRun it.\n\n### Checks\nLook twice.\n\n## Rollback\nRevert.\n"


def insert(record, surface_key: str = "memory", **arguments):
    return record_insert(
        surface_key=surface_key, agent=record.agent, ref=record.pk, actor=ME, **arguments
    )


# --- insert and prepend -----------------------------------------------------------------


def test_insert_at_a_line_writes_a_revision_of_op_insert(agent, make):
    memory = make.memory(agent, "Likes tea.\nLives in Lyon.")
    result = insert(memory, insert_line=1, content="Works nights.")
    memory.refresh_from_db()
    assert result.status is Status.UPDATED, result
    assert memory.content == "Likes tea.\nWorks nights.\nLives in Lyon.\n"
    revision = Revision.objects.get(pk=result.revision)
    assert (revision.op, revision.version_after) == ("insert", 2)
    assert "+Works nights." in result.diff


def test_an_insert_line_out_of_range_is_a_miss_naming_the_range(agent, make):
    memory = make.memory(agent, "Likes tea.\nLives in Lyon.")
    result = insert(memory, insert_line=10, content="x")
    assert result.status is Status.NO_MATCH
    assert "within [0, 2]" in result.message
    memory.refresh_from_db()
    assert memory.version == 1


def test_insert_keeps_a_crlf_text_in_crlf(agent, make):
    memory = make.memory(agent, "Likes tea.\r\nLives in Lyon.\r\n")
    assert insert(memory, insert_line=2, content="Works nights.\n").ok
    memory.refresh_from_db()
    assert memory.content == "Likes tea.\r\nLives in Lyon.\r\nWorks nights.\r\n"


def test_prepend_goes_before_the_first_line(agent, make):
    entry = make.working(agent, value="Reviewing the patrol log.")
    result = record_prepend(
        surface_key="working", agent=agent, ref=entry.pk, actor=ME, content="Urgent:"
    )
    entry.refresh_from_db()
    assert result.ok and entry.value == "Urgent:\nReviewing the patrol log.\n"
    assert Revision.objects.get(pk=result.revision).op == "prepend"
    empty = record_prepend(surface_key="working", agent=agent, ref=entry.pk, actor=ME, content=" ")
    assert empty.status is Status.INVALID


def test_inserts_reach_every_surface_and_any_text_field(agent, make):
    task = make.task(agent)
    skill = make.skill(agent, summary="How to deploy.")
    rules = rules_document(agent=agent, actor=ME)
    assert insert(task, "task", insert_line=0, content="Be quick.").ok
    assert insert(skill, "skill", field="summary", insert_line=1, content="Carefully.").ok
    assert insert(rules, "rules", insert_line=0, content="- Be brief.").ok
    task.refresh_from_db()
    skill.refresh_from_db()
    assert task.directive == "Be quick.\nSummarise the overnight alerts.\n"
    assert skill.summary == "How to deploy.\nCarefully.\n"
    assert RulesDocument.objects.get(pk=rules.pk).content == "- Be brief.\n"
    bad = insert(skill, "skill", field="name", insert_line=0, content="x")
    assert bad.status is Status.INVALID and "not an editable text field" in bad.message


def test_an_insert_past_the_size_limit_is_refused_before_it_is_built(agent, make, monkeypatch):
    memory = make.memory(agent, "Likes tea.")
    limits = {**settings.MEMORYADMIN["MAX_TEXT_LENGTH"], "memory": 20}
    monkeypatch.setitem(settings.MEMORYADMIN, "MAX_TEXT_LENGTH", limits)
    result = insert(memory, insert_line=1, content="Lives in Lyon.")
    assert result.status is Status.INVALID
    assert result.details == {"limit": 20, "length": len("Likes tea.\nLives in Lyon.\n")}


def test_an_insert_checks_the_version_it_was_told(agent, make):
    memory = make.memory(agent, "Likes tea.")
    result = insert(memory, insert_line=0, content="x", expected_version=7)
    assert result.status is Status.CONFLICT


def test_a_read_only_token_may_not_insert(agent, make):
    memory = make.memory(agent, "Likes tea.")
    read_only = Actor.for_token(agent_token(agent, read_only=True)[0])
    result = record_insert(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=read_only,
        insert_line=0,
        content="x",
    )
    assert result.status is Status.FORBIDDEN


def test_store_rules_refuse_an_agents_insert_into_a_fact(agent, make):
    fact = make.memory(agent, "Water boils at 100 C.", store="fact")
    result = record_insert(
        surface_key="memory",
        agent=agent,
        ref=fact.pk,
        actor=Actor.for_token(agent_token(agent)[0]),
        insert_line=0,
        content="x",
    )
    assert result.status is Status.NOT_EDITABLE


# --- expected_replacements --------------------------------------------------------------


def test_expected_replacements_refuses_another_count_with_the_real_one(agent, make):
    memory = make.memory(agent, "tea\ncoffee\ntea and tea")
    refused = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        old_string="tea",
        new_string="mate",
        expected_replacements=2,
    )
    assert refused.status is Status.AMBIGUOUS
    assert {key: refused.details[key] for key in ("count", "lines")} == {
        "count": 3,
        "lines": [1, 3],
    }
    assert [o["line"] for o in refused.details["occurrences"]] == [1, 3, 3]
    assert "not 2 as expected_replacements says" in refused.message
    done = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        old_string="tea",
        new_string="mate",
        expected_replacements=3,
    )
    memory.refresh_from_db()
    assert done.ok and done.details["replacements"] == 3
    assert memory.content == "mate\ncoffee\nmate and mate"


# --- markdown sections of a skill -------------------------------------------------------


def test_skill_inserts_land_just_above_and_just_below_a_heading(agent, make):
    skill = make.skill(agent, content=SKILL_BODY)
    above = skill_insert_before_section(
        agent=agent, ref=skill.pk, actor=ME, heading="Rollback", content="## Verify\nCheck.\n"
    )
    below = skill_insert_after_section(
        agent=agent, ref=skill.pk, actor=ME, heading="Steps", content="Read the runbook."
    )
    skill.refresh_from_db()
    assert above.ok and below.ok
    assert skill.content == SKILL_BODY.replace(
        "## Rollback", "## Verify\nCheck.\n## Rollback"
    ).replace("## Steps\n", "## Steps\nRead the runbook.\n\n")  # a block of its own
    ops = list(
        Revision.objects.filter(record_id=skill.pk, surface="skill")
        .order_by("version_after")
        .values_list("op", flat=True)
    )
    assert ops == ["create", "insert_before_section", "insert_after_section"]


def test_a_skill_section_insert_under_an_unknown_heading_names_the_closest(agent, make):
    skill = make.skill(agent, content=SKILL_BODY)
    result = skill_insert_after_section(
        agent=agent, ref=skill.pk, actor=ME, heading="Rolback", content="x"
    )
    assert result.status is Status.NO_MATCH
    assert result.details["near_miss"]["text"] == "Rollback"


def test_replace_section_can_keep_the_sections_subsections(agent, make):
    skill = make.skill(agent, content=SKILL_BODY)
    kept = skill_replace_section(
        agent=agent,
        ref=skill.pk,
        actor=ME,
        heading="Steps",
        content="Run the pipeline.",
        keep_subsections=True,
    )
    skill.refresh_from_db()
    assert kept.ok
    assert skill.content == SKILL_BODY.replace("Run it.\n", "Run the pipeline.\n")
    dropped = skill_replace_section(
        agent=agent, ref=skill.pk, actor=ME, heading="Steps", content="Run it all."
    )
    skill.refresh_from_db()
    assert dropped.ok and "### Checks" not in skill.content
    bad = skill_replace_section(
        agent=agent, ref=skill.pk, actor=ME, heading="Steps", content="x", keep_subsections="yes"
    )
    assert bad.status is Status.INVALID and "keep_subsections" in bad.message


# --- the numbered view ------------------------------------------------------------------


def test_a_record_is_viewed_with_numbered_lines(agent, make):
    memory = make.memory(agent, "Line 1\nLine 2\nLine 3\nLine 4\nLine 5")
    view = record_lines(memory, start=2, end=4)
    assert view == {
        "id": memory.pk,
        "version": 1,
        "field": "content",
        "numbered": "     2\tLine 2\n     3\tLine 3\n     4\tLine 4",
        "first": 2,
        "last": 4,
        "total": 5,
    }
    assert record_lines(memory)["numbered"].startswith("     1\tLine 1\n")


def test_a_view_outside_the_text_or_of_a_field_that_is_no_text_is_refused(agent, make):
    skill = make.skill(agent, summary="How to deploy.")
    assert record_lines(skill, field="summary")["numbered"] == "     1\tHow to deploy."
    with pytest.raises(TextEditError) as refused:
        record_lines(skill, start=99)
    assert refused.value.status is Status.NO_MATCH and "[1, " in refused.value.message
    with pytest.raises(Invalid):
        record_lines(skill, field="name")


def test_the_view_is_of_the_text_as_stored_now(agent, make):
    memory = make.memory(agent, "one")
    assert record_replace(
        surface_key="memory", agent=agent, ref=memory.pk, actor=ME, text="one\ntwo",
        expected_version=1,
    ).ok  # fmt: skip
    memory.refresh_from_db()
    assert record_lines(memory)["numbered"] == "     1\tone\n     2\ttwo"
    assert record_lines(memory)["version"] == 2
