"""Export an agent as a RockBot directory, every file written atomically."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from stores.interchange import rockbot
from stores.interchange.console import tally_table
from stores.management.transfers import DirectoryExportCommand
from stores.models import Agent
from stores.services.exports import ROCKBOT


class Command(DirectoryExportCommand):
    help = (
        "Write an agent into a RockBot directory (memory/{category}/{id}.json, "
        "working/{namespace}.json, skills/{name}.json, tasks/{name}.json, rules.md). Each "
        "file is replaced atomically; files that did not change are not rewritten. No path "
        "outside the directory is written and no symbolic link in it is followed: a file that "
        "cannot be written safely is skipped and named, and the command exits with status 1."
    )
    export_format = ROCKBOT
    progress_label = "exporting records"
    not_done = "not written (or not removed)"

    def count(self, agent: Agent) -> int:
        return rockbot.count_records(agent)

    def write(
        self, agent: Agent, root: Path, advance: Callable[[int], None]
    ) -> rockbot.ExportReport:
        return rockbot.write_store(agent, root, on_record=advance)

    def print_report(
        self, console: Console, agent: Agent, root: Path, report: rockbot.ExportReport
    ) -> None:
        table = tally_table(
            f"Export of {agent.name} to {root}",
            ("files written", "unchanged", "removed", "skipped"),
            (
                (surface_key, (tally.written, tally.unchanged, tally.removed, tally.skipped))
                for surface_key, tally in report.tallies.items()
            ),
        )
        console.print(table)
        for heading, entries in (
            ("Written elsewhere", report.notes),
            ("Not written", report.problems),
        ):
            if entries:
                console.print(f"{heading}:")
            for entry in entries:
                console.print(f"  {entry.path}: {entry.message}", markup=False)
