"""Undo one change through the service, on every surface.

"Undo revision R" takes back R's change and keeps every change since, as a new revision (op
undo); later edits of the same lines make it a conflict naming those revisions. Distinct from
a revert, which brings back a whole version.
"""

from __future__ import annotations

import pytest
from django.conf import settings

from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.documents import rules_document
from stores.models import Agent, Memory, Revision
from stores.services import (
    record_edit,
    record_revert,
    record_undo,
    record_update,
    rules_add,
    skill_append,
)
from tests.factories import agent_token

pytestmark = pytest.mark.django_db

ME = Actor.maintainer("tests")
NOTES = "Likes tea.\nLives in Lyon.\nWorks nights.\n"


def edit(record, surface_key: str = "memory", **change) -> int:
    result = record_edit(
        surface_key=surface_key, agent=record.agent, ref=record.pk, actor=ME, **change
    )
    assert result.ok, result
    return result.revision


def undo(record, revision_id: int, surface_key: str = "memory", **extra):
    return record_undo(
        surface_key=surface_key,
        agent=record.agent,
        ref=record.pk,
        actor=extra.pop("actor", ME),
        revision_id=revision_id,
        **extra,
    )


def test_undoing_an_old_change_keeps_every_change_since(agent, make):
    memory = make.memory(agent, NOTES)
    tea = edit(memory, old_string="tea", new_string="mate")
    edit(memory, old_string="nights", new_string="days")
    result = undo(memory, tea)
    memory.refresh_from_db()
    assert result.status is Status.UPDATED, result
    assert memory.content == "Likes tea.\nLives in Lyon.\nWorks days.\n"
    assert result.details == {"undone_revision": tea}
    assert result.version == memory.version == 4
    written = Revision.objects.get(pk=result.revision)
    assert (written.op, written.version_before, written.version_after) == ("undo", 3, 4)
    assert written.before_text == "Likes mate.\nLives in Lyon.\nWorks days.\n"
    assert written.after_text == memory.content
    assert "-Likes mate." in result.diff and "+Likes tea." in result.diff


def test_undoing_a_change_of_one_word_keeps_a_later_change_of_another_on_its_line(agent, make):
    memory = make.memory(agent, "The client is Acme, based in Paris.\n")
    bad = edit(memory, old_string="Acme", new_string="EvilCorp")
    edit(memory, old_string="Paris", new_string="Lyon")

    result = undo(memory, bad)

    memory.refresh_from_db()
    assert result.status is Status.UPDATED, result
    assert memory.content == "The client is Acme, based in Lyon.\n"


def test_undoing_the_last_change_is_restoring_the_version_before_it(agent, make):
    memory = make.memory(agent, NOTES)
    edit(memory, old_string="Lyon", new_string="Paris")
    last = edit(memory, old_string="Works nights.\n", new_string="")
    restore = record_revert(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        revision_id=last,
        to="before",
        dry_run=True,
    )
    result = undo(memory, last)
    memory.refresh_from_db()
    assert result.ok, result
    assert (
        memory.content == restore.details["text"] == "Likes tea.\nLives in Paris.\nWorks nights.\n"
    )


def test_undoing_the_undo_redoes_the_change(agent, make):
    memory = make.memory(agent, NOTES)
    tea = edit(memory, old_string="tea", new_string="mate")
    edit(memory, old_string="nights", new_string="days")
    undone = undo(memory, tea)
    redone = undo(memory, undone.revision)
    memory.refresh_from_db()
    assert redone.ok, redone
    assert memory.content == "Likes mate.\nLives in Lyon.\nWorks days.\n"


def test_later_edits_of_the_same_lines_are_a_conflict_naming_them_and_nothing_is_written(
    agent, make
):
    memory = make.memory(agent, NOTES)
    tea = edit(memory, old_string="tea", new_string="mate")
    elsewhere = edit(memory, old_string="nights", new_string="days")
    same_line = edit(memory, old_string="mate", new_string="yerba mate")
    result = undo(memory, tea)
    assert result.status is Status.CONFLICT
    assert result.details["revisions"] == [same_line]
    assert elsewhere not in result.details["revisions"]
    assert result.details["lines"] == [[1, 1]]
    assert result.details["current_version"] == 4
    assert f"later revision {same_line} changed the same lines (today's line 1)" in result.message
    assert f"then undo revision {tea} again" in result.message
    memory.refresh_from_db()
    assert memory.version == 4 and memory.content.startswith("Likes yerba mate.")
    assert not Revision.objects.filter(record_id=memory.pk, op="undo").exists()


