"""Import a Portable AI Memory (PAM v1.0) memory store into an agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from stores.interchange import pam
from stores.interchange.commands import ImportCommand, target_agent


class Command(ImportCommand):
    help = (
        "Import a PAM memory store (a memory-store.json, or a bundle directory holding one) "
        "into an agent, created if missing. The whole file is validated with the PAM SDK "
        "first and refused, with nothing written, when any memory fails a check. Memories "
        "are matched by id: importing the same file again writes nothing."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("source", type=Path, help="memory-store.json or a PAM bundle.")
        parser.add_argument("--agent", required=True, help="Agent name (slug).")
        self.add_import_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        source: Path = options["source"]
        path = source / "memory-store.json" if source.is_dir() else source
        if not path.is_file():
            raise CommandError(f"{path}: no such file.")
        agent = target_agent(options["agent"], dry_run=options["dry_run"])
        try:
            outcome = pam.import_memory_store(
                agent=agent,
                document=pam.read_document(path),
                actor=self.actor(options),
                dry_run=options["dry_run"],
            )
        except pam.Refused as error:
            raise CommandError(f"{path.name} refused, nothing imported: {error}") from None
        for note in outcome.notes:
            self.stdout.write(note)
        self.finish(agent, outcome.report, options)
