"""Export an agent's memory files as a directory, each file written atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from stores.interchange import memory_files
from stores.interchange.commands import find_agent
from stores.management.progress import console_for, progress_bar
from stores.models import MemoryFile


class Command(BaseCommand):
    help = (
        "Write an agent's memory files into DIRECTORY: /memories/projects/heron.md becomes "
        "DIRECTORY/projects/heron.md, byte for byte. Each file is replaced atomically; files "
        "that did not change are not rewritten and other files are left alone. No symbolic "
        "link is followed: a file that cannot be written safely is skipped and named, and the "
        "command exits with status 1."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("agent")
        parser.add_argument("directory", type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        agent = find_agent(options["agent"])
        root: Path = options["directory"]
        total = MemoryFile.objects.filter(agent=agent).count()
        with progress_bar(console_for(self.stderr), "exporting files", total=total) as bar:
            report = memory_files.write_directory(agent, root, on_file=bar.advance)
        console = console_for(self.stdout)
        console.print(
            f"Export of {agent.name} to {root}: {report.written} file(s) written, "
            f"{report.unchanged} unchanged, {len(report.problems)} not written.",
            markup=False,
        )
        for problem in report.problems:
            console.print(f"  {problem.path}: {problem.message}", markup=False)
        if report.problems:
            raise CommandError(
                f"{len(report.problems)} file(s) were not written; everything else was. Fix "
                "what is named above and run the export again."
            )
