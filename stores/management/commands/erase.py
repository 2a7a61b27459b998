"""Erase text, a record, a subject's records or all of an agent's, and print the signed receipt;
or check a receipt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from stores.engine.actors import Actor
from stores.errors import ApplicationError
from stores.management.agents import find_agent
from stores.services.erasing import Scope, erase
from stores.services.receipts import verify


class Command(BaseCommand):
    help = (
        "Erase text (--text), a record (--record surface:id), a subject's memories and the "
        "subject (--subject, its external id) or all of an agent's records (--all): from the "
        "live records, every revision, the feed, webhooks not yet sent, suggestions, idempotency "
        "bodies, search indexes and the database file. Prints the signed receipt (JSON). "
        "--dry-run reports the same counts and changes nothing. --verify RECEIPT checks one."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--agent", help="The agent's name.")
        what = parser.add_mutually_exclusive_group()
        what.add_argument("--text", help="Exact text to erase wherever it occurs.")
        what.add_argument("--record", help="A record as surface:id, e.g. memory:42.")
        what.add_argument("--subject", help="A subject's external id.")
        what.add_argument("--all", action="store_true", help="Every record of the agent.")
        what.add_argument("--verify", metavar="RECEIPT", help="Check a receipt file (JSON).")
        parser.add_argument("--dry-run", action="store_true", help="Count; change nothing.")
        parser.add_argument("--reason", default="", help="Why; kept in the receipt and audit log.")
        parser.add_argument("--out", help="Also write the receipt to this file.")
        parser.add_argument("--by", default="maintainer", help="Your name, for the revisions.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["verify"]:
            self._verify(Path(options["verify"]))
            return
        if not options["agent"]:
            raise CommandError("Name the agent: --agent NAME.")
        agent = find_agent(options["agent"])
        try:
            scope = Scope(
                text=options["text"],
                record=Scope.parse_record(options["record"]) if options["record"] else None,
                subject=options["subject"],
                everything=options["all"],
            )
            receipt = erase(
                agent=agent,
                actor=Actor.maintainer(options["by"]),
                scope=scope,
                reason=options["reason"],
                dry_run=options["dry_run"],
            )
        except ApplicationError as error:
            raise CommandError(f"{error.status}: {error.message}") from None
        text = json.dumps(receipt, indent=2, sort_keys=True)
        if options["out"]:
            Path(options["out"]).write_text(text + "\n", encoding="utf-8")
        self.stdout.write(text)

    def _verify(self, path: Path) -> None:
        try:
            receipt = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise CommandError(f"Cannot read {path} as JSON: {error}") from None
        try:
            body = verify(receipt)
        except ApplicationError as error:
            raise CommandError(f"{error.status}: {error.message}") from None
        self.stdout.write(
            f"ok: receipt {body['id']} of agent {body['agent']}, issued by this installation "
            f"at {body['finished_at']}, is unchanged."
        )
