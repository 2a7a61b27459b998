"""Take back everything one conversation wrote to an agent (each record a write of its own)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from stores.engine.actors import Actor
from stores.errors import ApplicationError
from stores.management.agents import find_agent
from stores.services.takeback import conversation_takeback


class Command(BaseCommand):
    help = (
        "Take back every write a conversation made to an agent's records, newest first: what "
        "it created is forgotten (an episodic memory invalidated), what it changed is undone, "
        "later edits by others are kept; a record their writes are in the way of is reported "
        "as a conflict, naming them, and left as it is (--anyway SURFACE:ID takes it back)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--agent", required=True, help="The agent's name.")
        parser.add_argument("--conversation", required=True, help="The conversation's id.")
        parser.add_argument(
            "--dry-run", action="store_true", help="Say what would be taken back; change nothing."
        )
        parser.add_argument("--by", default="maintainer", help="Your name, for the revisions.")
        parser.add_argument(
            "--anyway",
            action="append",
            default=[],
            metavar="SURFACE:ID",
            help="Take this record back even over later writes of others (repeatable), e.g. "
            "memory:12: one the take-back reported as a conflict.",
        )

    def handle(self, *args, **options) -> None:
        agent = find_agent(options["agent"])
        try:
            answer = conversation_takeback(
                agent=agent,
                actor=Actor.maintainer(options["by"]),
                conversation=options["conversation"],
                dry_run=options["dry_run"],
                anyway=options["anyway"],
            )
        except ApplicationError as error:
            raise CommandError(f"{error.status}: {error.message}") from None
        for result in answer.results:
            line = f"{result.status:<12} {result.op:<10} {result.surface} {result.id}"
            if result.revision is not None:
                line += f" (revision {result.revision})"
            self.stdout.write(f"{line}: {result.why}")
        verb = "would be taken back" if answer.dry_run else "taken back"
        summary = f"{answer.status}: {_records(answer.count)} {verb}"
        refused = sum(1 for result in answer.results if result.refused)
        if refused:
            summary += f"; {_records(refused)} left as it was (see above)"
        self.stdout.write(summary + (". Nothing changed." if answer.dry_run else "."))
        if refused:
            raise CommandError(f"{_records(refused)} could not be taken back.")


def _records(count: int) -> str:
    return f"{count} record{'' if count == 1 else 's'}"
