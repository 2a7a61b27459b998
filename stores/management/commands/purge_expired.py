"""Purge working-memory entries past their expiry (each leaves a revision in history)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from stores.engine.actors import Actor
from stores.management.progress import console_for, progress_bar
from stores.selectors.working import expired_entries
from stores.services.expiry import working_purge_expired


class Command(BaseCommand):
    help = "Delete expired working-memory entries; their last value stays in history."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="Count, change nothing.")
        parser.add_argument("--by", default="maintainer", help="Your name, for the revisions.")

    def handle(self, *args, **options) -> None:
        if options["dry_run"]:
            self.stdout.write(f"{expired_entries().count()} entries have expired. Nothing changed.")
            return
        with progress_bar(console_for(self.stderr), "purge", unit="entries") as bar:
            outcome = working_purge_expired(
                actor=Actor.maintainer(options["by"]), progress=bar.report
            )
        self.stdout.write(f"Purged {outcome.purged} expired entries in {outcome.batches} batches.")
