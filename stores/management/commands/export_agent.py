"""Export one agent in memoryadmin's own lossless JSON Lines format."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand
from rich.table import Table

from stores.interchange import native
from stores.management.agents import find_agent
from stores.management.progress import console_for, progress_bar
from stores.runtime.files import atomic_output
from stores.services.exports import NATIVE, note_export


class Command(BaseCommand):
    help = (
        "Write every surface of an agent (records with all fields and versions, subjects; "
        "optionally vectors and revisions) as JSON Lines. --out names a file, or a directory "
        "(existing, or ending in /, then created) to write AGENT.jsonl into."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("agent")
        # A string, not a Path: Path("backups/") drops the slash that says "a directory".
        parser.add_argument("--out", required=True)
        parser.add_argument("--with-vectors", action="store_true")
        parser.add_argument("--with-revisions", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        agent = find_agent(options["agent"])
        named = str(options["out"])
        out = Path(named)
        if out.is_dir() or named.endswith(("/", os.sep)):
            # A directory that does not exist yet is made (atomic_output makes the parents).
            out = out / f"{agent.name}.jsonl"
        total = native.count_records(agent)
        with (
            progress_bar(console_for(self.stderr), "exporting records", total=total) as bar,
            atomic_output(out) as output,
        ):
            counts = native.write_agent(
                agent,
                output,
                with_vectors=options["with_vectors"],
                with_revisions=options["with_revisions"],
                on_record=bar.advance,
            )
        note_export(agent, out, NATIVE)
        table = Table(title=f"Export of {agent.name} to {out}")
        table.add_column("lines")
        table.add_column("count", justify="right")
        for kind, count in counts.items():
            table.add_row(kind, str(count))
        console_for(self.stdout).print(table)
