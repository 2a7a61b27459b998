"""Import an agent from memoryadmin's JSON Lines export (a file, or every .jsonl in a folder)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from stores.engine.actors import Actor
from stores.interchange import native
from stores.management.progress import console_for, progress_bar
from stores.management.transfers import ImportCommand, target_agent
from stores.models import Subject
from stores.services.agents import subject_create
from stores.services.importing.entries import ImportReport, Problem
from stores.services.importing.run import import_records


class Command(ImportCommand):
    help = (
        "Import an export_agent file into its agent (or --agent NAME), created if missing. "
        "Records are matched by ref: re-importing changes only what changed."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("source", type=Path, help="A .jsonl file or a folder of them.")
        parser.add_argument("--agent", help="Import into this agent instead of the header's.")
        self.add_import_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        source: Path = options["source"]
        files, links = [source], []
        if source.is_dir():
            # A file named on the command line is read as named; a folder's links are not
            # followed (they could bring in any file this process can read).
            found = sorted(source.glob("*.jsonl"))
            files = [path for path in found if not path.is_symlink()]
            links = [
                Problem(path.name, "is a symbolic link (links are not followed).")
                for path in found
                if path.is_symlink()
            ]
        if not files or not all(path.is_file() for path in files):
            skipped = f" ({len(links)} linked file(s) skipped)" if links else ""
            raise CommandError(f"{source}: no export file (.jsonl) there{skipped}.")
        if options["agent"] and len(files) > 1:
            raise CommandError("--agent applies to one file; name the file, not the folder.")
        failures: list[str] = []
        for path in files:
            try:
                header = native.read_header(path)
            except native.FormatError as error:
                failures.append(str(error))  # it names the file
                continue
            settings = {k: v for k, v in header["agent"].items() if k != "name"}
            name = options["agent"] or header["agent"]["name"]
            agent = target_agent(name, dry_run=options["dry_run"], **settings)
            report = ImportReport(problems=links)
            links = []
            subjects = self.subjects(
                agent, path, report, actor=self.actor(options), dry_run=options["dry_run"]
            )
            total = native.count_lines(path)
            with progress_bar(
                console_for(self.stderr), f"importing {path.name}", total=total
            ) as bar:
                report = import_records(
                    agent=agent,
                    items=native.read_records(path, subjects=subjects, on_line=bar.advance),
                    actor=self.actor(options),
                    dry_run=options["dry_run"],
                    report=report,
                )
            try:
                self.finish(agent, report, options)
            except CommandError as error:
                # The other files of the folder are still imported.
                failures.append(f"{path.name}: {error}")
        if failures:
            raise CommandError(" ".join(failures))

    def subjects(
        self, agent, path: Path, report: ImportReport, *, actor: Actor, dry_run: bool
    ) -> dict[str, Subject]:
        """Subjects by external id; missing ones are created (existing ones are left alone)."""
        known = {} if agent.pk is None else {s.external_id: s for s in agent.subjects.all()}
        for line in native.read_subjects(path):
            if not isinstance(line, dict):
                report.problems.append(line)
                continue
            if line["external_id"] in known:
                report.tally("subject").unchanged += 1
                continue
            report.tally("subject").created += 1
            if dry_run:
                known[line["external_id"]] = Subject(agent=agent, **line)
                continue
            result = subject_create(actor=actor, agent=agent, **line)
            if result.ok:
                known[line["external_id"]] = result.record
            else:
                report.tally("subject").created -= 1
                report.problem(
                    f"{path.name} subject {line['external_id']!r}", result.message, "subject"
                )
        return known
