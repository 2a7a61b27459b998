"""Re-embed stale records (the default) or every record, surface by surface."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from stores.embeddings import get_backend
from stores.management.agents import find_agent
from stores.management.progress import console_for, progress_bar
from stores.selectors.embeddings import embedded_surfaces, embedding_status
from stores.services.embeddings import SWEEP_BATCH_SIZE, reembed_sweep


class Command(BaseCommand):
    help = (
        "Embed records whose vector is missing or stale (--stale, the default), or every "
        "record (--all, e.g. after fixing a backend without renaming its model)."
    )

    def add_arguments(self, parser) -> None:
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument("--stale", action="store_true", help="Only stale records (default).")
        scope.add_argument("--all", action="store_true", help="Every record, fresh or not.")
        parser.add_argument(
            "--surface",
            action="append",
            choices=embedded_surfaces(),
            help="Only this surface (repeatable). Default: every embedded surface.",
        )
        parser.add_argument("--agent", help="Only this agent's records (by name).")
        parser.add_argument("--batch-size", type=int, default=SWEEP_BATCH_SIZE)

    def handle(self, *args, **options) -> None:
        agent = find_agent(options["agent"]) if options["agent"] else None
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1.")
        self.stdout.write(f"Embedding with {get_backend().model_name}.")
        with progress_bar(console_for(self.stderr), "re-embed", unit="records") as bar:
            outcomes = reembed_sweep(
                surfaces=options["surface"],
                agent=agent,
                include_fresh=options["all"],
                batch_size=options["batch_size"],
                progress=bar.report,
            )
        for surface, outcome in outcomes.items():
            self.stdout.write(
                f"{surface}: {outcome.stored} stored, {outcome.skipped_fresh} already fresh, "
                f"{outcome.skipped_changed} changed while embedding (left to their own job)"
            )
        for status in embedding_status(agent=agent):
            if status.surface in outcomes:
                self.stdout.write(
                    f"{status.surface}: {status.fresh}/{status.total} fresh, {status.stale} stale"
                )
