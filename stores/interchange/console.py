"""Summary tables for the import and export commands (rich, like their progress bars)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.table import Table

from stores.services.importing.entries import ImportReport


def tally_table(
    title: str, columns: Iterable[str], rows: Iterable[tuple[str, Iterable[int]]]
) -> Table:
    """A row of counts per surface, one right-aligned column per count."""
    table = Table(title=title)
    table.add_column("surface")
    for column in columns:
        table.add_column(column, justify="right")
    for surface_key, counts in rows:
        table.add_row(surface_key, *(str(count) for count in counts))
    return table


def import_table(report: ImportReport) -> Table:
    verb = "would be " if report.dry_run else ""
    return tally_table(
        "Import (dry run: nothing written)" if report.dry_run else "Import",
        (f"{verb}created", f"{verb}changed", "left alone", "failed"),
        (
            (surface_key, (tally.created, tally.changed, tally.unchanged, tally.failed))
            for surface_key, tally in report.tallies.items()
        ),
    )


def print_import_report(console: Console, report: ImportReport, *, verbose: bool) -> None:
    console.print(import_table(report))
    if report.changes and (verbose or report.dry_run):
        heading = "Would change" if report.dry_run else "Changed"
        console.print(f"{heading}:")
        for note in report.changes:
            console.print(f"  {note.surface} {note.ref}: {', '.join(note.fields)}", markup=False)
            for what in note.what:
                console.print(f"    {what}", markup=False)
    if report.dry_run and verbose:
        for surface_key, refs in report.created_refs.items():
            for ref in refs:
                console.print(f"  would create {surface_key} {ref}", markup=False)
    if report.problems:
        console.print(f"{len(report.problems)} problem(s); these were not imported:")
        for problem in report.problems:
            console.print(f"  {problem.path}: {problem.message}", markup=False)
