"""Export an agent as a RockBot directory, every file written atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from rich.table import Table

from stores.interchange import rockbot
from stores.interchange.commands import find_agent
from stores.management.progress import console_for, progress_bar


class Command(BaseCommand):
    help = (
        "Write an agent into a RockBot directory (memory/{category}/{id}.json, "
        "working/{namespace}.json, skills/{name}.json, tasks/{name}.json, rules.md). Each "
        "file is replaced atomically; files that did not change are not rewritten. No path "
        "outside the directory is written and no symbolic link in it is followed: a file that "
        "cannot be written safely is skipped and named, and the command exits with status 1."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("agent")
        parser.add_argument("directory", type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        agent = find_agent(options["agent"])
        root: Path = options["directory"]
        total = rockbot.count_records(agent)
        with progress_bar(console_for(self.stderr), "exporting records", total=total) as bar:
            report = rockbot.write_store(agent, root, on_record=bar.advance)
        table = Table(title=f"Export of {agent.name} to {root}")
        table.add_column("surface")
        for column in ("files written", "unchanged", "removed", "skipped"):
            table.add_column(column, justify="right")
        for surface_key, tally in report.tallies.items():
            table.add_row(
                surface_key,
                str(tally.written),
                str(tally.unchanged),
                str(tally.removed),
                str(tally.skipped),
            )
        console = console_for(self.stdout)
        console.print(table)
        for heading, entries in (
            ("Written elsewhere", report.notes),
            ("Not written", report.problems),
        ):
            if entries:
                console.print(f"{heading}:")
            for entry in entries:
                console.print(f"  {entry.path}: {entry.message}", markup=False)
        if report.problems:
            raise CommandError(
                f"{len(report.problems)} file(s) were not written (or not removed); everything "
                "else was. Fix what is named above and run the export again."
            )