def test_a_conflict_names_every_later_revision_that_touched_the_lines(agent, make):
    memory = make.memory(agent, NOTES)
    both = edit(memory, old_string="tea.\nLives", new_string="coffee.\nStays")
    first = edit(memory, old_string="coffee", new_string="cocoa")
    edit(memory, old_string="nights", new_string="days")
    second = edit(memory, old_string="Stays in Lyon.", new_string="Stays in Lyon, France.")
    result = undo(memory, both)
    assert result.status is Status.CONFLICT
    assert result.details["revisions"] == [first, second]
    # Today's lines 1 to 3 all changed since, in one run: the conflict shows the whole run.
    assert result.details["lines"] == [[1, 3]]


def test_a_change_already_taken_back_by_hand_is_no_change(agent, make):
    memory = make.memory(agent, NOTES)
    tea = edit(memory, old_string="tea", new_string="mate")
    edit(memory, old_string="mate", new_string="tea")
    result = undo(memory, tea)
    assert result.status is Status.NO_CHANGE


def test_an_undo_previews_with_dry_run_writing_nothing(agent, make):
    memory = make.memory(agent, NOTES)
    tea = edit(memory, old_string="tea", new_string="mate")
    preview = undo(memory, tea, dry_run=True)
    assert preview.ok and preview.details["dry_run"] is True
    assert preview.details["text"] == NOTES and preview.revision is None
    memory.refresh_from_db()
    assert memory.version == 2 and "mate" in memory.content
    written = undo(memory, tea, expected_version=preview.version)
    assert written.ok and written.diff == preview.diff


def test_an_undo_checks_the_version_it_was_told(agent, make):
    memory = make.memory(agent, NOTES)
    tea = edit(memory, old_string="tea", new_string="mate")
    result = undo(memory, tea, expected_version=1)
    assert result.status is Status.CONFLICT
    assert result.details == {"current_version": 2, "expected_version": 1}


@pytest.mark.parametrize("what", ["create", "another record's revision", "no such revision"])
def test_what_has_no_change_of_this_record_to_undo_is_refused(agent, make, what):
    memory = make.memory(agent, NOTES)
    other = make.memory(agent, "Another memory.")
    if what == "create":
        revision_id = Revision.objects.get(record_id=memory.pk, surface="memory", op="create").pk
    elif what == "another record's revision":
        revision_id = edit(other, old_string="Another", new_string="One more")
    else:
        revision_id = 10**9
    result = undo(memory, revision_id)
    expected = Status.NOT_FOUND if "revision" in what else Status.INVALID
    assert result.status is expected, result
    if what == "create":
        assert "forget it instead" in result.message


def update(memory, actor=ME, **changes) -> int:
    result = record_update(
        surface_key="memory", agent=memory.agent, ref=memory.pk, actor=actor, changes=changes
    )
    assert result.ok, result
    return result.revision


def test_undoing_a_field_update_sets_those_fields_back_keeping_later_edits(agent, make):
    memory = make.memory(agent, NOTES, category="food", tags=["home"])
    retagged = update(memory, category="drinks", tags=["bar"])
    edit(memory, old_string="nights", new_string="days")
    update(memory, importance=0.9)

    result = undo(memory, retagged)

    assert result.status is Status.UPDATED, result
    memory.refresh_from_db()
    assert (memory.category, memory.tags) == ("food", ["home"])
    assert (memory.content, memory.importance) == (NOTES.replace("nights", "days"), 0.9)
    written = Revision.objects.get(pk=result.revision)
    assert (written.op, written.reverted_revision) == ("undo", retagged)
    assert undo(memory, retagged).status is Status.NO_CHANGE


def test_undoing_a_field_update_a_later_write_changed_again_is_a_conflict(agent, make):
    memory = make.memory(agent, NOTES, category="food")
    drinks = update(memory, category="drinks")
    later = update(memory, category="snacks")

    result = undo(memory, drinks)

    assert result.status is Status.CONFLICT
    assert result.details["revisions"] == [later]
    assert result.details["fields"] == ["category"]
    memory.refresh_from_db()
    assert memory.category == "snacks"


def test_an_undo_of_text_and_fields_takes_back_both(agent, make):
    memory = make.memory(agent, NOTES, category="food")
    both = record_update(
        surface_key="memory", agent=agent, ref=memory.pk, actor=ME, expected_version=1,
        changes={"content": NOTES.replace("tea", "mate"), "category": "drinks"},
    )  # fmt: skip
    assert both.ok, both

    result = undo(memory, both.revision)

    assert result.status is Status.UPDATED, result
    memory.refresh_from_db()
    assert (memory.content, memory.category) == (NOTES, "food")


def test_an_undo_that_would_empty_a_memory_is_refused(agent, make):
    memory = make.memory(agent, "Likes tea.\n")
    added = edit(memory, old_string="tea.\n", new_string="tea.\nAnd mate.\n")
    edit(memory, old_string="Likes tea.\n", new_string="")
    result = undo(memory, added)
    assert result.status is Status.INVALID
    assert "would leave the content empty" in result.message
    assert "forget it instead" in result.message


