"""What the import and export management commands share: agents, actors, summaries, embedding."""

from __future__ import annotations

from argparse import ArgumentParser
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar, Protocol

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console

from stores.engine.actors import Actor
from stores.errors import ApplicationError
from stores.interchange.console import print_import_report
from stores.management.agents import find_agent
from stores.management.progress import console_for, progress_bar
from stores.models import Agent
from stores.selectors.embeddings import embedded_surfaces, stale_records
from stores.services.agents import agent_get_or_create
from stores.services.embeddings import reembed_sweep
from stores.services.exports import ExportedFile, note_exported_files
from stores.services.importing.entries import ImportReport
from stores.services.importing.run import import_records


def target_agent(name: str, *, dry_run: bool, **defaults: Any) -> Agent:
    """The agent to import into, created if missing (a dry run only pretends to create it)."""
    agent = Agent.objects.filter(name=name).first()
    if agent is not None:
        return agent
    if dry_run:
        return Agent(name=name, **defaults)
    try:
        agent, _ = agent_get_or_create(name=name, **defaults)
    except ApplicationError as error:
        raise CommandError(error.message) from None
    return agent


class ImportCommand(BaseCommand):
    """An import: --dry-run, --embed, --actor; a summary table; exit 1 when anything failed."""

    def add_import_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Read and compare everything, report what would be created, changed and left "
            "alone, and write nothing.",
        )
        parser.add_argument(
            "--embed",
            action="store_true",
            help="Embed the imported records now, in batches (otherwise the re-embedding "
            "sweep does it; until then they are stale and recall falls back to text).",
        )
        parser.add_argument(
            "--actor", default="import", help="Name recorded on the revisions (shell:NAME)."
        )
        parser.add_argument(
            "--verbose-changes",
            action="store_true",
            help="List every changed record, not only in a dry run.",
        )

    def actor(self, options: dict[str, Any]) -> Actor:
        return Actor.maintainer(options["actor"])

    def finish(self, agent: Agent, report: ImportReport, options: dict[str, Any]) -> None:
        console = console_for(self.stdout)
        if options["embed"] and agent.pk is not None and not report.dry_run:
            self.embed(agent)
        print_import_report(console, report, verbose=options["verbose_changes"])
        if report.problems and report.dry_run:
            raise CommandError(
                f"{len(report.problems)} file(s) or entries could not be read; an import would "
                "skip them and bring in the rest."
            )
        if report.problems:
            raise CommandError(
                f"{len(report.problems)} file(s) or entries were not imported; everything "
                "else was. Fix them and run the import again: it is idempotent."
            )

    def embed(self, agent: Agent) -> None:
        console = console_for(self.stderr)
        for surface_key in embedded_surfaces():
            if not stale_records(surface_key, agent=agent).exists():
                continue
            with progress_bar(console, "embedding") as bar:
                reembed_sweep(surfaces=[surface_key], agent=agent, progress=bar.report)


class DirectoryImportCommand(ImportCommand):
    """An import of one directory into an agent: its format says how to count and read it."""

    count_files: ClassVar[Callable[[Path], int]]
    read_files: ClassVar[Callable[..., Iterable[Any]]]

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("directory", type=Path)
        parser.add_argument("--agent", required=True, help="Agent name (slug).")
        self.add_import_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        root: Path = options["directory"]
        if not root.is_dir():
            raise CommandError(f"{root} is not a directory.")
        agent = target_agent(options["agent"], dry_run=options["dry_run"])
        total = self.count_files(root)
        with progress_bar(console_for(self.stderr), "importing files", total=total) as bar:
            report = import_records(
                agent=agent,
                items=self.read_files(root, on_file=bar.advance),
                actor=self.actor(options),
                dry_run=options["dry_run"],
            )
        self.finish(agent, report, options)


class WriteReport(Protocol):
    @property
    def problems(self) -> list[Any]: ...

    @property
    def files(self) -> list[ExportedFile]: ...


class DirectoryExportCommand(BaseCommand):
    """An export of an agent into a directory, each file replaced atomically: its format says
    how to count, write and report; a file that could not be written makes the exit status 1."""

    progress_label: ClassVar[str]
    # The name an erasure knows the files by (stores.services.exports).
    export_format: ClassVar[str]
    # How the refusal words what was not done, after "N file(s) were".
    not_done: ClassVar[str] = "not written"

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("agent")
        parser.add_argument("directory", type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        agent = find_agent(options["agent"])
        root: Path = options["directory"]
        total = self.count(agent)
        with progress_bar(console_for(self.stderr), self.progress_label, total=total) as bar:
            report = self.write(agent, root, bar.advance)
        note_exported_files(agent, root, self.export_format, report.files)
        self.print_report(console_for(self.stdout), agent, root, report)
        if report.problems:
            raise CommandError(
                f"{len(report.problems)} file(s) were {self.not_done}; everything else was. "
                "Fix what is named above and run the export again."
            )

    def count(self, agent: Agent) -> int:
        raise NotImplementedError

    def write(self, agent: Agent, root: Path, advance: Callable[[int], None]) -> WriteReport:
        """Write the directory, calling `advance` with how far each file or record moves
        the progress bar."""
        raise NotImplementedError

    def print_report(self, console: Console, agent: Agent, root: Path, report: Any) -> None:
        raise NotImplementedError
