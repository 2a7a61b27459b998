"""Report stale vectors, broken replacement links and version/revision mismatches."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from stores.selectors.integrity import check_integrity


class Command(BaseCommand):
    help = (
        "Check the stores: records whose version disagrees with their revisions and broken "
        "replacement links are problems (exit status 1); stale vectors and unpurged expired "
        "entries are backlog for the periodic passes (reported only)."
    )

    def handle(self, *args, **options) -> None:
        report = check_integrity()
        for status in report.embeddings:
            # Three parts that add up to the total: missing is a part of stale, not beside it.
            self.stdout.write(
                f"{status.surface}: {status.fresh}/{status.total} vectors fresh, "
                f"{status.missing} missing, {status.outdated} outdated (from older text or "
                f"another model) for {status.model_name}"
            )
        for finding in report.backlog:
            if finding.count:
                self.stdout.write(self.style.WARNING(f"backlog: {finding.check}: {finding.count}"))
        for finding in report.problems:
            if finding.count:
                self.stdout.write(self.style.ERROR(f"problem: {finding.check}: {finding.count}"))
                for example in finding.examples:
                    self.stdout.write(f"  {example}")
        problems = sum(finding.count for finding in report.problems)
        if problems:
            raise CommandError(f"{problems} integrity problems found.")
        self.stdout.write(self.style.SUCCESS("No integrity problems."))
