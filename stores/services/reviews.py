"""Settling what agents wrote, and the per-agent settings a human controls from the UI."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from stores.editing import Status
from stores.models import Agent, Revision
from stores.services.actors import Actor
from stores.services.agents import administration_refusal
from stores.services.records import record_forget, record_revert
from stores.services.results import WriteResult


def review_revert(*, agent: Agent, revision_id: int, actor: Actor) -> WriteResult:
    """Undo a revision awaiting review: back to the text before it (gone if it created the record).

    The review is settled as reverted only when the undo succeeded.
    """
    revision = Revision.objects.filter(pk=revision_id, agent=agent).first()
    if revision is None or not actor.can_see(agent):
        return WriteResult(status=Status.NOT_FOUND, message=f"No revision {revision_id}.")
    if revision.review != Revision.Review.PENDING:
        return WriteResult(
            status=Status.NO_CHANGE, message=f"Revision {revision_id} is not awaiting review."
        )
    if revision.op != "create":
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
            Revision.objects.filter(pk=revision.pk).update(
                review=Revision.Review.REVERTED,
                reviewed_by=actor.user if actor.kind == "user" else None,
                reviewed_at=timezone.now(),
            )
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
