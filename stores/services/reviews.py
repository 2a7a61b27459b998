"""Settling what agents wrote, and the per-agent settings a human controls from the UI."""

from __future__ import annotations

from django.db import transaction

from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.results import WriteResult
from stores.engine.revisions import settle_review
from stores.models import Agent, Revision
from stores.opnames import OpName
from stores.selectors.revisions import agent_revision
from stores.services import record_forget, record_revert
from stores.services.agents import administration_refusal


def revision_approve(*, agent: Agent, revision_id: int, actor: Actor) -> WriteResult:
    """Accept what an agent wrote: the review is settled, the record is left as it is."""
    if actor.kind != "user" or not actor.can_see(agent):
        return WriteResult(status=Status.NOT_FOUND, message=f"No revision {revision_id}.")
    if not actor.can_write(agent):
        return WriteResult(status=Status.FORBIDDEN, message="Viewers cannot approve reviews.")
    revision = agent_revision(agent, revision_id)
    if revision is None:
        return WriteResult(status=Status.NOT_FOUND, message=f"No revision {revision_id}.")
    if not settle_review(revision, Revision.Review.APPROVED, actor):
        return WriteResult(
            status=Status.NO_CHANGE, message=f"Revision {revision_id} is not awaiting review."
        )
    return WriteResult(
        status=Status.APPROVED,
        surface=revision.surface,
        id=revision.record_id,
        revision=revision.pk,
        version=revision.version_after,
    )


def review_revert(*, agent: Agent, revision_id: int, actor: Actor) -> WriteResult:
    """Undo a revision awaiting review: back to the text before it (gone if it created the record).

    The review is settled as reverted only when the undo succeeded.
    """
    revision = agent_revision(agent, revision_id)
    if revision is None or not actor.can_see(agent):
        return WriteResult(status=Status.NOT_FOUND, message=f"No revision {revision_id}.")
    if revision.review != Revision.Review.PENDING:
        return WriteResult(
            status=Status.NO_CHANGE, message=f"Revision {revision_id} is not awaiting review."
        )
    if revision.op != OpName.CREATE:
        return record_revert(
            surface_key=revision.surface,
            agent=agent,
            ref=revision.record_id,
            actor=actor,
            revision_id=revision.pk,
            to="before",
        )
    # Before its first revision the record did not exist: undoing the creation forgets it.
    with transaction.atomic():
        result = record_forget(
            surface_key=revision.surface, agent=agent, ref=revision.record_id, actor=actor
        )
        if result.ok:
            settle_review(revision, Revision.Review.REVERTED, actor)
    return result


def agent_set_review_mode(*, agent: Agent, actor: Actor, review_mode: str) -> WriteResult:
    """Choose whether everything agents write waits for a human's review."""
    refused = administration_refusal(actor, agent, "change the agent's settings")
    if refused is not None:
        return refused
    if review_mode not in Agent.ReviewMode.values:
        choices = ", ".join(Agent.ReviewMode.values)
        return WriteResult(status=Status.INVALID, message=f"review_mode must be one of {choices}.")
    updated = (
        Agent.objects.filter(pk=agent.pk)
        .exclude(review_mode=review_mode)
        .update(review_mode=review_mode)
    )
    agent.review_mode = review_mode
    if not updated:
        return WriteResult(status=Status.NO_CHANGE, message="The agent already works that way.")
    return WriteResult(status=Status.UPDATED, message="Review setting saved.")
