"""Who sees which agent in the browser: staff see every agent, others their grants."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import Http404, HttpRequest
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, render
from django_htmx.middleware import HtmxDetails

from stores.engine.actors import Actor
from stores.models import Agent, AgentAccess


class HtmxHttpRequest(HttpRequest):
    """A request as django-htmx's middleware leaves it: `htmx` says whether htmx sent it."""

    htmx: HtmxDetails


@dataclass(frozen=True)
class AgentScope:
    """The agent a page is about, and what the signed-in person may do with it."""

    agent: Agent
    actor: Actor
    role: str  # "staff", "editor" or "viewer"

    @property
    def can_write(self) -> bool:
        return self.role != AgentAccess.Role.VIEWER


def visible_agents(user: Any) -> QuerySet[Agent]:
    if user.is_staff:
        return Agent.objects.all()
    return Agent.objects.filter(grants__user=user)


def agent_scope(request: HttpRequest, agent_name: str) -> AgentScope:
    """The scope for `agent_name`, or 404 for an agent this person may not see."""
    agent = get_object_or_404(Agent, name=agent_name)
    user = request.user
    if user.is_staff:
        role = "staff"
    else:
        role = (
            AgentAccess.objects.filter(user=user, agent=agent)
            .values_list("role", flat=True)
            .first()
        )
        if role is None:
            raise Http404("No such agent.")
    return AgentScope(agent=agent, actor=Actor.for_user(user), role=role)


def agent_view(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Login required; resolves `agent_name` from the URL into `scope` for the view.

    An agent, surface or record that is not there (or not this person's to see) answers the
    app's own not-found page, as every missing page does; a Http404 left to Django showed its
    technical page (the URL patterns tried) whenever DEBUG was on.
    """

    @login_required
    @functools.wraps(view)
    def wrapper(request: HttpRequest, agent_name: str, **kwargs: Any) -> HttpResponseBase:
        scope = None
        try:
            scope = agent_scope(request, agent_name)
            return view(request, scope, **kwargs)
        except Http404:
            context = {"scope": scope, "agent": scope.agent if scope else None}
            return render(request, "404.html", context, status=404)

    return wrapper
