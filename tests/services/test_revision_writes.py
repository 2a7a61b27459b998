"""Revisions are built one way and reviews settled one way, whichever path wrote them."""

from __future__ import annotations

import pytest

from stores.engine.actors import Actor
from stores.engine.revisions import settle_review
from stores.errors import Invalid
from stores.models import Agent, Memory, Revision
from stores.services import record_edit, record_revert
from stores.services.importing.cleaning import clean_values
from stores.services.importing.entries import Incoming
from stores.services.importing.run import import_records
from stores.services.reviews import revision_approve
from tests.factories import agent_token


def test_an_imported_revision_records_its_actor_like_any_write(agent, staff_user):
    """Regression: the importer built its revision rows by hand and left out who imported."""
    actor = Actor.for_user(staff_user)
    entry = Incoming(
        surface="memory", ref="m-1", values=clean_values("memory", {"content": "Tea."}), source="t"
    )

    report = import_records(agent=agent, items=[entry], actor=actor)

    assert not report.problems, report.problems
    memory = Memory.objects.get(agent=agent, alias="m-1")
    revision = Revision.objects.get(surface="memory", record_id=memory.pk)
    assert (revision.op, revision.actor, revision.actor_user) == ("import", actor.label, staff_user)
    assert revision.review == Revision.Review.NOT_NEEDED


def test_an_import_refuses_an_empty_memory_as_a_write_does(db):
    """Regression: import checked blank text only for short fields, so an empty memory,
    which no create accepts, could be imported."""
    with pytest.raises(Invalid, match="content"):
        clean_values("memory", {"content": ""})


@pytest.fixture
def pending(agent, make):
    memory = make.memory(agent, "The user likes tea.")
    Agent.objects.filter(pk=agent.pk).update(review_mode=Agent.ReviewMode.ALL)
    agent.refresh_from_db()
    token = agent_token(agent)[0]
    result = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=Actor.for_token(token),
        old_string="tea",
        new_string="mate",
    )
    revision = Revision.objects.get(pk=result.revision)
    assert revision.review == Revision.Review.PENDING
    return revision


def test_a_stale_settlement_leaves_a_review_someone_settled_alone(agent, staff_user, pending):
    """Regression: the settlement on revert updated the row unconditionally after reading it,
    so a revert racing an approval overwrote the approval."""
    person = Actor.for_user(staff_user)
    stale = Revision.objects.get(pk=pending.pk)
    assert revision_approve(agent=agent, revision_id=pending.pk, actor=person).ok

    assert settle_review(stale, Revision.Review.REVERTED, person) is False

    settled = Revision.objects.get(pk=pending.pk)
    assert (settled.review, settled.reviewed_by) == (Revision.Review.APPROVED, staff_user)


def test_approve_and_revert_settle_a_review_the_same_way(agent, staff_user, pending, make):
    person = Actor.for_user(staff_user)

    reverted = record_revert(
        surface_key="memory",
        agent=agent,
        ref=pending.record_id,
        actor=person,
        revision_id=pending.pk,
        to="before",
    )
    again = revision_approve(agent=agent, revision_id=pending.pk, actor=person)

    assert reverted.ok
    settled = Revision.objects.get(pk=pending.pk)
    assert (settled.review, settled.reviewed_by) == (Revision.Review.REVERTED, staff_user)
    assert settled.reviewed_at is not None
    assert (again.status, again.message) == (
        "no_change",
        f"Revision {pending.pk} is not awaiting review.",
    )
