"""Revisions, revert, forget and restore."""

from __future__ import annotations

from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import Memory, Revision
from stores.services import memory_set_importance, record_edit, record_forget, record_revert

ME = Actor.maintainer("tests")


def test_every_write_records_a_revision_with_full_text(agent, make):
    memory = make.memory(agent, content="Likes tea.")
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        old_string="tea",
        new_string="green tea",
    )
    revisions = list(
        Revision.objects.filter(record_id=memory.pk, surface="memory").order_by("version_after")
    )
    assert [(r.op, r.version_before, r.version_after) for r in revisions] == [
        ("create", 0, 1),
        ("edit", 1, 2),
    ]
    assert (revisions[1].before_text, revisions[1].after_text) == ("Likes tea.", "Likes green tea.")
    assert (revisions[1].actor, revisions[1].channel) == ("shell:tests", "shell")


def test_revert_restores_text_and_fields_as_a_new_revision(agent, make):
    memory = make.memory(agent, content="Likes tea.", importance=0.3)
    edited = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        old_string="tea",
        new_string="coffee",
    )
    memory_set_importance(agent=agent, ref=memory.pk, actor=ME, importance=0.8)
    first = Revision.objects.get(record_id=memory.pk, surface="memory", op="create")
    result = record_revert(
        surface_key="memory", agent=agent, ref=memory.pk, actor=ME, revision_id=first.pk
    )
    memory.refresh_from_db()
    assert result.status is Status.REVERTED and result.version == 4
    assert (memory.content, memory.importance) == ("Likes tea.", 0.3)
    undo = record_revert(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        revision_id=edited.revision,
        to="before",
    )
    assert undo.status is Status.NO_CHANGE


def test_forgotten_records_stay_in_history_and_come_back_under_their_id(agent, make):
    memory = make.memory(agent, content="Parking spot 12.", category="car", tags=["parking"])
    forgotten = record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=ME)
    assert forgotten.status is Status.DELETED
    assert not Memory.objects.filter(pk=memory.pk).exists()
    last = Revision.objects.get(pk=forgotten.revision)
    assert last.before_text == "Parking spot 12." and last.op == "forget"
    restored = record_revert(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        revision_id=forgotten.revision,
        to="before",
    )
    memory = Memory.objects.get(pk=memory.pk)
    assert restored.status is Status.REVERTED and restored.version == 3
    assert (memory.content, memory.category, memory.tags) == (
        "Parking spot 12.",
        "car",
        ["parking"],
    )
    versions = list(
        Revision.objects.filter(record_id=memory.pk, surface="memory")
        .order_by("version_after")
        .values_list("version_after", flat=True)
    )
    assert versions == [1, 2, 3]


def test_revert_only_takes_revisions_of_the_same_record(agent, make):
    one = make.memory(agent, content="One.")
    two = make.memory(agent, content="Two.")
    foreign = Revision.objects.get(record_id=two.pk, surface="memory")
    result = record_revert(
        surface_key="memory", agent=agent, ref=one.pk, actor=ME, revision_id=foreign.pk
    )
    assert result.status is Status.NOT_FOUND


def test_a_revert_records_which_revision_it_reverted(agent, make):
    # The history can say what a revert took back.
    memory = make.memory(agent, content="Likes tea.")
    edited = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        old_string="tea",
        new_string="coffee",
    )
    result = record_revert(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        revision_id=edited.revision,
        to="before",
    )
    assert result.details["reverted_revision"] == edited.revision
    assert Revision.objects.get(pk=result.revision).reverted_revision == edited.revision
    assert Revision.objects.get(pk=edited.revision).reverted_revision is None


def test_a_restore_of_a_forgotten_record_records_the_revision_it_went_back_to(agent, make):
    memory = make.memory(agent, content="Likes tea.")
    forgotten = record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=ME)
    result = record_revert(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        revision_id=forgotten.revision,
        to="before",
    )
    assert result.status is Status.REVERTED and result.details["restored"]
    assert result.details["reverted_revision"] == forgotten.revision
    assert Revision.objects.get(pk=result.revision).reverted_revision == forgotten.revision
