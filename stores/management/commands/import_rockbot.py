"""Import a RockBot agent directory (memory/, working/, skills/, tasks/, rules.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from stores.interchange import rockbot
from stores.interchange.commands import ImportCommand, target_agent
from stores.management.progress import console_for, progress_bar
from stores.services.importing import import_records


class Command(ImportCommand):
    help = (
        "Import a RockBot agent directory into an agent (created if missing). Records keep "
        "their original ids as aliases; running it again changes only what changed."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("directory", type=Path)
        parser.add_argument("--agent", required=True, help="Agent name (slug).")
        self.add_import_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        root: Path = options["directory"]
        if not root.is_dir():
            raise CommandError(f"{root} is not a directory.")
        agent = target_agent(options["agent"], dry_run=options["dry_run"])
        total = rockbot.count_files(root)
        with progress_bar(console_for(self.stderr), "importing files", total=total) as bar:
            report = import_records(
                agent=agent,
                items=rockbot.read_store(root, on_file=bar.advance),
                actor=self.actor(options),
                dry_run=options["dry_run"],
            )
        self.finish(agent, report, options)
