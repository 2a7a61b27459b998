"""Holding a conversation for review: its agents' writes wait in the review queue until a person
trusts it again (`Revision.review`, `engine.revisions.held_for_review`)."""

from __future__ import annotations

from stores.engine.actors import Actor
from stores.engine.sources import naming_conversation, parse_source
from stores.errors import Forbidden, Invalid, NotFound
from stores.models import Agent, QuarantinedConversation


def conversation_hold(
    *,
    agent: Agent,
    actor: Actor,
    conversation: str = "",
    held: bool = True,
    without_source: bool = False,
) -> bool:
    """Quarantine a conversation (`held`), so its further writes by agents wait in the review
    queue, or trust it again; answers whether it is held now. `without_source` holds (or
    trusts again) the agents' writes that name no conversation at all, kept as the hold of
    the empty name. Names compare without regard to case.

    People who may change the agent and maintainers only: a token must not lift the hold on
    the conversation it is writing from.
    """
    if without_source:
        if conversation:
            raise Invalid(
                "Hold either a conversation or the writes without one, not both.",
                field="conversation",
            )
        name = ""
    else:
        name = parse_source({"conversation": conversation}).conversation
        if not name:
            raise Invalid(
                "Name the conversation to hold for review (or hold the writes without one: "
                "without_source).",
                field="conversation",
            )
    if not actor.can_see(agent):
        raise NotFound(f"No agent {agent.name!r} is visible to this caller.")
    if actor.is_agent or not actor.can_write(agent):
        raise Forbidden(
            "Only a person who may change this agent, or a maintainer, holds a conversation "
            "for review or trusts it again; an agent's token may not."
        )
    holds = QuarantinedConversation.objects.filter(
        naming_conversation("conversation", name), agent=agent
    )
    if not held:
        holds.delete()
    elif not holds.exists():
        QuarantinedConversation.objects.get_or_create(
            agent=agent, conversation=name, defaults={"held_by": actor.label}
        )
    return held
