"""Summary tables for the import and export commands (rich, like their progress bars)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from stores.services.importing import ImportReport


def import_table(report: ImportReport) -> Table:
    verb = "would be " if report.dry_run else ""
    table = Table(title="Import (dry run: nothing written)" if report.dry_run else "Import")
    table.add_column("surface")
    for column in (f"{verb}created", f"{verb}changed", "left alone", "failed"):
        table.add_column(column, justify="right")
    for surface_key, tally in report.tallies.items():
        table.add_row(
            surface_key,
            str(tally.created),
            str(tally.changed),
            str(tally.unchanged),
            str(tally.failed),
        )
    return table


def print_import_report(console: Console, report: ImportReport, *, verbose: bool) -> None:
    console.print(import_table(report))
    if report.changes and (verbose or report.dry_run):
        heading = "Would change" if report.dry_run else "Changed"
        console.print(f"{heading}:")
        for note in report.changes:
            console.print(f"  {note.surface} {note.ref}: {', '.join(note.fields)}", markup=False)
    if report.dry_run and verbose:
        for surface_key, refs in report.created_refs.items():
            for ref in refs:
                console.print(f"  would create {surface_key} {ref}", markup=False)
    if report.problems:
        console.print(f"{len(report.problems)} problem(s); these were not imported:")
        for problem in report.problems:
            console.print(f"  {problem.path}: {problem.message}", markup=False)