def test_an_undo_past_the_size_limit_is_refused_with_the_limit(agent, make, monkeypatch):
    memory = make.memory(agent, "a\n" + "x" * 40 + "\n")
    shrunk = edit(memory, old_string="x" * 40, new_string="short")
    limits = {**settings.MEMORYADMIN["MAX_TEXT_LENGTH"], "memory": 30}
    monkeypatch.setitem(settings.MEMORYADMIN, "MAX_TEXT_LENGTH", limits)
    result = undo(memory, shrunk)
    assert result.status is Status.INVALID
    assert result.details == {"limit": 30, "length": 43}


def test_store_rules_refuse_an_undo_of_an_episodic_memory(agent, make):
    memory = make.memory(agent, NOTES)
    tea = edit(memory, old_string="tea", new_string="mate")
    Memory.objects.filter(pk=memory.pk).update(store=Memory.Store.EPISODIC)
    staff = Actor.maintainer("tests")
    agent_actor = Actor.for_token(agent_token(agent)[0])
    assert undo(memory, tea, actor=agent_actor).status is Status.NOT_EDITABLE
    assert undo(memory, tea, actor=staff).ok  # a maintainer passes the store rules


def test_undoing_an_agents_change_settles_its_review_as_reverted(agent, make):
    memory = make.memory(agent, NOTES)
    Agent.objects.filter(pk=agent.pk).update(review_mode=Agent.ReviewMode.ALL)
    agent.refresh_from_db()
    memory.agent = agent
    token_actor = Actor.for_token(agent_token(agent)[0])
    written = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=token_actor,
        old_string="tea",
        new_string="mate",
    )
    assert Revision.objects.get(pk=written.revision).review == Revision.Review.PENDING
    assert undo(memory, written.revision, dry_run=True).ok
    assert Revision.objects.get(pk=written.revision).review == Revision.Review.PENDING
    assert undo(memory, written.revision).ok
    assert Revision.objects.get(pk=written.revision).review == Revision.Review.REVERTED


def test_undo_works_on_every_surface_and_on_a_skills_summary(agent, make):
    entry = make.working(agent, value=NOTES)
    task = make.task(agent, directive=NOTES)
    skill = make.skill(agent, summary="How to deploy.\nCarefully.")
    rules = rules_document(agent=agent, actor=ME)
    added = rules_add(agent=agent, actor=ME, rule="Be brief.")
    rules_add(agent=agent, actor=ME, rule="Be kind.")
    appended = skill_append(agent=agent, ref=skill.pk, actor=ME, content="Tell the team.")
    cases = [
        ("working", entry, "value", edit(entry, "working", old_string="tea", new_string="mate")),
        ("task", task, "directive", edit(task, "task", old_string="tea", new_string="mate")),
        (
            "skill",
            skill,
            "summary",
            edit(skill, "skill", field="summary", old_string="deploy", new_string="ship"),
        ),
        ("skill", skill, "content", appended.revision),
        ("rules", rules, "content", added.revision),
    ]
    for surface_key, record, field, revision_id in cases:
        before = getattr(type(record).objects.get(pk=record.pk), field)
        result = undo(record, revision_id, surface_key)
        assert result.ok, (surface_key, field, result)
        after = getattr(type(record).objects.get(pk=record.pk), field)
        assert after != before and result.details["undone_revision"] == revision_id
    skill.refresh_from_db()
    rules.refresh_from_db()
    assert skill.summary == "How to deploy.\nCarefully."
    assert "Tell the team." not in skill.content
    assert "Be brief." not in rules.content and "Be kind." in rules.content


def test_a_conflict_is_traced_through_many_later_revisions(
    agent, make, django_assert_max_num_queries
):
    memory = make.memory(agent, "head\n" + "".join(f"line {n}\n" for n in range(30)))
    old = edit(memory, old_string="line 0\n", new_string="LINE 0\n")
    for n in range(1, 30):
        edit(memory, old_string=f"line {n}\n", new_string=f"LINE {n}\n")
    touching = edit(memory, old_string="LINE 0", new_string="first line")
    # Finding the record, its revision, the conflict's ids and texts: a fixed number of queries.
    with django_assert_max_num_queries(12):
        result = undo(memory, old)
    assert result.status is Status.CONFLICT
    # Each neighbour's edit only borders the undone line; one revision rewrote it.
    assert result.details["revisions"] == [touching]


def test_an_undo_records_the_revision_it_took_back(agent, make):
    memory = make.memory(agent, NOTES)
    tea = edit(memory, old_string="tea", new_string="mate")
    result = undo(memory, tea)
    assert Revision.objects.get(pk=result.revision).reverted_revision == tea
