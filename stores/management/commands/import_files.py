"""Import a memory directory (the files of Claude's memory tool) as an agent's memory files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from stores.interchange import memory_files
from stores.interchange.commands import ImportCommand, target_agent
from stores.management.progress import console_for, progress_bar
from stores.services.importing import import_records


class Command(ImportCommand):
    help = (
        "Import every file below DIRECTORY as the memory file /memories/<its path> of an "
        "agent (created if missing). Files come in byte for byte (UTF-8 text; another "
        "encoding is refused and named); symbolic links are never followed. Running it again "
        "changes only what changed."
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
        total = memory_files.count_files(root)
        with progress_bar(console_for(self.stderr), "importing files", total=total) as bar:
            report = import_records(
                agent=agent,
                items=memory_files.read_directory(root, on_file=bar.advance),
                actor=self.actor(options),
                dry_run=options["dry_run"],
            )
        self.finish(agent, report, options)
