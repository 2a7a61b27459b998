"""The agent a management command names, or a refusal that lists the agents there are."""

from __future__ import annotations

from django.core.management.base import CommandError

from stores.models import Agent


def find_agent(name: str) -> Agent:
    agent = Agent.objects.filter(name=name).first()
    if agent is None:
        known = ", ".join(Agent.objects.values_list("name", flat=True)[:20]) or "none yet"
        raise CommandError(f"No agent {name!r} (agents: {known}).")
    return agent
