"""Who is calling and on behalf of which agent: a token's agent, or the agent a human chose."""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework.request import Request

from memoryadmin.api.exceptions import ApiError
from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.sources import SOURCE_HEADER, Source, parse_source_header
from stores.models import Agent, AgentToken, Channel

AGENT_PARAMETER = "agent"


@dataclass(frozen=True)
class Caller:
    agent: Agent
    actor: Actor
    # Whose Idempotency-Keys these are: a key is only ever matched against its own caller's.
    owner: str


def caller_for(request: Request) -> Caller:
    """The caller of `request`. A token sees only its agent; a human picks one with ?agent=."""
    requested = (request.query_params.get(AGENT_PARAMETER) or "").strip()
    token = request.auth if isinstance(request.auth, AgentToken) else None
    if token is not None:
        agent = token.agent
        if requested and requested not in (agent.name, str(agent.pk)):
            raise _unknown_agent(requested)
        actor = Actor.for_token(token).with_source(session_source(request))
        return Caller(agent=agent, actor=actor, owner=f"token:{token.pk}")

    user = request.user
    actor = Actor.for_user(user, channel=Channel.API).with_source(session_source(request))
    visible = Agent.objects.all()
    if not user.is_staff:
        visible = visible.filter(grants__user=user)
    if requested:
        lookup = {"pk": int(requested)} if requested.isdecimal() else {"name": requested}
        agent = visible.filter(**lookup).first()
        if agent is None:
            raise _unknown_agent(requested)
    else:
        candidates = list(visible[:2])
        if len(candidates) != 1:
            raise ApiError(
                Status.INVALID,
                "Choose the agent with the 'agent' query parameter (its name or id), "
                "e.g. ?agent=rockbot.",
            )
        agent = candidates[0]
    return Caller(agent=agent, actor=actor, owner=f"user:{user.pk}")


def session_source(request: Request) -> Source | None:
    """The source the `Memory-Source` header names for every write of the request (a body's
    own `source` wins part by part); a malformed header is refused as invalid."""
    header = request.headers.get(SOURCE_HEADER)
    return None if header is None else parse_source_header(header)


def _unknown_agent(requested: str) -> ApiError:
    return ApiError(Status.NOT_FOUND, f"No agent {requested!r} is visible to this caller.")
