"""Serve one agent's memory over MCP on stdin/stdout, for an agent running on this machine."""

from __future__ import annotations

import os

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections

from memoryadmin.mcp.stdio import serve_stdio
from stores.services.agents import token_authenticate

TOKEN_VARIABLE = "MEMORYADMIN_TOKEN"


class Command(BaseCommand):
    help = (
        "Serve the memory tools and the memory://<id> resource over MCP on stdin/stdout, as "
        "the agent the token belongs to. Point an MCP client's stdio command here."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--token",
            help=f"The agent's API token (default: the {TOKEN_VARIABLE} environment variable, "
            "which keeps it out of the process list).",
        )

    def handle(self, *args: object, **options: object) -> None:
        raw = str(options["token"] or os.environ.get(TOKEN_VARIABLE, "")).strip()
        if not raw:
            raise CommandError(f"Give the agent's token with --token or {TOKEN_VARIABLE}.")
        token = token_authenticate(raw)
        if token is None:
            raise CommandError("Unknown, revoked or expired token.")
        # stdout carries the protocol from here on: say hello on stderr.
        self.stderr.write(f"memoryadmin: serving agent {token.agent.name} over MCP on stdio.")
        # Tool calls run on another thread with their own connection; free this one.
        connections.close_all()
        serve_stdio(raw)
