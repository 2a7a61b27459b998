"""Import a Portable AI Memory (PAM v1.0) memory store, or another tool's export, into an agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from stores.interchange import exports, pam
from stores.management.transfers import ImportCommand, target_agent


class Command(ImportCommand):
    help = (
        "Import a PAM memory store (a memory-store.json, or a bundle directory holding one) "
        "into an agent, created if missing; with --from, Claude's or ChatGPT's export folder, "
        "mem0's get_all output, a Letta agent file (.af) or a Letta agent's archival passages "
        "(the list its API answers). The whole file is validated first "
        "(PAM files with the PAM SDK) and refused, with nothing written, when any memory fails "
        "a check. Memories are matched by id: importing the same file again writes nothing."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("source", type=Path, help="The file (or folder) to import.")
        parser.add_argument("--agent", required=True, help="Agent name (slug).")
        parser.add_argument(
            "--from",
            dest="source_format",
            choices=("pam", *exports.SOURCES),
            default="pam",
            help="What the file is (default: a PAM memory store). mem0 memories that name an "
            "agent_id go to the agent of that name.",
        )
        self.add_import_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        source: Path = options["source"]
        if not source.exists():
            raise CommandError(f"{source}: no such file or folder.")
        try:
            converted = self.read(source, options["source_format"])
            if len(converted.stores) > 1:
                # Every agent's store is checked before any is imported: one refusal refuses all.
                for document in converted.stores.values():
                    pam.check(document)
            for agent_name in list(converted.stores):
                self.bring_in(agent_name, converted, options)
        except pam.Refused as error:
            raise CommandError(f"{source.name} refused, nothing imported: {error}") from None

    def read(self, source: Path, source_format: str) -> exports.Converted:
        if source_format != "pam":
            converted = exports.convert(source_format, source)
            # Files alone (a Letta agent file) still go to the named agent.
            converted.stores.setdefault(None, pam.empty_store())
            return converted
        path = source / "memory-store.json" if source.is_dir() else source
        if not path.is_file():
            raise CommandError(f"{path}: no such file.")
        return exports.Converted(stores={None: pam.from_path(path)})

    def bring_in(
        self, agent_name: str | None, converted: exports.Converted, options: dict[str, Any]
    ) -> None:
        """Import one agent's store; the named agent's also takes the export's files."""
        named = agent_name is None
        name = options["agent"] if agent_name is None else agent_name
        agent = target_agent(name, dry_run=options["dry_run"])
        outcome = pam.import_memory_store(
            agent=agent,
            document=converted.stores.pop(agent_name),
            actor=self.actor(options),
            dry_run=options["dry_run"],
            times_stated=converted.times_stated,
            files=converted.files if named else None,
        )
        self.stdout.write(f"Agent {name}:")
        for note in [*(converted.notes if named else []), *outcome.notes]:
            self.stdout.write(note)
        self.finish(agent, outcome.report, options)
