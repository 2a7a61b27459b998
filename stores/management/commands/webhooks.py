"""An agent's webhooks from the shell: list, add, enable, disable, delete, and each one's log.

manage.py webhooks AGENT list
manage.py webhooks AGENT add URL [--events memory.* skill.updated] [--format discord]
manage.py webhooks AGENT log ID
manage.py webhooks AGENT enable ID | disable ID | delete ID
manage.py webhooks AGENT deliver      (send what is due now, in this process)
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from stores.engine.actors import Actor
from stores.engine.results import WriteResult
from stores.management.agents import find_agent
from stores.models import Agent, Webhook
from stores.selectors.webhooks import agent_webhook, agent_webhooks, delivery_log
from stores.services.webhooks import (
    mask_url,
    webhook_create,
    webhook_delete,
    webhook_deliver,
    webhook_set_enabled,
)


class Command(BaseCommand):
    help = "List, add, switch and delete an agent's webhooks, and read their delivery log."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("agent", help="The agent's name.")
        parser.add_argument("--by", default="maintainer", help="Your name, for the log.")
        actions = parser.add_subparsers(dest="action", required=True)
        actions.add_parser("list", help="The agent's webhooks.")
        add = actions.add_parser("add", help="Add a webhook (a standard one's secret is shown).")
        add.add_argument("url")
        add.add_argument("--events", nargs="+", help="Patterns such as memory.* or *.deleted.")
        add.add_argument("--format", choices=Webhook.Format.values, default="standard")
        add.add_argument("--name", default="")
        for name, text in [
            ("enable", "Switch it on again; it resumes where it stopped."),
            ("disable", "Switch it off."),
            ("delete", "Remove it and its log."),
            ("log", "Its latest delivery attempts."),
        ]:
            actions.add_parser(name, help=text).add_argument("id", type=int)
        actions.add_parser("deliver", help="Send every webhook's due changes now.")

    def handle(self, *args: Any, **options: Any) -> None:
        agent = find_agent(options["agent"])
        actor = Actor.maintainer(options["by"])
        action = options["action"]
        if action == "list":
            self._list(agent)
        elif action == "add":
            result = webhook_create(
                actor=actor,
                agent=agent,
                url=options["url"],
                events=options["events"],
                format=options["format"],
                name=options["name"],
            )
            self._done(result)
            if "secret" in result.details:
                self.stdout.write("Signing secret (keep it; it is not shown again):")
                self.stdout.write(result.details["secret"])
        elif action in ("enable", "disable"):
            self._done(
                webhook_set_enabled(
                    actor=actor, agent=agent, webhook_id=options["id"], enabled=action == "enable"
                )
            )
        elif action == "delete":
            self._done(webhook_delete(actor=actor, agent=agent, webhook_id=options["id"]))
        elif action == "log":
            self._log(agent, options["id"])
        else:
            for webhook in agent_webhooks(agent):
                run = webhook_deliver(webhook.pk)
                self.stdout.write(
                    f"{webhook.pk}: {run.delivered} delivered, {run.given_up} given up"
                    + (f", retry at {run.retry_at:%Y-%m-%d %H:%M:%S}" if run.retry_at else "")
                )

    def _done(self, result: WriteResult) -> None:
        if not result.ok:
            raise CommandError(f"{result.status}: {result.message}")
        self.stdout.write(f"{result.status}: webhook {result.id}. {result.message}")

    def _list(self, agent: Agent) -> None:
        webhooks = agent_webhooks(agent)
        if not webhooks:
            self.stdout.write(f"{agent.name} has no webhooks.")
        for webhook in webhooks:
            state = "enabled" if webhook.enabled else f"disabled: {webhook.disabled_reason}"
            self.stdout.write(
                f"{webhook.pk}  {webhook.format:<8}  {mask_url(webhook.url)}  "
                f"{' '.join(webhook.events)}  {state}"
            )

    def _log(self, agent: Agent, webhook_id: int) -> None:
        webhook = agent_webhook(agent, webhook_id)
        if webhook is None:
            raise CommandError(f"No webhook {webhook_id}.")
        for row in delivery_log(webhook, limit=50):
            answer = f"HTTP {row.http_status}" if row.http_status else row.error
            self.stdout.write(
                f"{row.at:%Y-%m-%d %H:%M:%S}  {row.event:<20} revision {row.revision_id}  "
                f"attempt {row.attempt}  {row.outcome:<9}  {row.duration_ms:.0f} ms  {answer}"
            )
