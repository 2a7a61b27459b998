"""Run one importance-decay pass now (the scheduled pass does the same)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from stores.management.progress import console_for, progress_bar
from stores.services.decay import decay_importance, decay_plan


class Command(BaseCommand):
    help = "Lower memory importance by the configured half-life since each memory last decayed."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="Count, change nothing.")
        parser.add_argument("--half-life", type=float, help="Days (default: from settings).")
        parser.add_argument("--batch-size", type=int, help="Rows per id range.")
        parser.add_argument("--by", default="maintainer", help="Your name, for the pass log.")

    def handle(self, *args, **options) -> None:
        half_life = options["half_life"]
        if half_life is not None and half_life <= 0:
            raise CommandError("--half-life must be a positive number of days.")
        if options["dry_run"]:
            plan = decay_plan(half_life_days=half_life)
            self.stdout.write(
                f"Would lower {plan.rows_to_lower} memories (half-life {plan.half_life_days:g} "
                f"days) and move the anchor of {plan.pinned_rows} pinned ones. Nothing changed."
            )
            return
        with progress_bar(console_for(self.stderr), "decay", unit="ids") as bar:
            run = decay_importance(
                half_life_days=half_life,
                batch_size=options["batch_size"],
                triggered_by=f"shell:{options['by']}",
                progress=bar.report,
            )
        self.stdout.write(
            f"Decay pass {run.pk}: {run.rows_touched} memories in {run.batches} batches, "
            f"{run.duration_seconds:.2f}s, half-life {run.half_life_days:g} days "
            f"(x{run.daily_factor:.4f} a day)."
        )
