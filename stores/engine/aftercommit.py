"""The work a committed write leaves: its record's text to re-embed, its agent's webhooks to tell.

The engine says *that* the work is due once the transaction commits; the background layer
(stores.tasks, connected when the app is ready) says *how*: a thread, a Celery task, or at once.
"""

from __future__ import annotations

from django.db import transaction

from stores.models import (
    Agent,
)
from stores.runtime.handoff import Handoff

# Re-embedding a record's new text, after the commit that wrote it: how (a thread of this
# process, a Celery task) is the background layer's, stores.tasks.
reembed_record: Handoff[[str, int]] = Handoff("re-embed a record")


def schedule_reembed(surface: str, record_id: int) -> None:
    """After commit, ask the background worker to re-embed the record's text."""
    transaction.on_commit(lambda: reembed_record(surface, record_id), robust=True)


AGENT_ATTRIBUTE = "webhooks_of_agent"
# Delivering an agent's new changes, after the commit that made them: how (a thread of this
# process, a Celery task) is the background layer's, stores.tasks.
deliver_agent_changes: Handoff[[int]] = Handoff("deliver an agent's changes to its webhooks")
# Set on an agent loaded with its token (token_authenticate): whether it had an enabled
# webhook when the request began.
HAS_ENABLED_WEBHOOKS = "has_enabled_webhooks"


def after_commit(agent_id: int, *, agent: Agent | None = None) -> None:
    """Once the current transaction commits, send the agent's new changes to its webhooks.

    One callback per agent and transaction, however many revisions it writes. An `agent`
    that had no enabled webhook as its request began (read with its token) sends nothing:
    most agents have none, and the commit spares looking them up. A webhook created or
    enabled since then starts from a cursor behind this write, so the sweep delivers it.
    """
    if agent is not None and getattr(agent, HAS_ENABLED_WEBHOOKS, True) is False:
        return
    connection = transaction.get_connection()
    if connection.in_atomic_block and any(
        getattr(callback, AGENT_ATTRIBUTE, None) == agent_id
        for _savepoints, callback, _robust in connection.run_on_commit
    ):
        return

    def send() -> None:
        deliver_agent_changes(agent_id)

    setattr(send, AGENT_ATTRIBUTE, agent_id)
    transaction.on_commit(send, robust=True)
