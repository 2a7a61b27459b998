"""Create a bearer token for an agent (creating the agent if needed); print the token last."""

from __future__ import annotations

import datetime as dt

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from stores.engine.actors import Actor
from stores.errors import Invalid
from stores.services.agents import agent_get_or_create, token_create


class Command(BaseCommand):
    help = (
        "Create an API token for AGENT (the agent is created if it does not exist). The "
        "token is shown once, alone on the last line of the output."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("agent", help="The agent's name.")
        parser.add_argument("--read-only", action="store_true", help="The token may only read.")
        parser.add_argument("--name", default="default", help="A label for the token.")
        parser.add_argument(
            "--expires-in", type=int, metavar="DAYS", help="Expire after this many days."
        )

    def handle(self, *args: object, **options: object) -> None:
        try:
            agent, created = agent_get_or_create(name=str(options["agent"]))
        except Invalid as error:
            raise CommandError(error.message) from error
        days = options["expires_in"]
        if days is not None and int(days) <= 0:
            raise CommandError("--expires-in must be a positive number of days.")
        expires_at = timezone.now() + dt.timedelta(days=int(days)) if days else None
        result = token_create(
            actor=Actor.maintainer(),
            agent=agent,
            name=str(options["name"]),
            read_only=bool(options["read_only"]),
            expires_at=expires_at,
        )
        if not result.ok:
            raise CommandError(f"{result.status}: {result.message}")
        token, raw = result.record, result.details["token"]
        kind = "read-only " if token.read_only else ""
        until = f", expires {expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else ""
        if created:
            self.stdout.write(f"Created agent {agent.name}.")
        self.stdout.write(f"Created {kind}token {token.name!r} for agent {agent.name}{until}.")
        self.stdout.write("Keep it secret; it is not shown again:")
        self.stdout.write(raw)
