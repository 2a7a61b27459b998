"""Export an agent's long-term memories as a Portable AI Memory (PAM v1.0) memory store."""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any, cast

from django.core.management.base import BaseCommand, CommandError

from stores.interchange import pam
from stores.management.agents import find_agent
from stores.management.progress import console_for, progress_bar
from stores.models import Memory
from stores.runtime.files import atomic_output
from stores.services.exports import PAM, PAM_VECTORS, note_export


class Command(BaseCommand):
    help = (
        "Write an agent's long-term memories as a PAM memory store (memory-store.json): "
        "ids kept (the alias, else the id here), content hashes and the integrity block "
        "computed as the PAM SDK validates them."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--agent", required=True, help="Agent name.")
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--out", type=Path, help="The memory store file to write.")
        target.add_argument(
            "--bundle",
            type=Path,
            help="A PAM bundle directory: DIR/memory-store.json and DIR/embeddings.json (the "
            "memories' vectors, naming the model).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        agent = find_agent(options["agent"])
        out: Path = options["out"] or options["bundle"] / "memory-store.json"
        if out.is_dir():
            raise CommandError(f"{out} is a directory; --out names the file to write.")
        total = Memory.objects.filter(agent=agent).count()
        with (
            progress_bar(
                console_for(cast(IO[str], self.stderr)), "exporting memories", total=total
            ) as bar,
            atomic_output(out) as output,
        ):
            counts = pam.write_memory_store(agent, output, on_memories=bar.advance)
        note_export(agent, out, PAM)
        self.stdout.write(
            f"Wrote {out}: {counts.memories} memories, {counts.relations} relations, "
            f"{counts.conversations} conversations in the index."
        )
        if options["bundle"]:
            vectors = options["bundle"] / "embeddings.json"
            with atomic_output(vectors) as output:
                written = pam.write_embeddings(agent, output)
            note_export(agent, vectors, PAM_VECTORS)
            self.stdout.write(f"Wrote {vectors}: {written} embeddings.")
