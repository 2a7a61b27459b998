"""Run the suggestion pass over one agent's memories now (the periodic pass does the same)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from stores.management.agents import find_agent
from stores.models import Suggestion
from stores.services.suggestions import suggest_for_agent


class Command(BaseCommand):
    help = "Find duplicate and contradicting memories of an agent; print new ones per kind."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--agent", required=True, help="The agent's name.")

    def handle(self, *args: Any, **options: Any) -> None:
        agent = find_agent(options["agent"])
        counts = suggest_for_agent(agent)
        for kind in (Suggestion.Kind.DUPLICATE, Suggestion.Kind.CONFLICT):
            self.stdout.write(f"{kind}: {counts.get(kind, 0)} new")
        waiting = Suggestion.objects.filter(agent=agent, status=Suggestion.State.OPEN).count()
        self.stdout.write(f"open suggestions of {agent.name}: {waiting}")
