"""Export an agent's memory files as a directory, each file written atomically."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from stores.interchange import memory_files
from stores.management.transfers import DirectoryExportCommand
from stores.models import Agent, MemoryFile
from stores.services.exports import MEMORY_FILES


class Command(DirectoryExportCommand):
    help = (
        "Write an agent's memory files into DIRECTORY: /memories/projects/heron.md becomes "
        "DIRECTORY/projects/heron.md, byte for byte. Each file is replaced atomically; files "
        "that did not change are not rewritten and other files are left alone. No symbolic "
        "link is followed: a file that cannot be written safely is skipped and named, and the "
        "command exits with status 1."
    )
    export_format = MEMORY_FILES
    progress_label = "exporting files"

    def count(self, agent: Agent) -> int:
        return MemoryFile.objects.filter(agent=agent).count()

    def write(
        self, agent: Agent, root: Path, advance: Callable[[int], None]
    ) -> memory_files.ExportReport:
        return memory_files.write_directory(agent, root, on_file=lambda: advance(1))

    def print_report(
        self, console: Console, agent: Agent, root: Path, report: memory_files.ExportReport
    ) -> None:
        console.print(
            f"Export of {agent.name} to {root}: {report.written} file(s) written, "
            f"{report.unchanged} unchanged, {len(report.problems)} not written.",
            markup=False,
        )
        for problem in report.problems:
            console.print(f"  {problem.path}: {problem.message}", markup=False)
